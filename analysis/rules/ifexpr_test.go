package rules_test

import (
	"path/filepath"
	"testing"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/analysis/rules"
	"github.com/premortem/premortem/finding"
)

// TestConditionalExpressionGuard: only one branch of `a if cond else b` runs, so a missing
// column in a branch the condition may skip is not a certain crash. The conditional is
// recognised from its syntax tree: however the expression is laid out (split over lines
// inside brackets, no space before a parenthesised condition), and not by searching the
// text for " if ", which those layouts do not contain.
func TestConditionalExpressionGuard(t *testing.T) {
	sc := parseScenario(t, filepath.Join(rulesDir(t), "pandas-ifexpr-guard_ok.txtar"))
	env := envFrom(sc.facts) // df has 'Age', not 'age'
	for _, tc := range []struct {
		name, cell string
		want       []string // codes
	}{
		{"one line", "ages = df['age'] if 'age' in df.columns else df['Age']", nil},
		{"split over lines", "ages = (df['age']\nif 'age' in df.columns\nelse df['Age'])", nil},
		{"parenthesised condition", "ages = df['age'] if('age' in df.columns)else df['Age']", nil},
		{"tab separated", "ages = df['age']\tif 'age' in df.columns\telse df['Age']", nil},
		// Controls: the same read outside a conditional, and in the branch that always
		// evaluates its condition, are certain crashes.
		{"no conditional", "ages = (df['age']\n)", []string{finding.MissingColumn}},
		{"in the condition", "ages = (df['Age']\nif df['age'].any()\nelse 0)", []string{finding.MissingColumn}},
		{"a string holding ' if ' and ' else '", "ages = df['age'].fillna(' if x else y ')", []string{finding.MissingColumn}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := rules.Check("cell", analysis.ParseCell(tc.cell), env)
			var codes []string
			for _, f := range got {
				codes = append(codes, f.Code)
			}
			if len(codes) != len(tc.want) || (len(codes) > 0 && codes[0] != tc.want[0]) {
				t.Errorf("codes = %v, want %v (findings %+v)", codes, tc.want, got)
			}
		})
	}
}
