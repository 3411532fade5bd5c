//go:build !unix

package smallfile

import "os"

// openNonBlocking opens path for reading; where O_NONBLOCK does not exist, the Stat before
// and Read's timeout stand in for it.
func openNonBlocking(path string) (*os.File, error) {
	return os.Open(path)
}
