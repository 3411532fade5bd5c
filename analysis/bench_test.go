package analysis

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/premortem/premortem/notebook"
)

// cellTemplates are typical notebook cells; %d is the cell number, so names differ.
var cellTemplates = []string{
	"import numpy as np\nimport pandas as pd\nimport matplotlib.pyplot as plt\n%matplotlib inline",
	"df%d = pd.read_csv('data/part_%d.csv')\ndf%d.head()",
	"df%d = df%d.dropna(subset=['Age', 'Fare'])\ndf%d['Family'] = df%d['SibSp'] + df%d['Parch'] + 1\nprint(df%d.shape)",
	"def feature_%d(frame, col='Age'):\n    out = frame.copy()\n    out[col + '_log'] = np.log1p(out[col])\n    for c in ['Fare', 'Age']:\n        out[c] = out[c].fillna(out[c].median())\n    return out\nfeat%d = feature_%d(df%d)",
	"fig, ax = plt.subplots(1, 2, figsize=(10, 4))\nax[0].hist(df%d['Age'], bins=30)\nax[1].scatter(df%d['Age'], df%d['Fare'], alpha=0.3)\nplt.savefig('fig_%d.png')",
	"from sklearn.model_selection import train_test_split\nX%d = feat%d[['Age', 'Fare', 'Family']].values\ny%d = feat%d['Survived'].values\nX_train%d, X_test%d, y_train%d, y_test%d = train_test_split(X%d, y%d, test_size=0.2, random_state=%d)",
	"from sklearn.ensemble import RandomForestClassifier\nclf%d = RandomForestClassifier(n_estimators=100, max_depth=5)\nclf%d.fit(X_train%d, y_train%d)\nscore%d = clf%d.score(X_test%d, y_test%d)\nprint(f'accuracy: {score%d:.3f}')",
	"%%time\nresults%d = {name: [m.score(X_test%d, y_test%d) for m in models] for name, models in groups.items()}\nbest%d = max(results%d, key=lambda k: sum(results%d[k]))",
	"!pip install -q lightgbm\ncounts%d = df%d.groupby('Pclass')['Survived'].agg(['mean', 'count'])\ncounts%d.plot(kind='bar')",
	"try:\n    cache%d\nexcept NameError:\n    cache%d = {}\nfor i in range(10):\n    cache%d[i] = i ** 2\nsummary%d = sorted(cache%d.items(), key=lambda kv: -kv[1])[:3]",
}

// benchNotebook builds a 200-cell notebook: one in six is markdown, three in four code
// cells ran (in a slightly shuffled order), the rest did not.
func benchNotebook() *notebook.Notebook {
	nb := &notebook.Notebook{URI: "bench.ipynb"}
	order := 0
	for i := 0; i < 200; i++ {
		c := &notebook.Cell{ID: fmt.Sprintf("cell-%d", i), Kind: notebook.Code, Language: "python"}
		switch {
		case i%6 == 5:
			c.Kind, c.Language = notebook.Markup, "markdown"
			c.Text = fmt.Sprintf("## Step %d\nSome notes about `df%d`.", i, i)
		default:
			tmpl := cellTemplates[i%len(cellTemplates)]
			n := strings.Count(tmpl, "%d")
			args := make([]any, n)
			for j := range args {
				args[j] = i - i%len(cellTemplates) + 1 // names shared by a block of cells
			}
			c.Text = fmt.Sprintf(tmpl, args...)
			if i%4 != 3 {
				order++
				c.ExecutionOrder = order
				if i%7 == 0 && order > 2 {
					c.ExecutionOrder = order + 1000 // re-run later, out of order
				}
			}
		}
		nb.Cells = append(nb.Cells, c)
	}
	return nb
}

func BenchmarkAnalyzeFromScratch(b *testing.B) {
	nb := benchNotebook()
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := NewAnalyzer().Analyze(ctx, nb, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkKeystroke types one character into cell 150 and re-analyses the notebook.
func BenchmarkKeystroke(b *testing.B) {
	nb := benchNotebook()
	ctx := context.Background()
	a := NewAnalyzer()
	if _, err := a.Analyze(ctx, nb, Options{}); err != nil {
		b.Fatal(err)
	}
	cell := nb.Cells[150]
	base := cell.Text
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		// Alternate typing and deleting a character in the middle of the cell.
		mid := len(base) / 2
		if i%2 == 1 {
			cell.Text = base[:mid] + "x" + base[mid:]
		} else {
			cell.Text = base
		}
		res, err := a.Analyze(ctx, nb, Options{})
		if err != nil {
			b.Fatal(err)
		}
		_ = res.Findings[cell.ID]
	}
}

func TestBenchNotebookIsRealistic(t *testing.T) {
	nb := benchNotebook()
	res, err := NewAnalyzer().Analyze(context.Background(), nb, Options{})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, fs := range res.Findings {
		n += len(fs)
	}
	if len(res.Facts) < 150 || n == 0 {
		t.Errorf("facts for %d cells, %d findings: the benchmark notebook should exercise both", len(res.Facts), n)
	}
	for id, f := range res.Facts {
		if len(f.SyntaxErrors) > 0 {
			t.Errorf("%s does not parse: %q", id, nb.Cell(id).Text)
		}
	}
}
