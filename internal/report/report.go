// Package report writes what `premortem check` found (a judge.Report) in its three output
// formats: text for a person at a terminal (text.go), the JSON whose contract is
// docs/check-json.md (json.go), and SARIF 2.1.0 for CI code scanning (sarif.go), whose
// regions point into the .ipynb file itself (ipynb.go places them).
package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/premortem/premortem/finding"
	"github.com/premortem/premortem/judge"
)

// Formats are the values of check's --format, the first the default.
var Formats = []string{"text", "json", "sarif"}

// Write writes rep in format (one of Formats); version is premortem's, which SARIF names as
// the tool's.
func Write(w io.Writer, rep *judge.Report, format, version string) error {
	switch format {
	case "json":
		return JSON(w, rep)
	case "sarif":
		return SARIF(w, rep, version)
	case "text":
		return Text(w, rep)
	}
	return fmt.Errorf("unknown report format %q: want text, json or sarif", format)
}

// EditCell is the 0-based notebook index of the cell an edit applies to.
func EditCell(rep *judge.Report, finding int, e finding.Edit) int {
	if e.Cell == "" || rep.Source == nil {
		return finding
	}
	if i := rep.Source.Index(e.Cell); i >= 0 {
		return i
	}
	return finding
}

// preferredFix is the fix a report shows: the preferred one (the best verified fix when
// verification ran), else the first.
func preferredFix(f finding.Finding) *finding.Fix {
	for i := range f.Fixes {
		if f.Fixes[i].Preferred {
			return &f.Fixes[i]
		}
	}
	if len(f.Fixes) > 0 {
		return &f.Fixes[0]
	}
	return nil
}

// offsetIn converts a line and UTF-16 column within text to a byte offset.
func offsetIn(text string, line, col int) (int, bool) {
	off := 0
	for i := 0; i < line; i++ {
		j := strings.IndexByte(text[off:], '\n')
		if j < 0 {
			return 0, false
		}
		off += j + 1
	}
	end := len(text)
	if j := strings.IndexByte(text[off:], '\n'); j >= 0 {
		end = off + j
	}
	u := 0
	for i, r := range text[off:end] {
		if u >= col {
			return off + i, true
		}
		u++
		if r >= 0x10000 {
			u++
		}
	}
	if u >= col {
		return end, true
	}
	return 0, false
}

// Count is "1 cell" or "n cells": n and word, plural when n is not 1.
func Count(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// firstNonEmpty returns the first of ss that is not empty, or "".
func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}
