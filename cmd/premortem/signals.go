package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// stoppedBy is the cause of a check cut short by a signal, or by its output's reader going
// away (SIGPIPE).
type stoppedBy struct{ sig syscall.Signal }

func (s *stoppedBy) Error() string {
	switch s.sig {
	case syscall.SIGPIPE:
		return "output closed (SIGPIPE)"
	case syscall.SIGINT:
		return "interrupted (SIGINT)"
	case syscall.SIGTERM:
		return "terminated (SIGTERM)"
	case syscall.SIGHUP:
		return "hung up (SIGHUP)"
	}
	return fmt.Sprintf("stopped by signal %d", int(s.sig))
}

// exitCode is the shell's status of a process killed by the signal: 128 + its number.
func (s *stoppedBy) exitCode() int { return 128 + int(s.sig) }

// stopOnSignals cancels a check when SIGINT, SIGTERM (`timeout`, CI runners) or SIGHUP
// arrives, or when stdout or stderr is a pipe whose reader has gone (`| head`), so that
// the check kills its kernel and exits instead of dying with the kernel left running.
// A second signal exits at once (the kernel's death signal and reaper still take it
// down). It returns the function that stops watching.
func stopOnSignals(cancel context.CancelCauseFunc, stdout, stderr io.Writer) (stop func()) {
	var outs []*os.File
	for _, w := range []io.Writer{stdout, stderr} {
		if f, ok := w.(*os.File); ok {
			outs = append(outs, f)
		}
	}
	// SIGPIPE is asked for too, so that a write to a closed stdout returns EPIPE instead
	// of killing premortem on the spot. It also comes from writes to the sockets of a
	// kernel that died, so it stops the check only when an output is really closed.
	ch := make(chan os.Signal, 4)
	signal.Notify(ch, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGPIPE)
	done := make(chan struct{})
	stopWatch := watchOutputs(outs, func() { cancel(&stoppedBy{syscall.SIGPIPE}) })
	go func() {
		stopped := false
		for {
			select {
			case <-done:
				return
			case s := <-ch:
				sig, _ := s.(syscall.Signal)
				if sig == syscall.SIGPIPE && !outputClosed(outs) {
					continue
				}
				if stopped && sig != syscall.SIGPIPE {
					os.Exit((&stoppedBy{sig}).exitCode())
				}
				stopped = true
				cancel(&stoppedBy{sig})
			}
		}
	}()
	return func() {
		signal.Stop(ch)
		stopWatch()
		close(done)
	}
}
