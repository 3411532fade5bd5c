package judge

import "testing"

// TestTracebackLine: the line of the cell itself that raised, from IPython's tracebacks
// (ANSI colours included), also when the exception came from a function another cell
// defined; none when the traceback names no frame of that run.
func TestTracebackLine(t *testing.T) {
	ipython8 := []string{
		"\x1b[0;31m-----\x1b[0m",
		"\x1b[0;31mIndexError\x1b[0m                                Traceback (most recent call last)",
		"Cell \x1b[0;32mIn [2], line 3\x1b[0m\n\x1b[1;32m      1\x1b[0m a\x1b[38;5;241m=\x1b[39m1\n\x1b[0;32m----> 3\x1b[0m f(b)\n",
		"Cell \x1b[0;32mIn [1], line 2\x1b[0m, in \x1b[0;36mf\x1b[0;34m(x)\x1b[0m\n\x1b[0;32m----> 2\x1b[0m     return x[5]\n",
		"\x1b[0;31mIndexError\x1b[0m: list index out of range",
	}
	for _, tc := range []struct {
		name string
		tb   []string
		n    int
		line int
		ok   bool
	}{
		{"ipython 8", ipython8, 2, 2, true},
		{"ipython 8, the defining cell's run", ipython8, 1, 1, true},
		{"another run", ipython8, 7, 0, false},
		{"newer ipython", []string{"Cell In[12], line 4\n----> 4 df['x']\n"}, 12, 3, true},
		{"older ipython", []string{"<ipython-input-5-0123abcd> in <module>\n      1 a = 1\n----> 2 b[3]\n"}, 5, 1, true},
		{"no traceback", nil, 1, 0, false},
	} {
		line, ok := tracebackLine(tc.tb, tc.n)
		if line != tc.line || ok != tc.ok {
			t.Errorf("%s: got line %d, %v; want %d, %v", tc.name, line, ok, tc.line, tc.ok)
		}
	}
}
