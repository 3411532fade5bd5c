package llm

import (
	"fmt"
	"testing"
)

func TestSliceDependencies(t *testing.T) {
	for _, tc := range []struct {
		name   string
		cells  []string
		target string
		want   string
	}{
		{"rebinding hides earlier definitions",
			[]string{"import pandas as pd", "df = pd.read_csv('a')", "df = pd.read_csv('b')", "x = 1"},
			"df.head()", "[0 2]"},
		{"in-place changes are kept",
			[]string{"import pandas as pd", "df = pd.DataFrame()", "df.dropna(inplace=True)", "df['a'] = 1", "df.head()", "df.describe()"},
			"df.a", "[0 1 2 3]"},
		{"transitive through functions",
			[]string{"import numpy as np", "scale = 2", "def f(x):\n    y = x * scale\n    return np.log(y)", "z = 3"},
			"f(1)", "[0 1 2]"},
		{"function locals and parameters are not needs",
			[]string{"x = 5", "data = 1", "def g(data):\n    x = data + 1\n    return x"},
			"g(2)", "[2]"},
		{"comprehension and lambda variables",
			[]string{"i = 0", "k = 1", "items = [1, 2]"},
			"s = [i * 2 for i in items]\nf = lambda k: k + 1", "[2]"},
		{"estimator fit changes the model",
			[]string{"from sklearn.linear_model import LinearRegression", "m = LinearRegression()", "m.fit(X, y)", "X, y = load()", "print(m)"},
			"m.predict(X)", "[0 1 2 3]"},
		{"augmented assignment keeps earlier definition",
			[]string{"n = 1", "n += 1"},
			"print(n)", "[0 1]"},
		{"conditional binding keeps earlier definition",
			[]string{"a = 1", "if cond:\n    a = 2"},
			"a", "[0 1]"},
		{"for loop and with targets",
			[]string{"for row in rows:\n    pass", "with open('f') as fh:\n    pass"},
			"row, fh", "[0 1]"},
		{"f-string reads",
			[]string{"acc = 0.9", "other = 2"},
			"print(f'accuracy {acc:.2f}')", "[0]"},
		{"magics are skipped",
			[]string{"%matplotlib inline\nimport matplotlib.pyplot as plt", "!pip install x", "%%bash\nplt=1"},
			"plt.plot([1])", "[0]"},
		{"from-import with parentheses",
			[]string{"from sklearn.metrics import (\n    accuracy_score,\n    f1_score as f1,\n)"},
			"f1(a, b)", "[0]"},
		{"star import may bind anything",
			[]string{"from pylab import *", "q = 1"},
			"plot(x)", "[0]"},
		{"tuple unpacking",
			[]string{"X = load()", "X_train, X_test = split(X)"},
			"X_test.shape", "[0 1]"},
		{"attribute assignment is a change",
			[]string{"import torch", "model = Net()", "model.fc = torch.nn.Linear(3, 1)", "model.fc.weight.requires_grad = False"},
			"model(x)", "[0 1 2 3]"},
		{"del unbinds",
			[]string{"a = 1", "del a"},
			"a + 1", "[1]"},
		{"methods read module names",
			[]string{"import torch.nn as nn", "from transformers import Output", "class M(nn.Module):\n    def forward(self, x):\n        return Output(x)"},
			"M()", "[0 1 2]"},
		{"a method naming its own class",
			[]string{"Net = None", "class Net:\n    def __init__(self):\n        super(Net, self).__init__()"},
			"Net()", "[1]"},
		{"a loop reads the value from before it",
			[]string{"total = 0", "for x in xs:\n    total = total + x", "y = 2"},
			"print(total)", "[0 1]"},
		{"a loop's later reads see its own binding",
			[]string{"y = 0", "for x in xs:\n    y = x\n    print(y)"},
			"print(x)", "[1]"},
		{"a for target may not be bound",
			[]string{"x = 1", "for x in items:\n    pass"},
			"x", "[0 1]"},
		{"annotations are reads",
			[]string{"from typing import Optional", "def f(a: int) -> Optional[int]:\n    return a"},
			"f(1)", "[0 1]"},
		{"statements sharing a line",
			[]string{"a = 1; b = 2", "c = 3"},
			"b", "[0]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var ex []CellText
			for i, c := range tc.cells {
				ex = append(ex, CellText{Index: i, ExecutionOrder: i + 1, Text: c})
			}
			if got := fmt.Sprint(SliceDependencies(ex, tc.target)); got != tc.want {
				t.Errorf("SliceDependencies = %s, want %s", got, tc.want)
			}
		})
	}
}

func TestAnalyzeCellSurvivesBrokenCode(t *testing.T) {
	for _, src := range []string{"", "def f(:\n  x = (", "'''unterminated\nx = 1", "x = [1, 2\ny = 3", "\\", "a = b = c\n@decorator\ndef f(): pass", "x: int", "async def f(a, *, b=c): await g()"} {
		cn := analyzeCell(src)
		if cn == nil {
			t.Errorf("analyzeCell(%q) = nil", src)
		}
	}
}
