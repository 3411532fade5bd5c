// Package markers parses the caret markers of scenario files, shared by the scenario tests
// of analysis and analysis/rules. A marker is a line under the line it is about:
//
//	print(tf_idf)
//	#     ^^^^^^ undefined-name error "name 'tf_idf' is not defined"
//
// The carets give the range on the line above: their byte columns in the (ASCII) marker
// line are the range's columns, the '#' counting as column 0; a marker may also start with
// '^' for column 0. What follows the carets is the caller's own syntax. Marker lines are
// removed from the text before it is analysed.
package markers

import (
	"regexp"
	"strings"

	"github.com/premortem/premortem/finding"
)

// Marker is one expectation read from a marker line.
type Marker struct {
	// Range is the span the carets cover on the line above the marker.
	Range finding.Range
	// Groups are the submatches of the caller's pattern for what follows the carets.
	Groups []string
}

// Syntax is the grammar of one kind of scenario's markers.
type Syntax struct {
	re *regexp.Regexp
}

// New returns the marker syntax whose text after the carets (and the spaces that follow
// them) matches rest, a regular expression anchored at the end. A line that looks like a
// marker but does not match rest stays a line of the cell, so a comment such as "# ^ note"
// is never mistaken for an expectation it does not spell out.
func New(rest string) *Syntax {
	return &Syntax{re: regexp.MustCompile(`^#?( *)(\^+)\s+` + rest + `$`)}
}

// Parse splits text into the cell without its marker lines and the markers, in order.
// A marker on the first line has no line above it and stays a line of the cell.
func (s *Syntax) Parse(text string) (string, []Marker) {
	var lines []string
	var marks []Marker
	for _, line := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		m := s.re.FindStringSubmatch(line)
		if m == nil || len(lines) == 0 {
			lines = append(lines, line)
			continue
		}
		col := strings.Index(line, "^")
		ln := len(lines) - 1
		marks = append(marks, Marker{
			Range: finding.Range{
				Start: finding.Position{Line: ln, Character: col},
				End:   finding.Position{Line: ln, Character: col + len(m[2])},
			},
			Groups: m[3:],
		})
	}
	return strings.Join(lines, "\n"), marks
}
