//go:build linux && cgo

package analysis

/*
#include <stddef.h>
// malloc_trim is glibc's; declared weak so that a C library without it (musl) still links
// and the call is skipped.
extern int malloc_trim(size_t pad) __attribute__((weak));
static void premortem_trim(void) {
	if (malloc_trim) malloc_trim(0);
}
*/
import "C"

// TrimCMemory returns the C heap's free pages to the operating system. Syntax trees are
// C memory: glibc keeps what a freed tree held mapped, so after a large notebook closes
// the server's RSS would stay where it peaked.
func TrimCMemory() { C.premortem_trim() }
