package rules

import (
	"testing"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/facts"
	"github.com/premortem/premortem/finding"
)

// TestCertain checks which findings are certain by construction: the same missing column,
// name or None is certain on a state nothing in the cell touched before the line, and not
// once a call, a store, a magic or a branch stands before it, or when the frame is not
// exactly a pandas DataFrame the inspection saw whole.
func TestCertain(t *testing.T) {
	three := 3
	frame := func(typ string, dynamic bool) facts.Value {
		return facts.Value{Name: "df", Exists: true, Type: typ, Kind: facts.KindDataFrame, Shape: []int{3, 1}, Len: &three,
			Columns: []facts.Column{{Name: "Age", Dtype: "float64"}}, Dynamic: dynamic}
	}
	const pd = "pandas.core.frame.DataFrame"
	none := facts.Value{Name: "cb", Exists: true, Type: "NoneType", Kind: facts.KindNone}
	for _, tc := range []struct {
		name, cell string
		df         facts.Value
		code       string
		certain    bool
	}{
		{"column on the inspected frame", "m = df['age'].mean()", frame(pd, false), "missing-column", true},
		{"after plain assignments", "k = 'x'\nn = 3\nm = df['age']", frame(pd, false), "missing-column", true},
		{"inside the call that reads it", "print(df['age'])", frame(pd, false), "missing-column", true},
		{"after a call", "prepare()\nm = df['age']", frame(pd, false), "missing-column", false},
		{"a call earlier on the line", "v = prepare() + df['age']", frame(pd, false), "missing-column", false},
		{"after a store into the frame", "df['x'] = 1\nm = df['age']", frame(pd, false), "missing-column", false},
		{"after a magic", "%run helpers.py\nm = df['age']", frame(pd, false), "missing-column", false},
		{"in a branch", "if n:\n    m = df['age']", frame(pd, false), "missing-column", false},
		{"a frame the cell derived", "d = df[1:]\nm = d['age']", frame(pd, false), "missing-column", false},
		{"an alias the cell bound", "d = df\nm = d['age']", frame(pd, false), "missing-column", false},
		{"a DataFrame subclass", "m = df['age']", frame("geopandas.geodataframe.GeoDataFrame", false), "missing-column", false},
		{"a frame with run-time attributes", "m = df['age']", frame(pd, true), "missing-column", false},
		{"the attribute form (known-attribute tables)", "m = df.age", frame(pd, false), "missing-column", false},
		{"a name the namespace lacks", "m = np.sum(valeus)", frame(pd, false), "undefined-name", true},
		{"a name after a call that may bind it", "setup()\nm = valeus", frame(pd, false), "undefined-name", false},
		{"a name read in a function the cell calls", "def f():\n    return valeus\nf()", frame(pd, false), "undefined-name", false},
		{"calling None from the kernel", "cb(3)", frame(pd, false), "none-call", true},
		{"None bound by a modelled call", "cb = df.sort_values('Age', inplace=True)\ncb.head()", frame(pd, false), "none-attribute", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := &Env{Values: map[string]facts.Value{"df": tc.df, "cb": none},
				Namespace: map[string]bool{"df": true, "cb": true, "np": true, "prepare": true, "setup": true, "n": true}}
			np := facts.Value{Name: "np", Exists: true, Kind: facts.KindPyModule, Repr: "<module 'numpy'>"}
			env.Values["np"] = np
			var got *finding.Finding
			fs := Check("c", analysis.ParseCell(tc.cell), env)
			for i := range fs {
				if fs[i].Code == tc.code {
					got = &fs[i]
				}
			}
			if got == nil {
				t.Fatalf("no %s finding in %+v", tc.code, fs)
			}
			if got.Certain != tc.certain {
				t.Errorf("%s: certain = %v, want %v", got.Message, got.Certain, tc.certain)
			}
		})
	}
}
