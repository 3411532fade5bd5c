// Command gendoc writes docs/rules.md from the finding-code registry. It is run by
// `go generate ./finding`; the finding package's tests fail when the checked-in page differs
// from what it would write.
package main

import (
	"fmt"
	"os"

	"github.com/premortem/premortem/finding"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: gendoc OUT.md (run it through `go generate ./finding`)")
		os.Exit(2)
	}
	if err := os.WriteFile(os.Args[1], finding.Markdown(), 0o644); err != nil {
		fmt.Fprintf(os.Stderr, "gendoc: writing the rules page: %v\n", err)
		os.Exit(1)
	}
}
