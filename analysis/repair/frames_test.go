package repair

import (
	"strings"
	"testing"

	"github.com/premortem/premortem/facts"
)

// TestFrameRepairs covers the data, column, estimator and dtype families: want is the text
// one candidate must produce (a history cell's text is prefixed with its ID and ":"); ""
// means no candidate at all may be proposed (no safe repair exists).
func TestFrameRepairs(t *testing.T) {
	textX := facts.Value{Name: "x", Exists: true, Kind: facts.KindNDArray, Dtype: "object", Shape: []int{20, 1}}
	textY := facts.Value{Name: "y", Exists: true, Kind: facts.KindNDArray, Dtype: "object", Shape: []int{20, 1}}
	pd := facts.Value{Name: "pd", Exists: true, Kind: "module"}
	scaler := facts.Value{Name: "scaler", Exists: true, Kind: facts.KindEstimator, Estimator: &facts.Estimator{Class: "StandardScaler", Fitted: true, FeatureNamesIn: []string{"a", "b", "c"}}}
	numFrame := frame("df", "month", "people")
	numFrame.Columns[0].Dtype = "int64"
	tests := []struct {
		name string
		in   Input
		want string
	}{
		{"unit in the label, from the shadow run's crash keys", func() Input {
			in := input("clean = raw[raw[\"Total Gross (millions)\"] != \"$0\"]\n", "KeyError", "'Total Gross (millions)'", 0)
			in.CrashKeys = []facts.CrashKeys{{Expr: "raw", Kind: "dataframe", Keys: []any{"Title", "Total_Gross"}, Total: 2}}
			return in
		}(), "clean = raw[raw[\"Total_Gross\"] != \"$0\"]\n"},
		{"unit in the label, from the inspection", input("df['Price [USD]'].mean()\n", "KeyError", "'Price [USD]'", 0, frame("df", "price", "Age")), "df['price'].mean()\n"},
		{"two columns share the words: a guess, not offered", input("df['Gross (USD)'].mean()\n", "KeyError", "'Gross (USD)'", 0, frame("df", "gross", "Gross", "GROSS")), ""},
		{"another feature is no repair", input("df.loc[:, ['GarageArea']]\n", "KeyError", "\"['GarageArea'] not in index\"", 0, frame("df", "GarageCars")), ""},
		{"repeated drop of rows", func() Input {
			in := input("df.drop([10472],inplace = True);\n", "KeyError", "'[10472] not found in axis'", 0, frame("df", "App"))
			in.History = hist("df = pd.read_csv('x.csv')", "df.drop([10472],inplace = True);")
			return in
		}(), "df.drop([10472],inplace = True, errors='ignore');\n"},
		{"repeated drop of a column", func() Input {
			in := input("df = df.drop([\"Cabin\"], axis=1)\n", "KeyError", "\"['Cabin'] not found in axis\"", 0, frame("df", "Age"))
			in.History = hist("df = df.drop(['Cabin'], axis=1)")
			return in
		}(), "df = df.drop([\"Cabin\"], axis=1, errors=\"ignore\")\n"},
		{"a drop the history never made is a typo, not ignored", input("df = df.drop(['Cabn'], axis=1)\n", "KeyError", "\"['Cabn'] not found in axis\"", 0, frame("df", "Cabin2")), ""},
		{"'nan' text cast to int", input("g['year'] = g['released'].apply(lambda x: str(x)[:4]).astype('int')\n", "ValueError", "invalid literal for int() with base 10: 'nan'", 0, frame("g", "released")),
			"g['year'] = g['released'].apply(lambda x: str(x)[:4]).astype(float).astype('Int64')\n"},
		{"other text cast to int is not hidden", input("g['n'] = g['s'].astype(int)\n", "ValueError", "invalid literal for int() with base 10: 'abc'", 0, frame("g", "s")), ""},
		{"text array and text labels into a regressor", input("reg.fit(x,y)\n", "ValueError", "could not convert string to float: ' Private'", 0, textX, textY, pd),
			"reg.fit(pd.get_dummies(pd.DataFrame(x)),pd.factorize(y.ravel(), sort=True)[0])\n"},
		{"text array into a predict: encoding it alone would not match fit", input("reg.predict(x)\n", "ValueError", "could not convert string to float: ' Private'", 0, textX, pd), ""},
		{"split encoded on its own", func() Input {
			in := input("X_test = pd.get_dummies(test[cols]).values\npreds = model.predict(X_test)\n", "ValueError", "X has 5 features, but Ridge is expecting 7 features as input.", 1, pd)
			in.History = hist("X_train = pd.get_dummies(train[cols]).values\nmodel = Ridge().fit(X_train, y)")
			return in
		}(), "X_test = pd.get_dummies(test[cols]).reindex(columns=pd.get_dummies(train[cols]).columns, fill_value=0).values\npreds = model.predict(X_test)\n"},
		{"split encoded on its own, no training twin", input("X_test = pd.get_dummies(test[cols]).values\npreds = model.predict(X_test)\n", "ValueError", "X has 5 features, but Ridge is expecting 7 features as input.", 1, pd), ""},
		{"fewer of the scaler's columns selected", input("X_new = df[[\"a\", \"b\"]].values\nX_s = scaler.transform(X_new)\n", "ValueError", "X has 2 features, but StandardScaler is expecting 3 features as input.", 1, scaler, frame("df", "a", "b", "c", "d")),
			"X_new = df[scaler.feature_names_in_].values\nX_s = scaler.transform(X_new)\n"},
		{"the frame lacks a fit column", input("X_new = df[[\"a\", \"b\"]].values\nX_s = scaler.transform(X_new)\n", "ValueError", "X has 2 features, but StandardScaler is expecting 3 features as input.", 1, scaler, frame("df", "a", "b")), ""},
		{"solver that supports the penalty", input("m = LogisticRegression(max_iter=1000, solver='liblinear', penalty='elasticnet')\nm.fit(X, y)\n", "ValueError", "Only 'saga' solver supports elasticnet penalty, got solver=liblinear.", 1),
			"m = LogisticRegression(max_iter=1000, solver='saga', penalty='elasticnet', l1_ratio=0.5)\nm.fit(X, y)\n"},
		{"default solver and an l1 penalty, built in an earlier cell", func() Input {
			in := input("m.fit(X, y)\n", "ValueError", "Solver lbfgs supports only 'l2' or 'none' penalties, got l1 penalty.", 0)
			in.History = hist("m = LogisticRegression(penalty=\"l1\")")
			return in
		}(), "c0:m = LogisticRegression(penalty=\"l1\", solver=\"liblinear\")"},
		{"a penalty no solver takes", input("m = LogisticRegression(penalty='l3')\nm.fit(X, y)\n", "ValueError", "Solver lbfgs supports only 'l2' or 'none' penalties, got l3 penalty.", 1), ""},
		{"numeric column compared with text, in an earlier cell", func() Input {
			in := input("x_train, x_test = train_test_split(x, test_size=0.2)\n", "ValueError", "With n_samples=0, test_size=0.2 and train_size=None, the resulting train set will be empty.", 0, numFrame)
			in.History = hist("sub = df[df['month'] =='8']\nx = sub[['people']].values")
			return in
		}(), "c0:sub = df[df['month'] ==8]\nx = sub[['people']].values"},
		{"text column compared with text: the emptiness has another cause", func() Input {
			in := input("x_train, x_test = train_test_split(x, test_size=0.2)\n", "ValueError", "With n_samples=0, test_size=0.2 and train_size=None, the resulting train set will be empty.", 0, frame("df", "people"))
			in.Inspection.Values["df"].Columns[0].Dtype = "object"
			in.History = hist("sub = df[df['people'] =='8']\nx = sub[['people']].values")
			return in
		}(), ""},
		{"attribute of a frame the cell built", func() Input {
			in := input("t = pd.DataFrame(raw)\nt.Workclas.value_counts()\n", "AttributeError", "'DataFrame' object has no attribute 'Workclas'", 1)
			in.CrashKeys = []facts.CrashKeys{{Expr: "t", Kind: "dataframe", Keys: []any{"Workclass", "age"}, Total: 2}}
			return in
		}(), "t = pd.DataFrame(raw)\nt.Workclass.value_counts()\n"},
		{"reshape of a Series", input("x = df.age.reshape(-1, 1)\n", "AttributeError", "'Series' object has no attribute 'reshape'", 0, frame("df", "age")), "x = df.age.to_numpy().reshape(-1, 1)\n"},
		{"values of an array", input("Xs = scaler.fit_transform(X)\nm.fit(Xs.values, y)\n", "AttributeError", "'numpy.ndarray' object has no attribute 'values'", 1), "Xs = scaler.fit_transform(X)\nm.fit(Xs, y)\n"},
		{"pandas removed as_matrix", input("a = df.as_matrix()\n", "AttributeError", "'DataFrame' object has no attribute 'as_matrix'", 0, frame("df", "age")), "a = df.to_numpy()\n"},
		{"an attribute no object has", input("a = df.frobnicate()\n", "AttributeError", "'DataFrame' object has no attribute 'frobnicate'", 0, frame("df", "age")), ""},
		{"labels stored as objects", input("clf.fit(X, y)\n", "ValueError", "Unknown label type: 'unknown'", 0, facts.Value{Name: "y", Exists: true, Kind: facts.KindNDArray, Dtype: "object", Shape: []int{4}}), "clf.fit(X, y.astype(float))\n"},
		{"labels of a known numeric dtype are not the cause", input("clf.fit(X, y)\n", "ValueError", "Unknown label type: 'unknown'", 0, facts.Value{Name: "y", Exists: true, Kind: facts.KindNDArray, Dtype: "int64", Shape: []int{4}}), ""},
		{"scalars concatenated", input("def load(ws):\n    return np.concatenate(ws)\nw = load(x)\n", "ValueError", "zero-dimensional arrays cannot be concatenated", 2),
			"def load(ws):\n    return np.concatenate([np.atleast_1d(a) for a in ws])\nw = load(x)\n"},
		{"a literal list of scalars is the user's to write", input("w = np.concatenate([1, 2])\n", "ValueError", "zero-dimensional arrays cannot be concatenated", 0), ""},
		{"one-column array indexed by name", input("check(train['ActivePower'])\n", "IndexError", "only integers, slices (`:`), ellipsis (`...`), numpy.newaxis (`None`) and integer or boolean arrays are valid indices", 0, facts.Value{Name: "train", Exists: true, Kind: facts.KindNDArray, Shape: []int{40, 1}}),
			"check(train[:, 0])\n"},
		{"several columns: the name says not which", input("check(train['ActivePower'])\n", "IndexError", "only integers, slices (`:`), ellipsis (`...`), numpy.newaxis (`None`) and integer or boolean arrays are valid indices", 0, facts.Value{Name: "train", Exists: true, Kind: facts.KindNDArray, Shape: []int{40, 3}}), ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cs := Candidates(tc.in, nil)
			var got []string
			for _, c := range cs {
				got = append(got, applied(t, tc.in, c))
			}
			if tc.want == "" {
				if len(cs) > 0 {
					t.Fatalf("want no candidate, got %q", got)
				}
				return
			}
			for _, g := range got {
				if g == tc.want {
					return
				}
			}
			t.Fatalf("no candidate gives\n%s\ngot:\n%s", tc.want, strings.Join(got, "\n---\n"))
		})
	}
}
