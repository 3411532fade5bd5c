package kernelclient

import (
	"testing"
	"time"
)

// TestEventQueueBoundedWithoutReader: socket readers push events whether or not anyone
// reads Events. Pushing never blocks, memory stays bounded (oldest dropped), and a reader
// that comes late still gets the newest events, in order.
func TestEventQueueBoundedWithoutReader(t *testing.T) {
	e := newEventQueue()
	defer e.close()
	const n = 3 * maxQueuedEvents
	for i := range n {
		e.push(Event{Kind: EventStatus, ExecutionCount: i}) // would deadlock here if it blocked
	}
	e.mu.Lock()
	queued := len(e.q)
	e.mu.Unlock()
	if queued > maxQueuedEvents {
		t.Fatalf("%d events queued, want at most %d", queued, maxQueuedEvents)
	}
	deadline := time.NewTimer(10 * time.Second)
	defer deadline.Stop()
	last, got := -1, 0
	for last != n-1 {
		select {
		case ev := <-e.out:
			if ev.ExecutionCount <= last {
				t.Fatalf("event %d after %d: out of order", ev.ExecutionCount, last)
			}
			last = ev.ExecutionCount
			got++
		case <-deadline.C:
			t.Fatalf("newest event never delivered (last %d after %d events)", last, got)
		}
	}
	// The pump may hold one event taken before the queue overflowed.
	if got > maxQueuedEvents+1 {
		t.Errorf("delivered %d events, want at most %d", got, maxQueuedEvents+1)
	}
}
