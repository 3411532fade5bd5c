package repair

import "testing"

func TestTypeChange(t *testing.T) {
	const (
		frame  = "pandas.core.frame.DataFrame"
		series = "pandas.core.series.Series"
		array  = "numpy.ndarray"
		tensor = "torch.Tensor"
		svc    = "sklearn.svm._classes.SVC"
		forest = "sklearn.ensemble._forest.RandomForestClassifier"
	)
	tests := []struct {
		name          string
		before, after map[string]string
		refused       bool
	}{
		{"same types", map[string]string{"X": frame, "model": svc}, map[string]string{"X": frame, "model": svc}, false},
		{"a column made a one-column frame", map[string]string{"X": series}, map[string]string{"X": frame}, false},
		{"a frame made an array, an array a tensor", map[string]string{"X": frame, "t": array}, map[string]string{"X": array, "t": tensor}, false},
		{"an int made a float", map[string]string{"n": "int"}, map[string]string{"n": "numpy.float64"}, false},
		{"None was the bug", map[string]string{"df": "NoneType"}, map[string]string{"df": frame}, false},
		{"not reported", map[string]string{"X": frame}, map[string]string{}, false},
		{"another estimator", map[string]string{"model": svc}, map[string]string{"model": forest}, true},
		{"data made a number", map[string]string{"X": frame}, map[string]string{"X": "int"}, true},
		{"data made text", map[string]string{"y": series}, map[string]string{"y": "str"}, true},
		{"left unbound", map[string]string{"X": frame}, map[string]string{"X": ""}, true},
	}
	for _, tt := range tests {
		if got := TypeChange(tt.before, tt.after); (got != "") != tt.refused {
			t.Errorf("%s: TypeChange = %q, refused want %v", tt.name, got, tt.refused)
		}
	}
}
