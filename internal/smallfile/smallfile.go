// Package smallfile reads the small files premortem is pointed at (connection files,
// kernelspecs, server info, notebooks) so that none can block or flood it: a FIFO, device
// or directory is refused before it is opened, a file past its bound is refused, and an open
// or read that hangs gives up. It is a leaf: kernelclient, notebook readers, judge and the
// reports share it.
package smallfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"time"
)

// openTimeout bounds opening and reading one file: a FIFO is caught before it can block,
// but a hung network or FUSE file system blocks open or read in the kernel.
var openTimeout = 5 * time.Second

// openForRead opens a file Read has looked at; tests replace it to stand in for a
// file system that hangs.
var openForRead = openNonBlocking

// ErrRefused marks a file premortem will not read: not a regular file, or too large.
var ErrRefused = errors.New("refused")

// Read reads a whole regular file of at most max bytes. A FIFO, socket, device or
// directory is refused before it is opened, so it can neither block nor stream forever; a
// file larger than max (or growing past it while read) is refused; an open or read that
// hangs (a dead network mount) gives up after a few seconds. Errors name the file and say
// what it is; callers add what the user should do.
func Read(path string, max int64) ([]byte, error) {
	type result struct {
		data []byte
		err  error
	}
	done := make(chan result, 1)
	go func() {
		data, err := readChecked(path, max)
		done <- result{data, err}
	}()
	t := time.NewTimer(openTimeout)
	defer t.Stop()
	select {
	case r := <-done:
		return r.data, r.err
	case <-t.C:
		// The goroutine stays blocked in the system call until the file system answers;
		// it then closes the file and its result is dropped.
		return nil, fmt.Errorf("%s: opening or reading it did not finish within %s (a hung network file system?)", path, openTimeout)
	}
}

// readChecked looks at what path is before opening it, opens it without blocking, checks
// again (it may have been swapped in between) and reads at most max+1 bytes, to tell
// "exactly max" from "more".
func readChecked(path string, max int64) ([]byte, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if err := acceptable(path, st, max); err != nil {
		return nil, err
	}
	f, err := openForRead(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err = f.Stat()
	if err != nil {
		return nil, err
	}
	if err := acceptable(path, st, max); err != nil {
		return nil, err
	}
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("%w: %s grew past %s while being read", ErrRefused, path, byteSize(max))
	}
	return data, nil
}

// acceptable refuses what is not a regular file of at most max bytes.
func acceptable(path string, st fs.FileInfo, max int64) error {
	if !st.Mode().IsRegular() {
		return fmt.Errorf("%w: %s is %s, not a regular file", ErrRefused, path, fileKind(st.Mode()))
	}
	if st.Size() > max {
		return fmt.Errorf("%w: %s is %s, more than the %s a file of its kind may be", ErrRefused, path, byteSize(st.Size()), byteSize(max))
	}
	return nil
}

// fileKind names a file mode's type for messages.
func fileKind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO (named pipe)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	case m&fs.ModeIrregular != 0:
		return "an irregular file"
	}
	return "not a plain file"
}

// byteSize formats a size for messages: 64 KiB, 1.5 MiB, 2.0 GiB.
func byteSize(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
