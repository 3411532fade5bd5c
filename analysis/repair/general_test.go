package repair

import (
	"testing"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/facts"
	"github.com/premortem/premortem/finding"
)

// TestGeneralOperators checks each general operator on a cell: the first candidate it
// makes, applied, must give want; "" means it makes none.
func TestGeneralOperators(t *testing.T) {
	df := facts.Value{Exists: true, Kind: facts.KindDataFrame, Columns: []facts.Column{{Name: "Sex"}, {Name: "Survived"}}}
	s := facts.Value{Exists: true, Kind: facts.KindSeries}
	tests := []struct {
		name      string
		gen       func(*Input) []Candidate
		text      string
		line      int
		exception string
		message   string
		values    map[string]facts.Value
		want      string
	}{
		{"int plus text", numberOperandGen, "t = 0\nfor r in rows:\n    t = t + r['p']", 2, "TypeError", "unsupported operand type(s) for +: 'int' and 'str'", nil,
			"t = 0\nfor r in rows:\n    t = t + int(r['p'])"},
		{"augmented", numberOperandGen, "t += r['p']", 0, "TypeError", "unsupported operand type(s) for +=: 'int' and 'str'", nil, ""},
		{"augmented op", numberOperandGen, "t += r['p']", 0, "TypeError", "unsupported operand type(s) for +: 'int' and 'str'", nil, "t += int(r['p'])"},
		{"compare in comprehension", numberOperandGen, "a = [x for x in ages if x > 18]", 0, "TypeError", "'>' not supported between instances of 'str' and 'int'", nil,
			"a = [x for x in ages if int(x) > 18]"},
		{"text both sides", numberOperandGen, "s = a + b", 0, "TypeError", "unsupported operand type(s) for +: 'list' and 'str'", nil, ""},
		{"int of fraction", numberOperandGen, "n = int(s)", 0, "ValueError", "invalid literal for int() with base 10: '3.5'", nil, "n = int(float(s))"},
		{"int of word", numberOperandGen, "n = int(s)", 0, "ValueError", "invalid literal for int() with base 10: 'abc'", nil, ""},
		{"floor division", integerOperandGen, "m = v[len(v) / 2]", 0, "TypeError", "list indices must be integers or slices, not float", nil, "m = v[len(v) // 2]"},
		{"int of index", integerOperandGen, "m = v[k]", 0, "TypeError", "list indices must be integers or slices, not float", nil, "m = v[int(k)]"},
		{"range of float", integerOperandGen, "for i in range(n):\n    pass", 0, "TypeError", "'float' object cannot be interpreted as an integer", nil, "for i in range(int(n)):\n    pass"},
		{"global", globalDeclGen, "def bump():\n    count += 1\n    return count", 1, "UnboundLocalError", "cannot access local variable 'count' where it is not associated with a value",
			map[string]facts.Value{"count": {Exists: true, Kind: facts.KindInt}}, "def bump():\n    global count\n    count += 1\n    return count"},
		{"global of a local", globalDeclGen, "def f(xs):\n    if xs:\n        t = 1\n    return t", 3, "UnboundLocalError", "cannot access local variable 't' where it is not associated with a value", nil, ""},
		{"missing return", missingReturnGen, "def clean(df):\n    df = df.dropna()\n\nd = clean(raw)\nd['a']", 4, "TypeError", "'NoneType' object is not subscriptable", nil,
			"def clean(df):\n    df = df.dropna()\n    return df\n\nd = clean(raw)\nd['a']"},
		{"returns already", missingReturnGen, "def clean(df):\n    return None\n\nd = clean(raw)\nd['a']", 4, "TypeError", "'NoneType' object is not subscriptable", nil, ""},
		{"dict items", loopWalkGen, "for k, v in d:\n    print(k)", 0, "ValueError", "not enough values to unpack (expected 2, got 1)", map[string]facts.Value{"d": {Exists: true, Kind: facts.KindDict}},
			"for k, v in d.items():\n    print(k)"},
		{"list unpacked", loopWalkGen, "for k, v in d:\n    print(k)", 0, "ValueError", "not enough values to unpack (expected 2, got 1)", map[string]facts.Value{"d": {Exists: true, Kind: facts.KindList}}, ""},
		{"dict values", loopWalkGen, "for u in d:\n    print(u['n'])", 1, "TypeError", "string indices must be integers, not 'str'", nil, "for u in d.values():\n    print(u['n'])"},
		{"dict records by key", loopWalkGen, "for k in d:\n    rows.append((k, k['lr']))", 1, "TypeError", "string indices must be integers, not 'str'", nil, "for k in d:\n    rows.append((k, d[k]['lr']))"},
		{"range past end", loopWalkGen, "for i in range(len(x) + 1):\n    s = x[i]", 1, "IndexError", "list index out of range", nil, "for i in range(len(x)):\n    s = x[i]"},
		{"neighbour", loopWalkGen, "for i in range(len(x)):\n    s = x[i + 1] - x[i]", 1, "IndexError", "list index out of range", nil, "for i in range(len(x) - 1):\n    s = x[i + 1] - x[i]"},
		{"while", loopWalkGen, "while i <= len(x):\n    s = x[i]", 1, "IndexError", "list index out of range", nil, "while i < len(x):\n    s = x[i]"},
		{"instance", instanceCallGen, "m = Model.fit(X)", 0, "TypeError", "Model.fit() missing 1 required positional argument: 'x'", map[string]facts.Value{"Model": {Exists: true, Kind: facts.KindClass}}, "m = Model().fit(X)"},
		{"instance of module", instanceCallGen, "m = np.mean()", 0, "TypeError", "mean() missing 1 required positional argument: 'a'", map[string]facts.Value{"np": {Exists: true, Kind: facts.KindPyModule}}, ""},
		{"colon", syntaxSlipGen, "for c in cols\n    print(c)", 0, "SyntaxError", "invalid syntax", nil, "for c in cols:\n    print(c)"},
		{"print", syntaxSlipGen, "print 'n', n", 0, "SyntaxError", "invalid syntax", nil, "print('n', n)"},
		{"equals", syntaxSlipGen, "if m = 'a':\n    pass", 0, "SyntaxError", "invalid syntax", nil, "if m == 'a':\n    pass"},
		{"no slip", syntaxSlipGen, "x = = 3", 0, "SyntaxError", "invalid syntax", nil, ""},
		{"infer dimension", inferDimensionGen, "b = a.reshape(8, 28, 27)", 0, "ValueError", "cannot reshape array of size 6272 into shape (8,28,27)", nil, "b = a.reshape(8, 28, -1)"},
		{"view", inferDimensionGen, "b = t.view((4, 5))", 0, "RuntimeError", "shape '[4, 5]' is invalid for input of size 24", nil, "b = t.view((4, -1))"},
		{"shift", shiftDimensionGen, "f = conv(x.unsqueeze(0))", 0, "RuntimeError", "expected input to have 1 channels, but got 8 channels instead; size", nil, "f = conv(x.unsqueeze(1))"},
		{"str accessor", accessorGen, "c = df['City'].lower()", 0, "AttributeError", "'Series' object has no attribute 'lower'", nil, "c = df['City'].str.lower()"},
		{"dt accessor", accessorGen, "y = df['d'].year", 0, "AttributeError", "'Series' object has no attribute 'year'", nil, "y = df['d'].dt.year"},
		{"parse dates", accessorGen, "import pandas as pd\ny = df['d'].dt.year", 1, "AttributeError", "Can only use .dt accessor with datetimelike values", nil, "import pandas as pd\ny = pd.to_datetime(df['d']).dt.year"},
		{"unknown attribute", accessorGen, "c = df['City'].lowercase()", 0, "AttributeError", "'Series' object has no attribute 'lowercase'", nil, ""},
		{"apply axis", axisKeywordGen, "df['c'] = df.apply(lambda r: r['a'])", 0, "KeyError", "'a'", map[string]facts.Value{"df": df}, "df['c'] = df.apply(lambda r: r['a'], axis=1)"},
		{"drop axis", axisKeywordGen, "X = df.drop('id')", 0, "KeyError", "\"['id'] not found in axis\"", map[string]facts.Value{"df": df}, "X = df.drop('id', axis=1)"},
		{"drop has axis", axisKeywordGen, "X = df.drop('id', axis=0)", 0, "KeyError", "\"['id'] not found in axis\"", map[string]facts.Value{"df": df}, ""},
		{"seaborn column", dataColumnGen, "sns.barplot(x='sex', y='Survived', data=df)", 0, "ValueError", "Could not interpret input 'sex'", map[string]facts.Value{"df": df},
			"sns.barplot(x='Sex', y='Survived', data=df)"},
		{"seaborn no column", dataColumnGen, "sns.barplot(x='age', y='Survived', data=df)", 0, "ValueError", "Could not interpret input 'age'", map[string]facts.Value{"df": df}, ""},
		{"labels", predictedLabelsGen, "print(accuracy_score(y, clf.predict_proba(X)[:, 1]))", 0, "ValueError", "Classification metrics can't handle a mix of binary and continuous targets", nil,
			"print(accuracy_score(y, clf.predict(X)))"},
		{"axes grid", axesGridGen, "for i, c in enumerate(cols):\n    axes[i].hist(df[c])", 1, "AttributeError", "'numpy.ndarray' object has no attribute 'hist'",
			map[string]facts.Value{"axes": {Exists: true, Kind: facts.KindNDArray, Shape: []int{2, 2}}}, "for i, c in enumerate(cols):\n    axes.flat[i].hist(df[c])"},
		{"axes row", axesGridGen, "axes[i].hist(v)", 0, "AttributeError", "'numpy.ndarray' object has no attribute 'hist'", map[string]facts.Value{"axes": {Exists: true, Kind: facts.KindNDArray, Shape: []int{3}}}, ""},
		{"and", elementWiseGen, "sub = df[df['a'] > 1 and df['b'] > 1]", 0, "ValueError", "The truth value of a Series is ambiguous. Use a.empty, a.bool(), a.item(), a.any() or a.all().", nil,
			"sub = df[(df['a'] > 1) & (df['b'] > 1)]"},
		{"not", elementWiseGen, "sub = df[df.a > 1 or not df.c]", 0, "ValueError", "The truth value of a Series is ambiguous.", nil, "sub = df[(df.a > 1) | ~(df.c)]"},
		{"precedence", elementWiseGen, "sub = df[df['a'] > 1 & df['b'] < 3]", 0, "ValueError", "The truth value of a Series is ambiguous.", nil, "sub = df[(df['a'] > 1) & (df['b'] < 3)]"},
		{"if series", elementWiseGen, "if df['a'] > 1:\n    pass", 0, "ValueError", "The truth value of a Series is ambiguous.", nil, ""},
		{"cuda", deviceChoiceGen, "import torch\nx = x.cuda()", 1, "AssertionError", "Torch not compiled with CUDA enabled", nil, "import torch\nx = x.to(\"cuda\" if torch.cuda.is_available() else \"cpu\")"},
		{"cuda string", deviceChoiceGen, "import torch\ndevice = torch.device('cuda')", 1, "AssertionError", "Torch not compiled with CUDA enabled", nil,
			"import torch\ndevice = torch.device(\"cuda\" if torch.cuda.is_available() else \"cpu\")"},
		{"iloc", byPositionGen, "first = s[0]", 0, "KeyError", "0", map[string]facts.Value{"s": s}, "first = s.iloc[0]"},
		{"loc to iloc", byPositionGen, "first = s.loc[0]", 0, "KeyError", "0", map[string]facts.Value{"s": s}, "first = s.iloc[0]"},
		{"na in mask", nanMaskGen, "mr = df[df['name'].str.contains('Mr.')]", 0, "ValueError", "Cannot mask with non-boolean array containing NA / NaN values", nil,
			"mr = df[df['name'].str.contains('Mr.', na=False)]"},
		{"na in other mask", nanMaskGen, "sub = df[df['flag']]", 0, "ValueError", "Cannot mask with non-boolean array containing NA / NaN values", nil, "sub = df[df['flag'].fillna(False)]"},
		{"na given", nanMaskGen, "mr = df[df.n.str.contains('a', na=np.nan)]", 0, "ValueError", "Cannot mask with non-boolean array containing NA / NaN values", nil, "mr = df[df.n.str.contains('a', na=np.nan).fillna(False)]"},
		{"apply to column", applyEachGen, "def bucket(a):\n    if a > 60:\n        return 1\n    return 0\ndf['b'] = bucket(df['age'])", 4, "ValueError", "The truth value of a Series is ambiguous.",
			map[string]facts.Value{"df": df}, "def bucket(a):\n    if a > 60:\n        return 1\n    return 0\ndf['b'] = df['age'].apply(bucket)"},
		{"raised inside", applyEachGen, "def bucket(a):\n    if a > 60:\n        return 1\n    return 0\n\ndf['b'] = bucket(df['age'])", 1, "ValueError", "The truth value of a Series is ambiguous.",
			map[string]facts.Value{"df": df}, "def bucket(a):\n    if a > 60:\n        return 1\n    return 0\n\ndf['b'] = df['age'].apply(bucket)"},
		{"not our function", applyEachGen, "df['t'] = title(df, 'x')", 0, "ValueError", "The truth value of a Series is ambiguous.", map[string]facts.Value{"df": df}, ""},
		{"apply to rows", applyEachGen, "def kid(r):\n    return r['Age'] < 12 and r['Sex'] == 'f'\ndf['k'] = kid(df)", 2, "ValueError", "The truth value of a Series is ambiguous.", map[string]facts.Value{"df": df},
			"def kid(r):\n    return r['Age'] < 12 and r['Sex'] == 'f'\ndf['k'] = df.apply(kid, axis=1)"},
		{"apply with args", applyEachGen, "def cap(v, hi):\n    return hi if v > hi else v\ny = cap(s, 10)", 2, "ValueError", "The truth value of a Series is ambiguous.", map[string]facts.Value{"s": s},
			"def cap(v, hi):\n    return hi if v > hi else v\ny = s.apply(cap, args=(10,))"},
		{"merge key text", mergeKeysGen, "m = a.merge(b, on='id')", 0, "ValueError", "You are trying to merge on int64 and object columns. If you wish to proceed you should use pd.concat", nil,
			"m = a.merge(b.astype({\"id\": int}), on='id')"},
		{"merge left key text", mergeKeysGen, "m = pd.merge(a, b, left_on='k', right_on='id')", 0, "ValueError", "You are trying to merge on object and float64 columns.", nil,
			"m = pd.merge(a.astype({\"k\": float}), b, left_on='k', right_on='id')"},
		{"merge dates", mergeKeysGen, "m = a.merge(b, on='d')", 0, "ValueError", "You are trying to merge on datetime64[ns] and object columns.", nil, ""},
		{"metric on regression", predictedLabelsGen, "print(accuracy_score(y, pred))", 0, "ValueError", "Classification metrics can't handle a mix of binary and continuous targets", nil,
			"print(accuracy_score(y, (pred > 0.5).astype(int)))"},
		{"metric multiclass", predictedLabelsGen, "f = f1_score(y_true=y, y_pred=m.predict(X), average='macro')", 0, "ValueError", "Classification metrics can't handle a mix of multiclass and continuous targets", nil,
			"f = f1_score(y_true=y, y_pred=m.predict(X).round().astype(int), average='macro')"},
		{"metric on bound probabilities", predictedLabelsGen, "pred = clf.predict_proba(X)[:, 1]\nprint(accuracy_score(y, pred))", 1, "ValueError", "Classification metrics can't handle a mix of binary and continuous targets", nil,
			"pred = clf.predict_proba(X)[:, 1]\nprint(accuracy_score(y, clf.predict(X)))"},
		{"probabilities other lines read as scores", predictedLabelsGen, "p = clf.predict_proba(X)[:, 1]\nauc = roc_auc_score(y, p)\nacc = accuracy_score(y, p)", 0, "ValueError", "Classification metrics can't handle a mix of binary and continuous targets", nil, ""},
		{"metric continuous target", predictedLabelsGen, "print(accuracy_score(y, pred))", 0, "ValueError", "Classification metrics can't handle a mix of continuous and binary targets", nil, ""},
		{"dot transposes", productGen, "out = np.dot(W, x)", 0, "ValueError", "shapes (3,4) and (3,) not aligned: 4 (dim 1) != 3 (dim 0)", nil, "out = np.dot(W.T, x)"},
		{"dot second", productGen, "out = A.dot(B)", 0, "ValueError", "shapes (5,3) and (4,3) not aligned: 3 (dim 1) != 4 (dim 0)", nil, "out = A.dot(B.T)"},
		{"matmul by shapes", productGen, "h = X @ W", 0, "ValueError", "matmul: Input operand 1 has a mismatch in its core dimension 0, with gufunc signature (n?,k),(k,m?)->(n?,m?) (size 8 is different from 4)",
			map[string]facts.Value{"X": {Exists: true, Kind: facts.KindNDArray, Shape: []int{10, 4}}, "W": {Exists: true, Kind: facts.KindNDArray, Shape: []int{8, 4}}}, "h = X @ W.T"},
		{"rows from the cleaned frame", rowSourceGen, "X = clean[['a']]\ny = df['y']\nm.fit(X, y)", 2, "ValueError", "Found input variables with inconsistent numbers of samples: [29, 30]",
			map[string]facts.Value{"clean": {Exists: true, Kind: facts.KindDataFrame, Shape: []int{29, 2}}, "df": {Exists: true, Kind: facts.KindDataFrame, Shape: []int{30, 2}}},
			"X = clean[['a']]\ny = clean['y']\nm.fit(X, y)"},
		{"X from the bigger frame", rowSourceGen, "X = df.drop('y', axis=1)\ny = sub.y\nm.fit(X, y)", 2, "ValueError", "Found input variables with inconsistent numbers of samples: [30, 29]",
			map[string]facts.Value{"sub": {Exists: true, Kind: facts.KindDataFrame, Shape: []int{29, 2}}, "df": {Exists: true, Kind: facts.KindDataFrame, Shape: []int{30, 2}}},
			"X = sub.drop('y', axis=1)\ny = sub.y\nm.fit(X, y)"},
		{"same frame", rowSourceGen, "X = df[['a']]\ny = df['y'][:10]\nm.fit(X, y)", 2, "ValueError", "Found input variables with inconsistent numbers of samples: [30, 10]", nil, ""},
		{"rows by a loop counter", byPositionGen, "for i in range(len(df)):\n    out.append(df.loc[i, 'price'] / df.loc[i, 'sqft'])", 1, "KeyError", "4",
			map[string]facts.Value{"i": {Exists: true, Kind: facts.KindInt}}, "for i in range(len(df)):\n    out.append(df['price'].iloc[i] / df['sqft'].iloc[i])"},
		{"dict key", byPositionGen, "first = d[0]", 0, "KeyError", "0", map[string]facts.Value{"d": {Exists: true, Kind: facts.KindDict}}, ""},
		{"inplace keyword dropped", callShapeGen, "df = df.dropna(subset=['a'], inplace=True)\nprint(df.shape)", 1, "AttributeError", "'NoneType' object has no attribute 'shape'", nil,
			"df = df.dropna(subset=['a'])\nprint(df.shape)"},
		{"inplace keyword first", callShapeGen, "df = df.dropna(inplace=True, how='all')\nprint(df.shape)", 1, "AttributeError", "'NoneType' object has no attribute 'shape'", nil,
			"df = df.dropna(how='all')\nprint(df.shape)"},
		{"append assigned", callShapeGen, "cols = cols.append('b')\nfor c in cols:\n    print(c)", 1, "TypeError", "'NoneType' object is not iterable", nil,
			"cols.append('b')\nfor c in cols:\n    print(c)"},
		{"list keys made tuples", convertGen, "counts[[a, b]] = counts.get([a, b], 0) + 1", 0, "TypeError", "unhashable type: 'list'", nil,
			"counts[(a, b)] = counts.get((a, b), 0) + 1"},
		{"frame called", convertGen, "print(df('price').mean())", 0, "TypeError", "'DataFrame' object is not callable",
			map[string]facts.Value{"df": {Exists: true, Kind: facts.KindDataFrame}}, "print(df['price'].mean())"},
		{"lazy map bound", convertGen, "lens = map(len, docs)\nprint(sum(lens) / len(lens))", 1, "TypeError", "object of type 'map' has no len()",
			map[string]facts.Value{"lens": {Exists: true, Kind: facts.KindOther, Type: "builtins.map"}}, "lens = map(len, docs)\nprint(sum(list(lens)) / len(lens))"},
		{"images into a linear layer", flattenGen, "out = net(images)", 0, "RuntimeError", "mat1 and mat2 shapes cannot be multiplied (1792x28 and 784x128)",
			map[string]facts.Value{"images": {Exists: true, Kind: facts.KindTensor, Shape: []int{64, 1, 28, 28}}}, "out = net(images.flatten(1))"},
		{"images into an estimator", flattenGen, "clf.fit(X, y)", 0, "ValueError", "Found array with dim 3. LogisticRegression expected <= 2.",
			map[string]facts.Value{"X": {Exists: true, Kind: facts.KindNDArray, Shape: []int{50, 8, 8}}}, "clf.fit(X.reshape(len(X), -1), y)"},
		{"rows aligned by index", rowAlignGen, "X = df[['a', 'b']]\ny = df['y']\nX = X[X['a'] > 0]\nm.fit(X, y)", 3, "ValueError", "Found input variables with inconsistent numbers of samples: [190, 200]",
			map[string]facts.Value{"X": {Exists: true, Kind: facts.KindDataFrame, Shape: []int{190, 2}}, "y": {Exists: true, Kind: facts.KindSeries, Shape: []int{200}}},
			"X = df[['a', 'b']]\ny = df['y']\nX = X[X['a'] > 0]\ny = y.loc[X.index]\nm.fit(X, y)"},
		{"rows of unrelated frames", rowAlignGen, "X = houses[['a']]\ny = sales['y']\nm.fit(X, y)", 2, "ValueError", "Found input variables with inconsistent numbers of samples: [5, 6]",
			map[string]facts.Value{"X": {Exists: true, Kind: facts.KindDataFrame, Shape: []int{5, 1}}, "y": {Exists: true, Kind: facts.KindSeries, Shape: []int{6}}}, ""},
		{"arrays have no index", rowAlignGen, "m.fit(X, y)", 0, "ValueError", "Found input variables with inconsistent numbers of samples: [190, 200]",
			map[string]facts.Value{"X": {Exists: true, Kind: facts.KindNDArray, Shape: []int{190, 2}}, "y": {Exists: true, Kind: facts.KindNDArray, Shape: []int{200}}}, ""},
		{"parameters made to require grad", gradLeafGen, "w = torch.zeros(3)\nb = torch.zeros(1)\nloss = ((X @ w + b - y) ** 2).mean()\nloss.backward()\nw.data -= w.grad\nb.data -= b.grad", 3, "RuntimeError",
			"element 0 of tensors does not require grad and does not have a grad_fn", nil,
			"w = torch.zeros(3, requires_grad=True)\nb = torch.zeros(1, requires_grad=True)\nloss = ((X @ w + b - y) ** 2).mean()\nloss.backward()\nw.data -= w.grad\nb.data -= b.grad"},
		{"scores from labels", scoresForColumnsGen, "auc = roc_auc_score(y, clf.predict(X)[:, 1])", 0, "IndexError", "too many indices for array: array is 1-dimensional, but 2 were indexed", nil,
			"auc = roc_auc_score(y, clf.predict_proba(X)[:, 1])"},
		{"scores from bound labels", scoresForColumnsGen, "p = clf.predict(X)\nauc = roc_auc_score(y, p[:, 1])", 1, "IndexError", "too many indices for array: array is 1-dimensional, but 2 were indexed", nil,
			"p = clf.predict_proba(X)\nauc = roc_auc_score(y, p[:, 1])"},
		{"features that do not flatten to the layer", flattenGen, "out = net(x)", 0, "RuntimeError", "mat1 and mat2 shapes cannot be multiplied (64x10 and 20x5)",
			map[string]facts.Value{"x": {Exists: true, Kind: facts.KindTensor, Shape: []int{64, 10}}}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := Input{Finding: finding.Finding{Exception: tt.exception, Range: finding.Range{Start: finding.Position{Line: tt.line}, End: finding.Position{Line: tt.line, Character: 1}}},
				Message: tt.message, Text: tt.text, Facts: analysis.ParseCell(tt.text), Inspection: &facts.Inspection{Values: tt.values}}
			cs := tt.gen(&in)
			if tt.want == "" {
				if len(cs) > 0 {
					t.Fatalf("want no candidate, got %q %v", cs[0].Fix.Title, cs[0].Fix.Edits)
				}
				return
			}
			if len(cs) == 0 {
				t.Fatalf("no candidate, want %q", tt.want)
			}
			got, err := ApplyEdits(tt.text, cs[0].Fix.Edits)
			if err != nil || got != tt.want {
				t.Fatalf("first candidate %q gives %q (%v), want %q", cs[0].Fix.Title, got, err, tt.want)
			}
		})
	}
}

// TestGuardOnTree checks the intent guard's tree reading: silencing constructs counted
// before and after, the crash line's identifiers kept, keyword names free to change.
func TestGuardOnTree(t *testing.T) {
	line := func(l, a, b int) finding.Range {
		return finding.Range{Start: finding.Position{Line: l, Character: a}, End: finding.Position{Line: l, Character: b}}
	}
	tests := []struct {
		name string
		text string
		edit finding.Edit
		want bool
	}{
		{"wrapped in try", "y = f(x)", finding.Edit{Range: line(0, 0, 8), NewText: "try:\n    y = f(x)\nexcept Exception:\n    y = None"}, false},
		{"commented out", "y = f(x)\nprint(y)", finding.Edit{Range: line(0, 0, 0), NewText: "# "}, false},
		{"keyword renamed", "m = split(X, test_ratio=0.2)", finding.Edit{Range: line(0, 13, 23), NewText: "test_size"}, true},
		{"try already there", "try:\n    import a\nexcept ImportError:\n    a = None\ny = f(x)", finding.Edit{Range: line(4, 6, 7), NewText: "int(x)"}, true},
		{"except in a string", "y = f(x)", finding.Edit{Range: line(0, 6, 7), NewText: "x, note='except: pass'"}, true},
		{"warnings silenced", "y = f(x)", finding.Edit{Range: line(0, 0, 0), NewText: "import warnings; warnings.filterwarnings('ignore')\n"}, false},
		{"name dropped", "y = f(x) + g(z)", finding.Edit{Range: line(0, 8, 15), NewText: ""}, false},
		{"method swapped", "p = clf.predict_proba(X)[:, 1]", finding.Edit{Range: line(0, 4, 30), NewText: "clf.predict(X)"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := tt.edit.Range.Start.Line
			in := Input{Finding: finding.Finding{Exception: "ValueError", Range: line(l, 0, 1)}, Text: tt.text, Facts: analysis.ParseCell(tt.text)}
			if got := IntentKept(in, finding.Fix{Edits: []finding.Edit{tt.edit}}); got != tt.want {
				t.Errorf("IntentKept = %v, want %v", got, tt.want)
			}
		})
	}
}
