package llm

import "context"

// Limiter bounds the number of requests in flight. Acquire waits for a slot or for ctx;
// every successful Acquire must be paired with one Release.
type Limiter struct{ slots chan struct{} }

// NewLimiter returns a limiter with n slots (at least 1).
func NewLimiter(n int) *Limiter {
	return &Limiter{slots: make(chan struct{}, max(n, 1))}
}

// Acquire takes a slot, or returns ctx's error if ctx ends first.
func (l *Limiter) Acquire(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	select {
	case l.slots <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// TryAcquire takes a slot if one is free now.
func (l *Limiter) TryAcquire() bool {
	select {
	case l.slots <- struct{}{}:
		return true
	default:
		return false
	}
}

// Release returns a slot.
func (l *Limiter) Release() { <-l.slots }

// InFlight is the number of slots taken.
func (l *Limiter) InFlight() int { return len(l.slots) }
