package notebook

import (
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// describePercent renders cells with their SourceLine: "@3 code: text".
func describePercent(nb *Notebook) []string {
	var out []string
	for _, c := range nb.Cells {
		kind := "code"
		if c.Kind == Markup {
			kind = c.Language
		}
		out = append(out, "@"+strconv.Itoa(c.SourceLine)+" "+kind+": "+c.Text)
	}
	return out
}

func TestParsePercent(t *testing.T) {
	tests := []struct {
		name string
		text string
		want []string
	}{
		{"empty", "", nil},
		{"blank only", "\n\n  \n", nil},
		{"no markers: one cell", "import os\nos.getcwd()\n", []string{"@0 code: import os\nos.getcwd()"}},
		{"header then cells", "import os\n\n# %%\nx = 1\n\n# %%\ny = 2\n", []string{"@0 code: import os", "@3 code: x = 1", "@6 code: y = 2"}},
		{"blank header skipped", "\n\n# %%\nx = 1", []string{"@3 code: x = 1"}},
		{"leading blank lines kept", "# %%\n\nx = 1\n\n\n", []string{"@1 code: \nx = 1"}},
		{"empty cells", "# %%\n# %%\n\n# %%\n", []string{"@1 code: ", "@2 code: ", "@4 code: "}},
		{"markdown commented", "# %% [markdown]\n# # Title\n#\n# text\n#  indented\n", []string{"@1 markdown: # Title\n\ntext\n indented"}},
		{"md alias", "# %% [md]\n# hi", []string{"@1 markdown: hi"}},
		{"title and markdown", "# %% Intro [markdown]\n# hi", []string{"@1 markdown: hi"}},
		{"markdown as a string kept", "# %% [markdown]\n\"\"\"\n# Title\n\"\"\"\n", []string{"@1 markdown: \"\"\"\n# Title\n\"\"\""}},
		{"raw", "# %% [raw]\n# raw text", []string{"@1 raw: raw text"}},
		{"no-space marker", "#%%\nx = 1", []string{"@1 code: x = 1"}},
		{"marker with metadata", "# %% tags=[\"parameters\"]\nx = 1", []string{"@1 code: x = 1"}},
		{"not markers", "# %%time\n#  %%%\n # %%\nx = 1", []string{"@0 code: # %%time\n#  %%%\n # %%\nx = 1"}},
		{"CRLF", "import os\r\n\r\n# %%\r\nx = 1\r\ny = 2\r\n", []string{"@0 code: import os", "@3 code: x = 1\ny = 2"}},
		{"CR only", "# %%\rx = 1\r# %%\ry", []string{"@1 code: x = 1", "@3 code: y"}},
		{"non-ASCII", "# %%\ns = \"😀 数据\"\n", []string{"@1 code: s = \"😀 数据\""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			nb := ParsePercent(tt.text, "nb.py")
			if got := describePercent(nb); !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("cells:\n%q\nwant:\n%q", got, tt.want)
			}
			for i, c := range nb.Cells {
				if c.ID != "cell-"+strconv.Itoa(i) {
					t.Errorf("cell %d ID %q", i, c.ID)
				}
			}
		})
	}
}

// TestPercentSourceLine checks that every line of a code cell is the file line SourceLine
// lines further, so the LSP can map cell positions into the .py document.
func TestPercentSourceLine(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(fixtures, "survival.py"))
	if err != nil {
		t.Fatal(err)
	}
	for _, eol := range []string{"\n", "\r\n", "\r"} {
		text := strings.ReplaceAll(string(data), "\n", eol)
		nb := ParsePercent(text, "survival.py")
		if len(nb.Cells) != 7 {
			t.Fatalf("%q: %d cells, want 7:\n%q", eol, len(nb.Cells), describePercent(nb))
		}
		file, _ := percentLines(text)
		for _, c := range nb.CodeCells() {
			for k, line := range strings.Split(c.Text, "\n") {
				if got := file[c.SourceLine+k]; got != line {
					t.Errorf("%q: %s line %d = %q, file line %d = %q", eol, c.ID, k, line, c.SourceLine+k, got)
				}
			}
		}
	}
}

func TestPercentFixture(t *testing.T) {
	nb, err := Read(filepath.Join(fixtures, "survival.py"))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"@0 code: # ---\n# jupyter:\n#   jupytext:\n#     text_representation:\n#       extension: .py\n#       format_name: percent\n#   kernelspec:\n#     display_name: Python 3 (ipykernel)\n#     language: python\n#     name: python3\n# ---",
		"@13 markdown: # Survival analysis 🚢\n\nLoad the passengers, then fit a model — 模型.",
		"@18 code: import pandas as pd\nfrom sklearn.linear_model import LogisticRegression\n\ndf = pd.read_csv(\"passengers.csv\")",
		"@24 code: target = \"Survived\"",
		"@27 code: # %%time is a magic in a comment, not a cell marker\nX = df[[\"Age\", \"Fare\"]].fillna(0)",
		"@31 markdown: Fit, then score.",
		"@34 code: model = LogisticRegression().fit(X, df[target])\nprint(f\"accuracy: {model.score(X, df[target]):.2f} ✅\")",
	}
	if got := describePercent(nb); !reflect.DeepEqual(got, want) {
		t.Fatalf("cells:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestPercentRoundTrip(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(fixtures, "survival.py"))
	if err != nil {
		t.Fatal(err)
	}
	for _, text := range []string{
		string(data),
		strings.ReplaceAll(string(data), "\n", "\r\n"),
		"",
		"x = 1\n",
		"# %%\n",
		"# %%\n\n# %% [markdown]\n\n# %%\nx\n",
		"# %% [markdown]\n\"\"\"\nverbatim\n\"\"\"\n",
		"# %% [raw]\n# a\n#\n# b\n",
	} {
		nb := ParsePercent(text, "rt.py")
		if got := string(nb.MarshalPercent()); got != text {
			t.Errorf("round trip of %q:\n%q", text, got)
		}
	}
}

// TestMarshalPercentFromIpynb converts an ipynb to percent format and back.
func TestMarshalPercentFromIpynb(t *testing.T) {
	nb, err := Read(filepath.Join(fixtures, "titanic-nbformat45.ipynb"))
	if err != nil {
		t.Fatal(err)
	}
	// A kind change by an editor: the marker must follow the kind, the text be commented.
	if err := nb.Apply(Change{Data: []CellData{markup("cell-7")}}); err != nil {
		t.Fatal(err)
	}
	out := nb.MarshalPercent()
	if !strings.HasPrefix(string(out), "# %% [markdown]\n# # Titanic 🚢 survival — first look\n#\n# Données") {
		t.Errorf("output starts:\n%s", out[:min(len(out), 200)])
	}
	back := ParsePercent(string(out), "titanic.py")
	if len(back.Cells) != len(nb.Cells) {
		t.Fatalf("%d cells back, want %d:\n%s", len(back.Cells), len(nb.Cells), out)
	}
	for i, c := range nb.Cells {
		b := back.Cells[i]
		if b.Kind != c.Kind || b.Text != c.Text || (c.Language == "raw") != (b.Language == "raw") {
			t.Errorf("cell %d: %v %q %q, want %v %q %q", i, b.Kind, b.Language, b.Text, c.Kind, c.Language, c.Text)
		}
	}
	// A percent notebook edited in place: marker kept, text rewritten.
	p := ParsePercent("# %% tags=[\"x\"]\na = 1\n\n# %% [markdown]\n\"\"\"doc\"\"\"\n", "p.py")
	if err := p.Apply(Change{Text: []TextChange{typed("cell-0", 1, 0, 5, "0")}, Data: []CellData{code("cell-1")}}); err != nil {
		t.Fatal(err)
	}
	if got, want := string(p.MarshalPercent()), "# %% tags=[\"x\"]\na = 10\n\n# %%\n\"\"\"doc\"\"\"\n"; got != want {
		t.Errorf("edited percent:\n%q\nwant\n%q", got, want)
	}
}
