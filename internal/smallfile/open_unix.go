//go:build unix

package smallfile

import (
	"os"
	"syscall"
)

// openNonBlocking opens path for reading with O_NONBLOCK, so that a FIFO without a writer
// (or a device waiting for a carrier) cannot block the open, then clears the flag so the
// reads of a regular file behave as usual.
func openNonBlocking(path string) (*os.File, error) {
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	if err := syscall.SetNonblock(fd, false); err != nil {
		syscall.Close(fd)
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	return os.NewFile(uintptr(fd), path), nil
}
