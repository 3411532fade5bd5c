package repair

// scanCode walks line byte by byte, telling visit whether each byte lies inside a string
// literal ('…' or "…", backslash escapes kept together; the quotes themselves count as
// code). visit returns false to stop. It is the one quote scanner the line-level helpers
// share (comments, bracket depth, signature commas, blanked strings).
func scanCode(line string, visit func(i int, c byte, inString bool) bool) {
	var quote byte
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case quote != 0 && c == '\\':
			if !visit(i, c, true) {
				return
			}
			if i+1 < len(line) {
				i++
				if !visit(i, line[i], true) {
					return
				}
			}
			continue
		case quote != 0 && c == quote:
			quote = 0
		case quote != 0:
			if !visit(i, c, true) {
				return
			}
			continue
		case c == '\'' || c == '"':
			quote = c
		}
		if !visit(i, c, false) {
			return
		}
	}
}
