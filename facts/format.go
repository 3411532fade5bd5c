package facts

import (
	"strconv"
	"strings"
)

// FormatShape renders a shape the way Python prints the tuple: (712, 8), (5,), (). Every
// layer (hover, inlay hints, the LLM prompt, rule messages) prints shapes with it, so a user
// sees one shape written one way. A negative dimension is one nobody knows (the rules'
// abstract state uses -1 for it) and prints as ?, since no real shape has one.
func FormatShape(shape []int) string {
	parts := make([]string, len(shape))
	for i, d := range shape {
		if d < 0 {
			parts[i] = "?"
		} else {
			parts[i] = strconv.Itoa(d)
		}
	}
	if len(parts) == 1 {
		return "(" + parts[0] + ",)"
	}
	return "(" + strings.Join(parts, ", ") + ")"
}
