package analysis

import (
	"fmt"
	"sort"
	"strings"
	"testing"
)

func TestCellStatements(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		// want is one "start-end defs=... uses=... methods=..." line per statement.
		want []string
	}{
		{"one per top-level statement", "import numpy as np\n\nx = np.ones(3)\nprint(x)",
			[]string{"0-0 defs=np uses= methods=", "2-2 defs=x uses=np methods=", "3-3 defs= uses=print,x methods="}},
		{"blocks, decorators and clauses belong to their statement",
			"@dec\ndef f(a):\n    return a + k\nif c:\n    y = 1\nelse:\n    y = 2\n# comment\ntry:\n    z = g()\nexcept E:\n    pass",
			[]string{"0-2 defs=f uses=dec methods=", "3-6 defs=y,y uses=c methods=", "8-11 defs=z uses=E,g methods="}},
		{"statements sharing a line are one", "a = 1; b = a\nc = b",
			[]string{"0-0 defs=a,b uses= methods=", "1-1 defs=c uses=b methods="}},
		{"magics belong to no statement", "%matplotlib inline\nimport matplotlib.pyplot as plt\n!pip install x",
			[]string{"1-1 defs=plt uses= methods="}},
		{"a non-Python cell has none", "%%bash\necho hi", nil},
		{"methods' module reads", "class M(Base):\n    size = 3\n    def f(self):\n        return helper(self.size)\n    class Inner:\n        @staticmethod\n        def g():\n            return other",
			[]string{"0-7 defs=M uses=Base,staticmethod methods=helper,other"}},
		{"broken code still yields statements", "x = (\ny = 2", []string{"0-1 defs=x uses= methods="}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, st := range CellStatements(tc.text) {
				var defs, uses, methods []string
				for _, d := range st.Facts.Defs {
					defs = append(defs, d.Name)
				}
				for _, u := range st.Facts.Uses {
					uses = append(uses, u.Name)
				}
				for _, r := range st.MethodReads {
					methods = append(methods, r.Name)
				}
				sort.Strings(uses)
				sort.Strings(methods)
				got = append(got, fmt.Sprintf("%d-%d defs=%s uses=%s methods=%s", st.StartLine, st.EndLine,
					strings.Join(defs, ","), strings.Join(uses, ","), strings.Join(methods, ",")))
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("CellStatements(%q) =\n%s\nwant\n%s", tc.text, strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}
