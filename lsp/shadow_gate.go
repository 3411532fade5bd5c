package lsp

import (
	"context"
	"sync"
)

// shadowGate orders the shadow runs on one kernel. The inspector keeps one shadow child
// per kernel and a new run kills the running one, so without the gate the scheduler's
// automatic run of the focus cell, started while the user's explicit run (the shadowRun
// command) was collecting its result, killed the explicit child. The rules:
//   - an explicit run takes precedence: it cancels a running automatic run and waits for
//     it to end (its child is killed and collected) before starting;
//   - an automatic run does not start while an explicit one is in progress (it skips; the
//     next pass runs it), and waits for an earlier automatic one to end;
//   - a newer explicit run cancels an older one (the inspector kills the older child), and
//     the older one's answer says so (newerThan).
type shadowGate struct {
	mu sync.Mutex
	// explicit is the number of explicit runs in progress; explicitSeq counts those begun.
	explicit    int
	explicitSeq uint64
	// autoCancel ends the automatic run in progress; autoDone is closed when it has.
	autoCancel context.CancelFunc
	autoDone   chan struct{}
}

// beginAuto returns the context for an automatic run and the function to call when it
// ends, or ok false when an explicit run is in progress (the automatic run skips; the
// explicit run's answer is cached for its cell, and the next pass runs the focus cell).
// An automatic run still winding down (its pass was cancelled) is waited for.
func (g *shadowGate) beginAuto(ctx context.Context) (context.Context, func(), bool) {
	for {
		g.mu.Lock()
		if g.explicit > 0 {
			g.mu.Unlock()
			return nil, nil, false
		}
		if prev := g.autoDone; prev != nil {
			g.mu.Unlock()
			select {
			case <-prev:
				continue
			case <-ctx.Done():
				return nil, nil, false
			}
		}
		actx, cancel := context.WithCancel(ctx)
		done := make(chan struct{})
		g.autoCancel, g.autoDone = cancel, done
		g.mu.Unlock()
		return actx, func() {
			cancel()
			g.mu.Lock()
			if g.autoDone == done {
				g.autoCancel, g.autoDone = nil, nil
			}
			g.mu.Unlock()
			close(done)
		}, true
	}
}

// beginExplicit cancels the automatic run in progress, waits until it has ended, and
// returns the explicit run's sequence number and the function to call when it ends.
func (g *shadowGate) beginExplicit(ctx context.Context) (uint64, func(), error) {
	g.mu.Lock()
	g.explicit++
	g.explicitSeq++
	seq := g.explicitSeq
	cancel, done := g.autoCancel, g.autoDone
	g.mu.Unlock()
	end := func() {
		g.mu.Lock()
		g.explicit--
		g.mu.Unlock()
	}
	if cancel != nil {
		cancel()
		select {
		case <-done:
		case <-ctx.Done():
			end()
			return 0, nil, ctx.Err()
		}
	}
	return seq, end, nil
}

// newerThan reports whether an explicit run began after the one numbered seq.
func (g *shadowGate) newerThan(seq uint64) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.explicitSeq > seq
}
