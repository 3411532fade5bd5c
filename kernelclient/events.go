package kernelclient

import "sync"

// maxQueuedEvents bounds the events kept for a slow reader; beyond it the oldest are dropped
// so that a client nobody listens to does not grow without bound.
const maxQueuedEvents = 4096

// eventQueue decouples the socket readers (which must never block) from the consumer of
// Events: an unbounded-but-capped queue pumped into an unbuffered channel.
type eventQueue struct {
	mu      sync.Mutex
	q       []Event
	dropped int
	wake    chan struct{}
	out     chan Event
	done    chan struct{}
	stopped chan struct{}
}

func newEventQueue() *eventQueue {
	e := &eventQueue{
		wake:    make(chan struct{}, 1),
		out:     make(chan Event),
		done:    make(chan struct{}),
		stopped: make(chan struct{}),
	}
	go e.pump()
	return e
}

// push queues ev without blocking.
func (e *eventQueue) push(ev Event) {
	e.mu.Lock()
	if len(e.q) >= maxQueuedEvents {
		e.q = e.q[1:]
		e.dropped++
	}
	e.q = append(e.q, ev)
	e.mu.Unlock()
	select {
	case e.wake <- struct{}{}:
	default:
	}
}

func (e *eventQueue) pump() {
	defer close(e.stopped)
	defer close(e.out)
	for {
		e.mu.Lock()
		var ev Event
		have := len(e.q) > 0
		if have {
			ev = e.q[0]
			e.q = e.q[1:]
		}
		e.mu.Unlock()
		if !have {
			select {
			case <-e.wake:
				continue
			case <-e.done:
				return
			}
		}
		select {
		case e.out <- ev:
		case <-e.done:
			return
		}
	}
}

// close stops the pump and closes the output channel.
func (e *eventQueue) close() {
	select {
	case <-e.done:
	default:
		close(e.done)
	}
	<-e.stopped
}
