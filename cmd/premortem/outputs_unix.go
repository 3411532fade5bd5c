//go:build unix

package main

import (
	"os"
	"sync"

	"golang.org/x/sys/unix"
)

// watchOutputs calls onClosed once when one of files is a pipe or socket whose reader has
// gone (poll reports POLLERR or POLLHUP), so a check whose output nobody reads stops
// without waiting for its next write. Terminals, files and /dev/null never report it. It
// returns the function that stops watching.
func watchOutputs(files []*os.File, onClosed func()) (stop func()) {
	if len(files) == 0 {
		return func() {}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		fds := pollFds(files)
		for {
			select {
			case <-done:
				return
			default:
			}
			// A short timeout: the loop also notices done.
			if closedNow(fds, 200) {
				onClosed()
				return
			}
		}
	}()
	return func() {
		close(done)
		wg.Wait()
	}
}

// outputClosed reports whether one of files is a pipe or socket whose reader has gone.
func outputClosed(files []*os.File) bool {
	return closedNow(pollFds(files), 0)
}

func pollFds(files []*os.File) []unix.PollFd {
	fds := make([]unix.PollFd, len(files))
	for i, f := range files {
		// Events 0: only the conditions poll always reports (error, hang-up, invalid).
		fds[i] = unix.PollFd{Fd: -1}
		// Through SyscallConn, not Fd, which would switch the file to blocking mode.
		if rc, err := f.SyscallConn(); err == nil {
			_ = rc.Control(func(fd uintptr) { fds[i].Fd = int32(fd) })
		}
	}
	return fds
}

// closedNow polls fds for up to timeoutMs; an fd that is not open (POLLNVAL) is dropped
// from the watch (its Fd set to -1, which poll ignores).
func closedNow(fds []unix.PollFd, timeoutMs int) bool {
	n, err := unix.Poll(fds, timeoutMs)
	if err != nil || n == 0 {
		return false
	}
	for i := range fds {
		switch {
		case fds[i].Revents&unix.POLLNVAL != 0:
			fds[i].Fd = -1
		case fds[i].Revents&(unix.POLLERR|unix.POLLHUP) != 0:
			return true
		}
	}
	return false
}
