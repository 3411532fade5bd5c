package repair

import (
	"reflect"
	"strings"
	"testing"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/facts"
	"github.com/premortem/premortem/finding"
)

func TestParams(t *testing.T) {
	tests := []struct {
		sig  string
		want []param
	}{
		{"(x, y, s=None, c=None, *, data=None, **kwargs)", []param{{"x", true, false}, {"y", true, false}, {"s", true, false}, {"c", true, false}, {"data", false, false}, {"kwargs", false, true}}},
		{"(*arrays, test_size=None, shuffle=True)", []param{{"arrays", false, true}, {"test_size", false, false}, {"shuffle", false, false}}},
		{"(a, /, b: 'int' = (1, 2), sep=', ') -> None", []param{{"a", true, false}, {"b", true, false}, {"sep", true, false}}},
		{"()", nil},
	}
	for _, tt := range tests {
		if got := params(tt.sig); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("params(%q) = %+v, want %+v", tt.sig, got, tt.want)
		}
	}
}

func TestKeywordGuesses(t *testing.T) {
	pool := []string{"test_size", "train_size", "random_state", "shuffle", "stratify"}
	tests := []struct {
		kw   string
		want []string
	}{
		{"test_ratio", []string{"test_size"}},
		{"random_sate", []string{"random_state"}},
		{"epochs", nil},
	}
	for _, tt := range tests {
		if got := keywordGuesses(tt.kw, pool); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("keywordGuesses(%q) = %v, want %v", tt.kw, got, tt.want)
		}
	}
}

func TestUnclosed(t *testing.T) {
	tests := []struct {
		text string
		want string // the open brackets, outermost first; "!" when a closer mismatches
	}{
		{"total = np.sum(vals * 2\nprint(total)", "("},
		{"d = {'a': [1, 2\n", "{["},
		{"s = '(' + \"[\"  # (\nx = (1)", ""},
		{"x = f(a]", "!"},
		{"t = \"\"\"(\n\"\"\" + str(", "("},
	}
	for _, tt := range tests {
		open, ok := unclosed(tt.text)
		got := ""
		for _, o := range open {
			got += string(o.char)
		}
		if !ok {
			got = "!"
		}
		if got != tt.want {
			t.Errorf("unclosed(%q) = %q, want %q", tt.text, got, tt.want)
		}
	}
}

func TestJunkChars(t *testing.T) {
	tests := []struct {
		in, junk string
		ok       bool
	}{
		{"$36,945 ", "$, ", true},
		{"1,250.00", ",", true},
		{"12 %", " %", true},
		{"Age", "", false},
		{"42", "", false}, // nothing stands in the way: another failure
		{"$", "", false},
	}
	for _, tt := range tests {
		junk, ok := junkChars(tt.in)
		if ok != tt.ok || ok && junk != tt.junk {
			t.Errorf("junkChars(%q) = %q, %v; want %q, %v", tt.in, junk, ok, tt.junk, tt.ok)
		}
	}
	if got := charClass("$, "); got != `[$,\s]` {
		t.Errorf("charClass = %q", got)
	}
}

func TestResized(t *testing.T) {
	tests := []struct {
		src       string
		want, got int
		texts     []string
	}{
		{"nn.Linear(32 * 7 * 7, 128)", 1568, 800, []string{"32 * 5 * 5", "800"}},
		{"nn.Linear(4, 1)", 4, 3, []string{"3"}},
		{"nn.Linear(16 * 4 * 4, 10)", 256, 300, []string{"300"}},
	}
	for _, tt := range tests {
		cf := analysis.ParseCell("layer = " + tt.src + "\n")
		args := sizeArgs(cf, tt.want)
		if len(args) != 1 {
			t.Fatalf("%s: sizeArgs = %d, want 1", tt.src, len(args))
		}
		if got := resized(args[0], tt.want, tt.got); !reflect.DeepEqual(got, tt.texts) {
			t.Errorf("%s: resized = %v, want %v", tt.src, got, tt.texts)
		}
	}
}

func TestFrameSite(t *testing.T) {
	hist := []Cell{
		{ID: "a", Index: 0, Text: "import torch"},
		{ID: "b", Index: 1, Text: "class Net:\n    def forward(self, x):\n        return x.view(-1)"},
	}
	frames := []facts.Frame{
		{File: "<cell>", Line: 1, Func: "<cell>", InCell: true},
		{File: "/usr/lib/python3/dist-packages/torch/nn/modules/module.py", Line: 1194, Func: "_call_impl", Text: "return forward_call(*input, **kwargs)"},
		{File: "/tmp/ipykernel_1/123.py", Line: 3, Func: "forward", Text: "return x.view(-1)"},
		{File: "/usr/lib/python3/dist-packages/torch/_tensor.py", Line: 10, Func: "view", Text: "return x.view(-1)"},
	}
	s, ok := FrameSite(frames, hist)
	if !ok || s.Cell.ID != "b" || s.Line != 2 || s.Where() != "cell 2, line 3 (forward)" {
		t.Fatalf("FrameSite = %+v, %v", s, ok)
	}
	// The cell's own frame is innermost: the cell is the site.
	if _, ok := FrameSite(frames[:1], hist); ok {
		t.Error("a crash in the cell's own code has no other site")
	}
	// Code edited since it ran: the line no longer holds the frame's text.
	hist[1].Text = strings.Replace(hist[1].Text, "view", "reshape", 1)
	if _, ok := FrameSite(frames, hist); ok {
		t.Error("a frame whose text no cell holds has no site")
	}
}

func TestLoss(t *testing.T) {
	tests := []struct {
		text, title, want string
	}{
		{`pd.to_numeric(df["a"], errors='coerce')`, "Parse a as numbers", "Parse a as numbers (loses data: values that do not parse become NaN)"},
		{`df.dropna()`, "Drop the rows with missing values", "Drop the rows with missing values (loses data: rows are dropped)"},
		{`df["a"].str.replace(r"[$,]", "", regex=True)`, "Remove '$'", "Remove '$'"},
		{`X.fillna(X.median())`, "Fill the missing values of X with the medians of X", "Fill the missing values of X with the medians of X"},
	}
	for _, tt := range tests {
		f := finding.Fix{Title: tt.title, Edits: []finding.Edit{{NewText: tt.text}}}
		if got := LossTitle(f); got != tt.want {
			t.Errorf("LossTitle(%q) = %q, want %q", tt.text, got, tt.want)
		}
	}
}

func TestNeededChannels(t *testing.T) {
	text := "out = net(images)\n"
	hist := []Cell{{ID: "n", Index: 0, Text: "net = nn.Sequential(nn.Conv2d(1, 8, 3), nn.Flatten())"}}
	tests := []struct {
		msg  string
		want int // candidates
	}{
		// A batch of 4 RGB images for a grayscale layer: the layer takes 3 channels.
		{"Given groups=1, weight of size [8, 1, 3, 3], expected input[4, 3, 28, 28] to have 1 channels, but got 3 channels instead", 1},
		// A (16, 28, 28) batch read as one unbatched image of 16 channels: no layer resize.
		{"Given groups=1, weight of size [8, 1, 3, 3], expected input[1, 16, 28, 28] to have 1 channels, but got 16 channels instead", 0},
	}
	for _, tt := range tests {
		in := Input{Finding: finding.Finding{Exception: "RuntimeError"}, Message: tt.msg, Text: text, Facts: analysis.ParseCell(text), History: hist}
		if got := neededGen(&in); len(got) != tt.want {
			t.Errorf("%s: %d candidates %+v, want %d", tt.msg, len(got), got, tt.want)
		}
	}
}

func TestListedOption(t *testing.T) {
	tests := []struct {
		name, text, exc, msg string
		want                 []string // the new texts proposed, in order
	}{
		{"scikit-learn's parameter validation", "clf = LogisticRegression(solver='libliner')\n", "InvalidParameterError",
			"The 'solver' parameter of LogisticRegression must be a str among {'saga', 'liblinear', 'newton-cholesky', 'sag', 'lbfgs', 'newton-cg'}. Got 'libliner' instead.",
			[]string{"'liblinear'"}},
		{"seaborn's list, a plural, double quotes kept", "sns.histplot(df, x=\"age\", stat=\"counts\")\n", "ValueError",
			"The `stat` parameter for `Hist` must be one of 'count', 'density', 'percent', 'probability' or 'frequency'; not 'counts'.",
			[]string{`"count"`}},
		{"no listed value near the wrong one: a change of meaning", "rf = RandomForestClassifier(criterion='mse')\n", "InvalidParameterError",
			"The 'criterion' parameter of RandomForestClassifier must be a str among {'entropy', 'gini', 'log_loss'}. Got 'mse' instead.",
			nil},
		{"the message does not quote the literal", "df.plot(kind='scater')\n", "ValueError", "scater is not a valid plot kind", nil},
		{"one quoted name is no list", "df['Age ']\n", "KeyError", "'Age '", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := input(tt.text, tt.exc, tt.msg, 0)
			if got := newTexts(listedOptionGen(&in)); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestSaysUse(t *testing.T) {
	npFloat := "module 'numpy' has no attribute 'float'.\n`np.float` was a deprecated alias for the builtin `float`. To avoid this error in existing code, use `float` by itself. Doing this will not modify any behavior and is safe. If you specifically wanted the numpy scalar type, use `np.float64` here."
	tests := []struct {
		name, text, msg string
		want            []string
	}{
		{"NumPy's removed alias, both spellings it gives", "df['x'] = df['x'].astype(np.float)\n", npFloat, []string{"float", "np.float64"}},
		{"the line does not hold the quoted expression", "y = np.float32(2)\n", npFloat, nil},
		{"a placeholder is no code to write", "t = x.view(-1)\n", "view size is not compatible ... Use `.reshape(...)` instead.", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := input(tt.text, "AttributeError", tt.msg, 0)
			if got := newTexts(saysUseGen(&in)); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestCallValue(t *testing.T) {
	tests := []struct {
		name, text, msg string
		want            []string
	}{
		{"a tuple called", "n_rows = df.shape()[0]\n", "'tuple' object is not callable", []string{"df.shape"}},
		{"an array called", "w = model.coef_()\n", "'numpy.ndarray' object is not callable", []string{"model.coef_"}},
		{"a method in arithmetic", "z = (df['a'] - df['a'].mean) / 2\n", "unsupported operand type(s) for -: 'Series' and 'method'", []string{"df['a'].mean()"}},
		{"a module's function is no method to call", "import numpy as np\nr = np.round(s.std, 2)\n", "unsupported operand type(s) for *: 'method' and 'float'", []string{"s.std()"}},
		{"a function called is no value", "f = g()\n", "'function' object is not callable", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			line := strings.Count(strings.TrimSuffix(tt.text, "\n"), "\n")
			in := input(tt.text, "TypeError", tt.msg, line)
			if got := newTexts(callValueGen(&in)); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestLabelShift(t *testing.T) {
	msg := "Invalid classes inferred from unique values of `y`.  Expected: [0 1 2], got [1 2 3]"
	tests := []struct {
		name, text, msg string
		want            []string
	}{
		{"labels from 1", "clf.fit(X_train, y_train)\n", msg, []string{"y_train - 1"}},
		{"by keyword, an expression parenthesised", "clf.fit(X, y=df.q + 2)\n", "Invalid classes inferred from unique values of `y`.  Expected: [0 1], got [3 4]", []string{"(df.q + 2) - 3"}},
		{"no constant shift", "clf.fit(X, y)\n", "Invalid classes inferred from unique values of `y`.  Expected: [0 1 2], got [0 2 5]", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := input(tt.text, "ValueError", tt.msg, 0)
			if got := newTexts(labelShiftGen(&in)); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

// newTexts are the new texts of the first edit of each candidate, in order.
func newTexts(cs []Candidate) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Fix.Edits[0].NewText)
	}
	return out
}

func TestSizesDiffer(t *testing.T) {
	tests := []struct {
		msg  string
		want bool
	}{
		{"Found input variables with inconsistent numbers of samples: [300, 100]", true},
		{"x and y must have same first dimension, but have shapes (21,) and (20,)", true},
		{"operands could not be broadcast together with shapes (3,) (3,)", false},
		{"learning rate 0.5 must be below 1.0", false},
		{"conv2d: expected 4D input", false},
	}
	for _, tt := range tests {
		if got := sizesDiffer(tt.msg); got != tt.want {
			t.Errorf("sizesDiffer(%q) = %v, want %v", tt.msg, got, tt.want)
		}
	}
}

func TestCounterparts(t *testing.T) {
	tests := []struct {
		name    string
		toTrain bool
		want    []string
	}{
		{"X_train", false, []string{"X_test", "X_valid", "X_val"}},
		{"y_test", true, []string{"y_train"}},
		{"X_val", true, []string{"X_train"}},
		{"testTrain", false, nil}, // holds both words
		{"X_tr", false, []string{"X_te"}},
		{"trace", false, nil}, // tr inside a word is no split
		{"Xtrain", false, []string{"Xtest", "Xvalid", "Xval"}},
	}
	for _, tt := range tests {
		if got := counterparts(tt.name, tt.toTrain); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("counterparts(%q, %v) = %q, want %q", tt.name, tt.toTrain, got, tt.want)
		}
	}
}

func TestLabelKey(t *testing.T) {
	tests := []struct {
		key  string
		want bool
	}{
		{`"income"`, true},
		{`["a", "b"]`, true},
		{`df["age"] > 60`, true},
		{`(df.a > 1) & (df.b < 2)`, true},
		{`~(df.a == 1)`, true},
		{`3`, false},
		{`[0, 1]`, false},
		{`mask`, false}, // a name: its syntax does not say
		{`i + 1`, false},
	}
	for _, tt := range tests {
		e := exprOf(tt.key)
		if e == nil {
			t.Fatalf("exprOf(%q) = nil", tt.key)
		}
		if got := labelKey(e); got != tt.want {
			t.Errorf("labelKey(%q) = %v, want %v", tt.key, got, tt.want)
		}
	}
}

func TestRangeOfLen(t *testing.T) {
	tests := []struct{ r, want string }{
		{"range(EPOCHS + 1)", "range(len(losses))"},
		{"range(1, EPOCHS + 2)", "range(1, len(losses) + 1)"},
		{"range(0, n)", "range(0, len(losses))"},
		{"np.arange(1, 30, 2)", "np.arange(1, 1 + len(losses) * 2, 2)"},
		{"range(start, n)", ""}, // what a computed start means is unknown
	}
	for _, tt := range tests {
		e := exprOf(tt.r)
		fn, ok := countedRange(e)
		if !ok {
			t.Fatalf("countedRange(%q) is false", tt.r)
		}
		if got := rangeOfLen(fn, e, "losses"); got != tt.want {
			t.Errorf("rangeOfLen(%q) = %q, want %q", tt.r, got, tt.want)
		}
	}
	if _, ok := countedRange(exprOf("np.linspace(0, 1, 5)")); ok {
		t.Error("np.linspace counts no steps of one")
	}
}

func TestReshapeRow(t *testing.T) {
	for _, tt := range []struct {
		call string
		row  int
		ok   bool
	}{
		{"x.reshape(-1, 28, 28)", 784, true},
		{"x.reshape((-1, 8, 8))", 64, true},
		{"t.view(n, 1, 28, 28)", 784, true},
		{"x.reshape(-1, -1)", 0, false},
		{"x.reshape(-1)", 0, false},
		{"x.reshape(-1, side, side)", 0, false},
	} {
		row, ok := rowSize(exprOf(tt.call))
		if row != tt.row || ok != tt.ok {
			t.Errorf("rowSize(%q) = %d, %v; want %d, %v", tt.call, row, ok, tt.row, tt.ok)
		}
	}
	cols := func(names ...any) []facts.Column {
		var out []facts.Column
		for _, n := range names {
			out = append(out, facts.Column{Name: n})
		}
		return out
	}
	if got, want := extraColumns(cols("label", "pixel0", "pixel1", "pixel2"), 1), [][]string{{`"label"`}, {`"pixel2"`}}; !reflect.DeepEqual(got, want) {
		t.Errorf("extraColumns = %q, want %q", got, want)
	}
	if got, want := extraColumns(cols(0, 1, 2, 3), 1), [][]string{{"0"}, {"3"}}; !reflect.DeepEqual(got, want) {
		t.Errorf("extraColumns of numbered columns = %q, want %q", got, want)
	}
}

func TestSameCallee(t *testing.T) {
	for _, tt := range []struct {
		old, new string
		ok       bool
	}{
		{"range(EPOCHS + 1)", "range(len(losses))", true},
		{"np.arange(n)", "np.arange(len(y))", true},
		{"range(n)", "list(y)", false},
		{"model.predict(X)", "model.predict(X)", false},
		{"x + 1", "x + 2", false},
	} {
		if _, ok := sameCallee(tt.old, tt.new); ok != tt.ok {
			t.Errorf("sameCallee(%q, %q) = %v, want %v", tt.old, tt.new, ok, tt.ok)
		}
	}
}
