//go:build !linux || !cgo

package analysis

// TrimCMemory returns the C heap's free pages to the operating system where the C
// library can (glibc); elsewhere it does nothing.
func TrimCMemory() {}
