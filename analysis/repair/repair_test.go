package repair

import (
	"strings"
	"testing"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/facts"
	"github.com/premortem/premortem/finding"
)

func intp(n int) *int { return &n }

// frame is a DataFrame value with string columns.
func frame(name string, cols ...string) facts.Value {
	v := facts.Value{Name: name, Exists: true, Kind: facts.KindDataFrame}
	for _, c := range cols {
		v.Columns = append(v.Columns, facts.Column{Name: c, Dtype: "float64"})
	}
	return v
}

func input(text, exc, msg string, line int, values ...facts.Value) Input {
	in := Input{
		Finding: finding.Finding{Exception: exc, Message: msg, Range: finding.Range{Start: finding.Position{Line: line}, End: finding.Position{Line: line, Character: 1}}},
		Message: msg, Text: text, Facts: analysis.ParseCell(text),
		Inspection: &facts.Inspection{Values: map[string]facts.Value{}, Namespace: []string{}},
	}
	for _, v := range values {
		in.Inspection.Values[v.Name] = v
		in.Inspection.Namespace = append(in.Inspection.Namespace, v.Name)
	}
	return in
}

func hist(texts ...string) []Cell {
	var out []Cell
	for i, t := range texts {
		out = append(out, Cell{ID: "c" + itoa(i), Index: i, Text: t, Facts: analysis.ParseCell(t)})
	}
	return out
}

// applied returns the cell text after a candidate's edits (target edits only).
func applied(t *testing.T, in Input, c Candidate) string {
	t.Helper()
	texts := map[string]string{"": in.Text}
	for _, h := range in.History {
		texts[h.ID] = h.Text
	}
	after, err := ApplyFix(texts, "", c.Fix)
	if err != nil {
		t.Fatalf("apply %q: %v", c.Fix.Title, err)
	}
	for id, tx := range after {
		if id != "" {
			return id + ":" + tx
		}
	}
	return after[""]
}

func TestCandidates(t *testing.T) {
	scaler := facts.Value{Name: "sc", Exists: true, Kind: facts.KindEstimator, Estimator: &facts.Estimator{Class: "StandardScaler", Methods: []string{"transform"}}}
	model := facts.Value{Name: "model", Exists: true, Kind: facts.KindEstimator, Estimator: &facts.Estimator{Class: "LinearRegression", Fitted: true, FeatureNamesIn: []string{"a", "b"}, Methods: []string{"predict"}}}
	tests := []struct {
		name string
		in   Input
		want string // the text after the first candidate; "" means no candidate
	}{
		{"renamed column", func() Input {
			in := input("print(houses.groupby('town')['sqft'].mean())\n", "KeyError", "'sqft'", 0, frame("houses", "town", "area"))
			in.History = hist("houses = houses.rename(columns={'sqft': 'area'})")
			return in
		}(), "print(houses.groupby('town')['area'].mean())\n"},
		{"column case", input("df['age'].mean()\n", "KeyError", "'age'", 0, frame("df", "Age", "Name")), "df['Age'].mean()\n"},
		{"merge suffix", input("m['price'].sum()\n", "KeyError", "'price'", 0, frame("m", "price_x", "price_y")), "m['price_x'].sum()\n"},
		{"no such column", input("df['bedrooms']\n", "KeyError", "'bedrooms'", 0, frame("df", "Age")), ""},
		{"attribute column", input("df.Sqft.mean()\n", "AttributeError", "'DataFrame' object has no attribute 'Sqft'", 0, frame("df", "sqft")), "df.sqft.mean()\n"},
		{"misspelled name", input("modle.fit(X)\n", "NameError", "name 'modle' is not defined", 0, facts.Value{Name: "model", Exists: true}), "model.fit(X)\n"},
		{"name defined by a cell that has not run", func() Input {
			in := input("model.fit(X_train_s, y)\n", "NameError", "name 'X_train_s' is not defined", 0, facts.Value{Name: "X_train", Exists: true})
			in.Unrun = map[string]bool{"X_train_s": true}
			return in
		}(), ""},
		{"missing imports", input("a = np.ones(3)\nsns.histplot(a)\n", "NameError", "name 'np' is not defined", 0), "import numpy as np\nimport seaborn as sns\na = np.ones(3)\nsns.histplot(a)\n"},
		{"not fitted transform on training data", input("Z = sc.transform(X_train)\n", "NotFittedError", "This StandardScaler instance is not fitted yet.", 0, scaler, frame("X_train", "a")), "Z = sc.fit_transform(X_train)\n"},
		{"not fitted, fit on training data first", input("Z = sc.transform(X_test)\n", "NotFittedError", "This StandardScaler instance is not fitted yet.", 0, scaler, frame("X_train", "a"), frame("X_test", "a")), "sc.fit(X_train)\nZ = sc.transform(X_test)\n"},
		{"not fitted, nothing to fit on", input("Z = sc.transform(A)\n", "NotFittedError", "This StandardScaler instance is not fitted yet.", 0, scaler), ""},
		{"linear in_features in the cell", input("net = nn.Sequential(nn.Linear(4, 1))\nout = net(X)\n", "RuntimeError", "mat1 and mat2 shapes cannot be multiplied (8x3 and 4x1)", 1), "net = nn.Sequential(nn.Linear(3, 1))\nout = net(X)\n"},
		{"linear in_features in an earlier cell", func() Input {
			in := input("out = model(X)\n", "RuntimeError", "mat1 and mat2 shapes cannot be multiplied (8x3 and 4x1)", 0)
			in.History = hist("X = torch.randn(8, 3)", "class Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(4, 1)")
			return in
		}(), "c1:class Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(3, 1)"},
		{"reshape infers a dimension", input("b = a.reshape(5, 2)\n", "ValueError", "cannot reshape array of size 12 into shape (5,2)", 0), "b = a.reshape(-1, 2)\n"},
		{"reshape no divisor", input("b = a.reshape(5, 5)\n", "ValueError", "cannot reshape array of size 12 into shape (5,5)", 0), ""},
		{"view infers", input("y = x.view(3, 5)\n", "RuntimeError", "shape '[3, 5]' is invalid for input of size 24", 0), "y = x.view(3, -1)\n"},
		{"select fit columns", input("p = model.predict(test)\n", "ValueError", "The feature names should match those that were passed during fit.", 0, model, frame("test", "b", "a")), "p = model.predict(test[model.feature_names_in_])\n"},
		{"no zero fill of a real feature", input("p = model.predict(test)\n", "ValueError", "The feature names should match those that were passed during fit.", 0, model, frame("test", "a")), ""},
		{"float tensor", input("out = layer(X)\n", "RuntimeError", "mat1 and mat2 must have the same dtype", 0, facts.Value{Name: "X", Exists: true, Kind: facts.KindTensor}), "out = layer(X.float())\n"},
		{"long target", input("loss = crit(out, y)\n", "RuntimeError", "expected scalar type Long but found Float", 0, facts.Value{Name: "out", Exists: true, Kind: facts.KindTensor}, facts.Value{Name: "y", Exists: true, Kind: facts.KindTensor}), "loss = crit(out, y.long())\n"},
		{"to_numeric", func() Input {
			v := facts.Value{Name: "df", Exists: true, Kind: facts.KindDataFrame, Columns: []facts.Column{{Name: "Charges", Dtype: "object", NonNumericSample: []string{"$1,234.50"}}}}
			return input("r = df['Charges'] / 12\n", "TypeError", "unsupported operand type(s) for /: 'str' and 'int'", 0, v)
		}(), "r = pd.to_numeric(df['Charges'].str.replace(r\"[$,€£% ]\", \"\", regex=True), errors='coerce') / 12\n"},
		{"int64 cast of NaN", input("df['G'] = df['G'].astype(int)\n", "IntCastingNaNError", "Cannot convert non-finite values (NA or inf) to integer", 0), "df['G'] = df['G'].astype('Int64')\n"},
		{"text into fit", func() Input {
			v := frame("X", "tenure")
			v.Columns = append(v.Columns, facts.Column{Name: "Contract", Dtype: "object"})
			return input("model.fit(X, y)\n", "ValueError", "could not convert string to float: 'm'", 0, v)
		}(), "model.fit(pd.get_dummies(X), y)\n"},
		{"NaN into fit", input("LinearRegression().fit(X, y)\n", "ValueError", "Input X contains NaN.", 0, frame("X", "a")), "LinearRegression().fit(X.fillna(X.median(numeric_only=True)), y)\n"},
		{"NaN in an array", input("LinearRegression().fit(X, y)\n", "ValueError", "Input X contains NaN.", 0, facts.Value{Name: "X", Exists: true, Kind: facts.KindNDArray}), ""},
		{"1-D X column", input("model.fit(df['x'], y)\n", "ValueError", "Expected 2D array, got 1D array instead", 0, frame("df", "x")), "model.fit(df[['x']], y)\n"},
		{"matching split", input("m = LinearRegression().fit(X_train, y)\n", "ValueError", "Found input variables with inconsistent numbers of samples: [7, 10]", 0,
			facts.Value{Name: "X_train", Exists: true, Shape: []int{7, 2}}, facts.Value{Name: "y", Exists: true, Shape: []int{10}}, facts.Value{Name: "y_train", Exists: true, Shape: []int{7}}), "m = LinearRegression().fit(X_train, y_train)\n"},
		{"renamed keyword from the table", input("enc = OneHotEncoder(sparse=False)\n", "TypeError", "__init__() got an unexpected keyword argument 'sparse'", 0), "enc = OneHotEncoder(sparse_output=False)\n"},
		{"renamed keyword from the signature", input("f(1, scal=2)\n", "TypeError", "f() got an unexpected keyword argument 'scal'", 0, facts.Value{Name: "f", Exists: true, Signature: "(values, scale=1.0, shift=0.0)"}), "f(1, scale=2)\n"},
		{"inplace misuse in an earlier cell", func() Input {
			in := input("print(df.shape)\n", "AttributeError", "'NoneType' object has no attribute 'shape'", 0)
			in.History = hist("df = pd.read_csv('x.csv')\ndf = df.dropna(inplace=True)")
			return in
		}(), "c0:df = pd.read_csv('x.csv')\ndf = df.dropna()"},
		{"column of the merged frame", input("by = orders.groupby('region')['amount'].sum()\n", "KeyError", "'region'", 0,
			frame("orders", "cust_id", "amount"), frame("full", "cust_id", "amount", "region")), "by = full.groupby('region')['amount'].sum()\n"},
		{"merge on differently named keys", input("full = orders.merge(customers, on=\"customer_id\")\n", "KeyError", "'customer_id'", 0,
			frame("orders", "cust_id", "amount"), frame("customers", "customer_id", "region")), "full = orders.merge(customers, left_on=\"cust_id\", right_on=\"customer_id\")\n"},
		{"column dropped in an earlier cell", func() Input {
			in := input("hood = pd.get_dummies(df['Neighborhood'])\n", "KeyError", "'Neighborhood'", 0, frame("df", "Price"))
			in.History = hist("df = pd.read_csv('h.csv')", "df = df.drop(columns=['Id', 'Neighborhood'])")
			return in
		}(), "c1:df = df.drop(columns=['Id'])"},
		{"column dropped alone is not kept", func() Input {
			in := input("hood = df['Neighborhood']\n", "KeyError", "'Neighborhood'", 0, frame("df", "Price"))
			in.History = hist("df = df.drop(columns=['Neighborhood'])")
			return in
		}(), ""},
		{"str accessor on numbers", input("s = df['rating'].str.len()\n", "AttributeError", "Can only use .str accessor with string values!", 0, frame("df", "rating")), "s = df['rating'].astype(str).str.len()\n"},
		{"dummies of a split", input("p = model.predict(pd.get_dummies(X_test))\n", "ValueError", "The feature names should match those that were passed during fit.", 0,
			facts.Value{Name: "model", Exists: true, Kind: facts.KindEstimator, Estimator: &facts.Estimator{Fitted: true, FeatureNamesIn: []string{"c_a", "c_b"}}}),
			"p = model.predict(pd.get_dummies(X_test).reindex(columns=model.feature_names_in_, fill_value=0))\n"},
		{"broadcast keeps the reduced axis", input("Xc = X - X.mean(axis=1)\n", "ValueError", "operands could not be broadcast together with shapes (5,4) (5,) ", 0), "Xc = X - X.mean(axis=1, keepdims=True)\n"},
		{"concatenate a 1-D array as a column", input("t = np.concatenate([X, y], axis=1)\n", "ValueError", "all the input arrays must have same number of dimensions, but the array at index 0 has 2 dimension(s) and the array at index 1 has 1 dimension(s)", 0), "t = np.concatenate([X, y[:, None]], axis=1)\n"},
		{"matmul transposes an operand", input("h = W @ X\n", "ValueError", "matmul: Input operand 1 has a mismatch in its core dimension 0", 0), "h = W.T @ X\n"},
		{"SVC built with probability", func() Input {
			in := input("s = svc.predict_proba(X_test)\n", "AttributeError", "predict_proba is not available when  probability=False", 0)
			in.History = hist("svc = SVC(kernel='rbf')\nsvc.fit(X_train, y_train)")
			return in
		}(), "c0:svc = SVC(kernel='rbf', probability=True)\nsvc.fit(X_train, y_train)"},
		{"metric on scores", input("print(accuracy_score(y_test, proba))\n", "ValueError", "Classification metrics can't handle a mix of binary and continuous-multioutput targets", 0), "print(accuracy_score(y_test, proba.argmax(axis=1)))\n"},
		{"numbers written with symbols", input("df['Installs'] = df['Installs'].astype('int')\n", "ValueError", "invalid literal for int() with base 10: '10,000+'", 0),
			"df['Installs'] = df['Installs'].str.replace(r\"[^0-9.\\-]\", \"\", regex=True).astype('int')\n"},
		{"conv in_channels in an earlier cell", func() Input {
			in := input("out = conv(imgs)\n", "RuntimeError", "Given groups=1, weight of size [8, 3, 3, 3], expected input[16, 1, 12, 12] to have 3 channels, but got 1 channels instead", 0)
			in.History = hist("conv = nn.Sequential(nn.Conv2d(3, 8, kernel_size=3), nn.ReLU())")
			return in
		}(), "c0:conv = nn.Sequential(nn.Conv2d(1, 8, kernel_size=3), nn.ReLU())"},
		{"axis one past the last", input("e = (X ** 2).sum(axis=2)\n", "AxisError", "axis 2 is out of bounds for array of dimension 2", 0), "e = (X ** 2).sum(axis=1)\n"},
		{"index counted from 1", input("s = X[:, 8]\n", "IndexError", "index 8 is out of bounds for axis 1 with size 8", 0), "s = X[:, 7]\n"},
		{"index far out of bounds", input("s = X[:, 20]\n", "IndexError", "index 20 is out of bounds for axis 1 with size 8", 0), ""},
		{"fit's return value assigned to the data", func() Input {
			in := input("knn.fit(X_train, y_train)\n", "TypeError", "float() argument must be a string or a real number, not 'StandardScaler'", 0,
				facts.Value{Name: "X_train", Exists: true, Kind: facts.KindEstimator})
			in.History = hist("X_train, y_train = split()", "scaler = StandardScaler()\nX_train = scaler.fit(X_train)")
			return in
		}(), "c1:scaler = StandardScaler()\nX_train = scaler.fit_transform(X_train)"},
		{"NaN in a frame the cell builds and uses again", input("X = df[['a', 'b']]\nclf.fit(X, y)\nclf.score(X, y)\n", "ValueError", "Input X contains NaN.", 1),
			"X = df[['a', 'b']]\nX = X.fillna(X.median(numeric_only=True))\nclf.fit(X, y)\nclf.score(X, y)\n"},
		{"unrelated exception", input("x = 1 / 0\n", "ZeroDivisionError", "division by zero", 0), ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cs := Candidates(tc.in, nil)
			if tc.want == "" {
				if len(cs) > 0 {
					t.Fatalf("want no candidate, got %q: %q", cs[0].Fix.Title, applied(t, tc.in, cs[0]))
				}
				return
			}
			if len(cs) == 0 {
				t.Fatalf("no candidate, want %q", tc.want)
			}
			if got := applied(t, tc.in, cs[0]); got != tc.want {
				var all []string
				for _, c := range cs {
					all = append(all, c.Fix.Title)
				}
				t.Errorf("first candidate %q gives\n%q\nwant\n%q\n(all: %q)", cs[0].Fix.Title, got, tc.want, all)
			}
			for _, c := range cs {
				if c.Keeps == "" || c.Family == "" || c.Fix.Title == "" {
					t.Errorf("candidate %+v lacks its family, title or intent", c)
				}
			}
		})
	}
}

func TestIntentKept(t *testing.T) {
	in := input("x = df['a'].sum()\nprint(x)\n", "KeyError", "'a'", 0, frame("df", "A"))
	r := func(l, s, e int) finding.Range {
		return finding.Range{Start: finding.Position{Line: l, Character: s}, End: finding.Position{Line: l, Character: e}}
	}
	tests := []struct {
		name  string
		edits []finding.Edit
		want  bool
	}{
		{"rename the key", []finding.Edit{{Range: r(0, 7, 10), NewText: "'A'"}}, true},
		{"delete the failing statement", []finding.Edit{{Range: r(0, 0, 17), NewText: ""}}, false},
		{"comment it out", []finding.Edit{{Range: r(0, 0, 0), NewText: "# "}}, false},
		{"wrap in try", []finding.Edit{{Range: r(0, 0, 17), NewText: "try:\n    x = df['a'].sum()\nexcept KeyError:\n    x = 0"}}, false},
		{"data replaced by a constant", []finding.Edit{{Range: r(0, 4, 6), NewText: "0"}}, false},
		{"suppress", []finding.Edit{{Range: r(0, 0, 0), NewText: "with contextlib.suppress(KeyError):\n    "}}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := IntentKept(in, finding.Fix{Title: tc.name, Edits: tc.edits}); got != tc.want {
				t.Errorf("IntentKept = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestApplyEdits(t *testing.T) {
	text := "a = 1\nb = 'é' + c\n"
	got, err := ApplyEdits(text, []finding.Edit{
		{Range: finding.Range{Start: finding.Position{Line: 1, Character: 10}, End: finding.Position{Line: 1, Character: 11}}, NewText: "d"},
		{Range: finding.Range{Start: finding.Position{Line: 0, Character: 0}, End: finding.Position{Line: 0, Character: 0}}, NewText: "import x\n"},
	})
	if err != nil || got != "import x\na = 1\nb = 'é' + d\n" {
		t.Errorf("ApplyEdits = %q, %v", got, err)
	}
	if _, err := ApplyEdits(text, []finding.Edit{{Range: finding.Range{Start: finding.Position{Line: 9}}, NewText: "x"}}); err == nil {
		t.Error("an edit outside the cell applied")
	}
	over := finding.Range{Start: finding.Position{Line: 0, Character: 0}, End: finding.Position{Line: 0, Character: 3}}
	if _, err := ApplyEdits(text, []finding.Edit{{Range: over, NewText: "x"}, {Range: over, NewText: "y"}}); err == nil {
		t.Error("overlapping edits applied")
	}
}

func TestNeeds(t *testing.T) {
	model := facts.Value{Name: "model", Exists: true, Kind: facts.KindEstimator, Estimator: &facts.Estimator{Class: "LinearRegression", Fitted: true, FeatureNamesIn: []string{"a", "b", "c", "d"}}}
	tests := []struct {
		in   Input
		want string
	}{
		{input("p = model.predict(X)\n", "ValueError", "X has 3 features, but LinearRegression is expecting 4 features as input.", 0, model, frame("X", "a", "b", "c")), "needed: 4 features, as LinearRegression was fitted with; got: 3"},
		{input("p = model.predict(X)\n", "ValueError", "X has 3 features, but LinearRegression is expecting 4 features as input.", 0, model, frame("X", "a", "b", "c")), "columns model saw at fit time: [a, b, c, d]"},
		{input("out = net(X)\n", "RuntimeError", "mat1 and mat2 shapes cannot be multiplied (8x3 and 4x1)", 0), "needed: 4 input features per sample (the layer's in_features); got: 3"},
		{input("h = X @ W\n", "RuntimeError", "mat1 and mat2 shapes cannot be multiplied (8x3 and 4x3)", 0), "needed: the second matrix to have as many rows as the first has columns (3); got: 4 (8x3 and 4x3)"},
		{input("p = model.predict(row)\n", "ValueError", "Expected 2D array, got 1D array instead:\narray=[1. 2. 3.].\nReshape your data", 0, facts.Value{Name: "model", Exists: true, Kind: facts.KindEstimator, Estimator: &facts.Estimator{Fitted: true, NFeaturesIn: intp(4)}}), "needed: a 2-D X of 4 features per sample (model.n_features_in_); got: a 1-D array of 3 values"},
		{input("X = np.hstack([a, b])\n", "ValueError", "all the input array dimensions except for the concatenation axis must match exactly, but along dimension 0, the array at index 0 has size 80 and the array at index 1 has size 20", 0), "needed: arrays of the same size on every axis but the one they are joined along; got: sizes 80 and 20 along axis 0"},
		{input("b = a.reshape(5, 2)\n", "ValueError", "cannot reshape array of size 12 into shape (5,2)", 0), "needed: 10 elements for shape (5, 2); got: 12"},
		{input("loss = crit(net(X), y)\n", "IndexError", "Target 5 is out of bounds.", 0, facts.Value{Name: "net", Exists: true, Module: &facts.Module{Last: &facts.Layer{OutFeatures: intp(3)}}}), "needed: class labels in [0, 2] (the model outputs 3 classes); got: a target of 5"},
	}
	for _, tc := range tests {
		got := Needs(tc.in)
		if !strings.Contains(strings.Join(got, "\n"), tc.want) {
			t.Errorf("Needs(%q) = %q, want %q", tc.in.Message, got, tc.want)
		}
	}
}

func TestNearest(t *testing.T) {
	pool := []string{"YearBuilt", "Tenure", "price_x", "price_y", "GarageCars"}
	for wrong, want := range map[string]string{"YearBuild": "YearBuilt", "tenure": "Tenure", "price": "price_x", "Garage": ""} {
		got := nearest(wrong, pool, 1)
		if (want == "" && len(got) > 0) || (want != "" && (len(got) == 0 || got[0] != want)) {
			t.Errorf("nearest(%q) = %q, want %q", wrong, got, want)
		}
	}
}
