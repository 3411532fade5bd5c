//go:build !unix

package main

import "os"

// watchOutputs does nothing where poll does not exist: a closed output is noticed at the
// next write (EPIPE).
func watchOutputs(files []*os.File, onClosed func()) (stop func()) { return func() {} }

// outputClosed reports false: it cannot tell here.
func outputClosed(files []*os.File) bool { return false }
