package notebook

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

const fixtures = "../testdata/notebooks"

// TestIpynbRoundTripFixtures reads notebooks written by Jupyter's nbformat (see
// testdata/notebooks/make_fixtures.py) and writes them back byte for byte.
func TestIpynbRoundTripFixtures(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join(fixtures, "*.ipynb"))
	if err != nil || len(paths) < 2 {
		t.Fatalf("fixtures: %v, %v", paths, err)
	}
	for _, path := range paths {
		t.Run(filepath.Base(path), func(t *testing.T) {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			nb, err := Read(path)
			if err != nil {
				t.Fatal(err)
			}
			for name, n := range map[string]*Notebook{"read": nb, "clone": nb.Clone()} {
				out, err := n.MarshalIpynb()
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(out, data) {
					t.Errorf("%s: MarshalIpynb differs from the file at byte %d:\n%s", name, firstDiff(out, data), out)
				}
			}
		})
	}
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

func TestParseIpynbFixtures(t *testing.T) {
	tests := []struct {
		file    string
		want    []string
		history []string
	}{
		{
			file: "titanic-nbformat45.ipynb",
			want: []string{
				"cell-0 markup markdown v0 -: # Titanic 🚢 survival — first look\n\nDonnées d'exemple, 数据分析. The chart: ![chart.png](attachment:chart.png)",
				"cell-1 code python v0 run1 ok: import numpy as np\nimport pandas as pd\nfrom IPython.display import JSON",
				"cell-2 code python v0 run7 ok: df = pd.DataFrame({\n    \"Name\": [\"Braund\", \"Cumings\", \"Heikkinen\", \"Åberg\"],\n    \"Age\": [22.0, 38.0, np.nan, 26.0],\n    \"Fare\": [7.25, 71.2833, 7.925, 8.05],\n    \"Survived\": [0, 1, 1, 0],\n})\ndf.head()",
				"cell-3 code python v0 run3 ok: print(f\"rows: {len(df)} ✅ <ok> & done\")\nprint(\"tab\\tsep\")",
				"cell-4 code python v0 run4 failed: df[\"Agee\"].mean()",
				"cell-5 code python v0 run5 ok: JSON({\"lr\": 1e-05, \"momentum\": 0.9, \"epochs\": 3, \"scale\": 1.0})",
				"cell-6 code python v0 run6 ok: %matplotlib inline\nimport matplotlib.pyplot as plt\nfig, ax = plt.subplots(figsize=(1, 1), dpi=20)\nax.bar([0, 1], df.groupby(\"Survived\").size())",
				"cell-7 code python v0 -: model.fit(df[[\"Age\", \"Fare\"]], df[\"Survived\"])",
				"cell-8 markup raw v0 -: raw: passed through untouched \\ \"quoted\"",
			},
			history: []string{"cell-1", "cell-3", "cell-4", "cell-5", "cell-6", "cell-2"},
		},
		{
			file: "legacy-nbformat42.ipynb",
			want: []string{
				"cell-0 markup markdown v0 -: ## Old notebook\nWritten with nbformat 4.2: no cell ids.",
				"cell-1 code python v0 run1 ok: x = [i ** 2 for i in range(5)]\nx",
				"cell-2 code python v0 run2 ok: 0.1 + 0.2",
				"cell-3 code python v0 run3 failed: import sys\nprint(\"warn\", file=sys.stderr)\ny = undefined_name + 1",
				"cell-4 code python v0 -: total = sum(x)\n",
			},
			history: []string{"cell-1", "cell-2", "cell-3"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			nb, err := Read(filepath.Join(fixtures, tt.file))
			if err != nil {
				t.Fatal(err)
			}
			if got := describe(nb); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("cells:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
			var hist []string
			for _, c := range nb.History() {
				hist = append(hist, c.ID)
			}
			if !reflect.DeepEqual(hist, tt.history) {
				t.Errorf("History = %v, want %v", hist, tt.history)
			}
			if nb.Language() != "python" || nb.KernelName() != "python3" || nb.Type != "jupyter-notebook" {
				t.Errorf("language %q kernel %q type %q", nb.Language(), nb.KernelName(), nb.Type)
			}
		})
	}
}

// nbJSON builds a notebook file around cells given as JSON text.
func nbJSON(cells string) string {
	return `{"cells": [` + cells + `], "metadata": {}, "nbformat": 4, "nbformat_minor": 4}`
}

func TestParseIpynbCells(t *testing.T) {
	tests := []struct {
		name string
		cell string
		want string
	}{
		{"source string", `{"cell_type": "code", "source": "a\nb", "metadata": {}, "outputs": [], "execution_count": null}`, "cell-0 code python v0 -: a\nb"},
		{"source list", `{"cell_type": "code", "source": ["a\n", "b"], "metadata": {}, "outputs": [], "execution_count": 2}`, "cell-0 code python v0 run2 ok: a\nb"},
		{"source list joined as is", `{"cell_type": "markdown", "source": ["a", "b\n"], "metadata": {}}`, "cell-0 markup markdown v0 -: ab\n"},
		{"empty source list", `{"cell_type": "code", "source": [], "metadata": {}, "outputs": [], "execution_count": null}`, "cell-0 code python v0 -: "},
		{"error output marks failure", `{"cell_type": "code", "source": "1/0", "metadata": {}, "execution_count": 3, "outputs": [{"output_type": "stream", "name": "stdout", "text": "x"}, {"output_type": "error", "ename": "ZeroDivisionError", "evalue": "", "traceback": []}]}`, "cell-0 code python v0 run3 failed: 1/0"},
		{"error output without count", `{"cell_type": "code", "source": "1/0", "metadata": {}, "execution_count": null, "outputs": [{"output_type": "error"}]}`, "cell-0 code python v0 run0 failed: 1/0"},
		{"no outputs field", `{"cell_type": "code", "source": "x", "execution_count": 1}`, "cell-0 code python v0 run1 ok: x"},
		{"raw cell", `{"cell_type": "raw", "source": "x", "metadata": {"format": "text/x-rst"}}`, "cell-0 markup raw v0 -: x"},
		{"markdown execution_count ignored", `{"cell_type": "markdown", "source": "x", "execution_count": "junk"}`, "cell-0 markup markdown v0 -: x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			nb, err := ParseIpynb([]byte(nbJSON(tt.cell)), "a.ipynb")
			if err != nil {
				t.Fatal(err)
			}
			if got := describe(nb); len(got) != 1 || got[0] != tt.want {
				t.Fatalf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestParseIpynbLanguage(t *testing.T) {
	data := `{"cells": [{"cell_type": "code", "source": "x", "metadata": {}, "outputs": [], "execution_count": null}],
	 "metadata": {"kernelspec": {"name": "ir", "language": "R"}}, "nbformat": 4, "nbformat_minor": 4}`
	nb, err := ParseIpynb([]byte(data), "r.ipynb")
	if err != nil {
		t.Fatal(err)
	}
	if nb.Cells[0].Language != "R" {
		t.Fatalf("code cell language %q, want the kernel's (R)", nb.Cells[0].Language)
	}
}

func TestParseIpynbErrors(t *testing.T) {
	cell := func(fields string) string {
		return nbJSON(`{"cell_type": "code", "metadata": {}, "outputs": [], ` + fields + `}`)
	}
	tests := []struct {
		name    string
		data    string
		wantErr string
	}{
		{"empty file", "", "the file is empty"},
		{"truncated", `{"cells": [`, "ends in the middle of a value"},
		{"syntax error", "{\n \"cells\": [\n  x]}", "not valid JSON at line 3, column 3"},
		{"trailing data", nbJSON("") + " {}", "unexpected data after the JSON object"},
		{"not an object", `[1, 2]`, "the file is JSON a list, want an object"},
		{"nbformat missing", `{"cells": []}`, "nbformat is missing"},
		{"nbformat 3", `{"nbformat": 3, "worksheets": []}`, "nbformat 3 is not supported, want 4"},
		{"nbformat string", `{"nbformat": "4", "cells": []}`, "nbformat is a string, want the number 4"},
		{"nbformat_minor float", `{"nbformat": 4, "nbformat_minor": 1.5, "cells": []}`, "nbformat_minor is a number, want an integer"},
		{"cells missing", `{"nbformat": 4, "metadata": {}}`, "cells is missing"},
		{"cells object", `{"nbformat": 4, "cells": {}}`, "cells is an object, want a list"},
		{"metadata list", `{"nbformat": 4, "cells": [], "metadata": []}`, "metadata is a list, want an object"},
		{"cell not object", nbJSON(`{"cell_type": "code", "source": ""}, 3`), "cells[1] is a number, want an object"},
		{"cell_type missing", nbJSON(`{"source": ""}`), "cells[0].cell_type is missing"},
		{"cell_type unknown", nbJSON(`{"cell_type": "python", "source": ""}`), `cells[0].cell_type is "python", want code, markdown or raw`},
		{"cell_type null", nbJSON(`{"cell_type": null, "source": ""}`), "cells[0].cell_type is null"},
		{"cell_type number", nbJSON(`{"cell_type": 2, "source": ""}`), "cells[0].cell_type is a number"},
		{"source missing", cell(`"execution_count": null`), "cells[0].source is missing"},
		{"source number", cell(`"source": 3, "execution_count": null`), "cells[0].source is a number, want a string or a list of strings"},
		{"source null", cell(`"source": null, "execution_count": null`), "cells[0].source is null"},
		{"source list item", cell(`"source": ["a", 1], "execution_count": null`), "cells[0].source[1] is a number, want a string"},
		{"cell metadata", nbJSON(`{"cell_type": "markdown", "source": "", "metadata": "x"}`), "cells[0].metadata is a string, want an object"},
		{"execution_count string", cell(`"source": "", "execution_count": "1"`), "cells[0].execution_count is a string, want an integer or null"},
		{"execution_count float", cell(`"source": "", "execution_count": 1.5`), "cells[0].execution_count is 1.5, want a non-negative integer or null"},
		{"execution_count negative", cell(`"source": "", "execution_count": -1`), "cells[0].execution_count is -1"},
		{"execution_count huge", cell(`"source": "", "execution_count": 1e400`), "cells[0].execution_count is 1e400"},
		{"outputs object", nbJSON(`{"cell_type": "code", "source": "", "outputs": {}}`), "cells[0].outputs is an object, want a list"},
		{"output string", nbJSON(`{"cell_type": "code", "source": "", "outputs": ["x"]}`), "cells[0].outputs[0] is a string, want an object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			nb, err := ParseIpynb([]byte(tt.data), "bad.ipynb")
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("error = %v, want %q", err, tt.wantErr)
			}
			if !strings.HasPrefix(err.Error(), "read notebook bad.ipynb: ") || nb != nil {
				t.Fatalf("error %q should name the file; notebook %v should be nil", err, nb)
			}
		})
	}
}

// TestIpynbUnknownFields checks that fields premortem does not model survive a round trip,
// also after the modeled ones changed.
func TestIpynbUnknownFields(t *testing.T) {
	in := `{
 "cells": [
  {
   "cell_type": "code",
   "execution_count": 1,
   "id": "abc",
   "metadata": {
    "x-score": 0.30000000000000004
   },
   "outputs": [],
   "source": "x = 1",
   "x-cell-extension": {
    "keep": [
     1,
     2.50
    ]
   }
  }
 ],
 "metadata": {
  "big": 12345678901234567890
 },
 "nbformat": 4,
 "nbformat_minor": 5,
 "x-top-extension": "kept <&> LS"
}
`
	in = strings.ReplaceAll(in, "LS", "\u2028") // Jupyter writes U+2028 unescaped
	nb, err := ParseIpynb([]byte(in), "x.ipynb")
	if err != nil {
		t.Fatal(err)
	}
	out, err := nb.MarshalIpynb()
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != in {
		t.Fatalf("round trip:\n%s", out)
	}
	run := ran("cell-0", 4, true)
	run.Metadata = nb.Cells[0].Metadata
	if err := nb.Apply(Change{Text: []TextChange{typed("cell-0", 1, 0, 5, "0")}, Data: []CellData{run}}); err != nil {
		t.Fatal(err)
	}
	out, err = nb.MarshalIpynb()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"x-cell-extension": {`, `2.50`, `"x-top-extension": "kept <&> ` + "\u2028" + `"`, `"big": 12345678901234567890`, `"x-score": 0.30000000000000004`, `"source": "x = 10"`, `"execution_count": 4`, `"id": "abc"`} {
		if !strings.Contains(string(out), want) {
			t.Errorf("after edits, output lacks %s:\n%s", want, out)
		}
	}
}

func TestMarshalIpynbAfterChanges(t *testing.T) {
	nb, err := Read(filepath.Join(fixtures, "legacy-nbformat42.ipynb"))
	if err != nil {
		t.Fatal(err)
	}
	err = nb.Apply(Change{
		Structure: &StructureChange{Start: 5, Cells: []CellData{code("new")}, Opened: []OpenedCell{{ID: "new", Language: "python", Text: "print(total)\n"}}},
		Data:      []CellData{ran("cell-4", 4, true), markup("cell-2")},
		Text:      []TextChange{{ID: "cell-1", Edits: []TextEdit{{StartLine: 1, StartChar: 0, EndLine: 1, EndChar: 1, Text: "y = x\ny"}}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	out, err := nb.MarshalIpynb()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"   \"source\": [\n    \"x = [i ** 2 for i in range(5)]\\n\",\n    \"y = x\\n\",\n    \"y\"\n   ]",
		"\"execution_count\": 4,",
		// cells.data replaced the metadata (with none) and made it markdown: no outputs.
		"   \"cell_type\": \"markdown\",\n   \"metadata\": {},\n   \"source\": [\n    \"0.1 + 0.2\"\n   ]\n  },",
		"   \"cell_type\": \"code\",\n   \"execution_count\": null,\n   \"metadata\": {},\n   \"outputs\": [],\n   \"source\": [\n    \"print(total)\\n\"\n   ]\n  }",
		"\"nbformat_minor\": 2\n}\n",
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("output lacks\n%s\nin:\n%s", want, out)
		}
	}
	if strings.Contains(string(out), `"id"`) {
		t.Errorf("nbformat 4.2 output got cell ids")
	}
	again, err := ParseIpynb(out, "again.ipynb")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := texts(again), texts(nb); !reflect.DeepEqual(got, want) {
		t.Errorf("reparsed texts %q, want %q", got, want)
	}
}

func texts(nb *Notebook) []string {
	var out []string
	for _, c := range nb.Cells {
		out = append(out, c.Text)
	}
	return out
}

// TestMarshalIpynbFromEditor writes a notebook that came from didOpen: nbformat 4.5 with
// deterministic, unique cell ids.
func TestMarshalIpynbFromEditor(t *testing.T) {
	nb := openABCD(t)
	out, err := nb.MarshalIpynb()
	if err != nil {
		t.Fatal(err)
	}
	out2, err := nb.Clone().MarshalIpynb()
	if err != nil || !bytes.Equal(out, out2) {
		t.Fatalf("two writes differ (%v):\n%s\n%s", err, out, out2)
	}
	var doc struct {
		Cells []struct {
			ID             string `json:"id"`
			CellType       string `json:"cell_type"`
			ExecutionCount *int   `json:"execution_count"`
			Outputs        []any  `json:"outputs"`
		} `json:"cells"`
		Nbformat      int `json:"nbformat"`
		NbformatMinor int `json:"nbformat_minor"`
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Nbformat != 4 || doc.NbformatMinor != 5 || len(doc.Cells) != 4 {
		t.Fatalf("doc: %+v", doc)
	}
	seen := map[string]bool{}
	for i, c := range doc.Cells {
		if c.ID == "" || seen[c.ID] {
			t.Errorf("cell %d id %q missing or duplicated", i, c.ID)
		}
		seen[c.ID] = true
	}
	if doc.Cells[2].CellType != "markdown" || doc.Cells[2].Outputs != nil || doc.Cells[0].ExecutionCount == nil || *doc.Cells[0].ExecutionCount != 1 || doc.Cells[3].ExecutionCount != nil {
		t.Errorf("cells: %+v", doc.Cells)
	}
	back, err := ParseIpynb(out, "back.ipynb")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := texts(back), texts(nb); !reflect.DeepEqual(got, want) {
		t.Errorf("texts %q, want %q", got, want)
	}
}

func TestWriteJSON(t *testing.T) {
	tests := []struct {
		v    any
		want string
	}{
		// Expected values are Python's json.dumps(v, ensure_ascii=False) output.
		{"a\"\\\n\r\t\b\f\x01\x1f\x7f<>&\u2028\u2029é😀/", "\"a\\\"\\\\\\n\\r\\t\\b\\f\\u0001\\u001f\x7f<>&\u2028\u2029é😀/\""},
		{"bad \xff utf8", "\"bad \uFFFD utf8\""},
		{json.Number("1e-05"), "1e-05"},
		{json.Number("1.0"), "1.0"},
		{1.0, "1"},
		{0.9, "0.9"},
		{1e-05, "1e-05"},
		{1.5e-7, "1.5e-07"},
		{1e21, "1e+21"},
		{123456.789, "123456.789"},
		{float32(0.5), "0.5"},
		{7, "7"},
		{int64(-3), "-3"},
		{uint32(4), "4"},
		{nil, "null"},
		{true, "true"},
		{[]any{}, "[]"},
		{map[string]any{}, "{}"},
		{map[string]any{"b": []any{}, "a": map[string]any{}, "c": []any{1, map[string]any{"x": nil, "é": true, "Z": false}}},
			"{\n \"a\": {},\n \"b\": [],\n \"c\": [\n  1,\n  {\n   \"Z\": false,\n   \"x\": null,\n   \"é\": true\n  }\n ]\n}"},
		{[]string{"x", "y"}, "[\n \"x\",\n \"y\"\n]"},
		{struct {
			A int `json:"a"`
		}{2}, "{\n \"a\": 2\n}"},
	}
	for _, tt := range tests {
		var buf bytes.Buffer
		if err := writeJSON(&buf, tt.v, 0); err != nil || buf.String() != tt.want {
			t.Errorf("writeJSON(%#v) = %q, %v, want %q", tt.v, buf.String(), err, tt.want)
		}
	}
	for _, bad := range []any{json.Number("1x"), func() {}, map[string]any{"f": []any{nanValue()}}} {
		var buf bytes.Buffer
		if err := writeJSON(&buf, bad, 0); err == nil {
			t.Errorf("writeJSON(%#v) gave no error", bad)
		}
	}
}

func nanValue() float64 {
	zero := 0.0
	return zero / zero
}

func TestRead(t *testing.T) {
	dir := t.TempDir()
	py := filepath.Join(dir, "a.py")
	if err := os.WriteFile(py, []byte("# %%\nx = 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	nb, err := Read(py)
	if err != nil || len(nb.Cells) != 1 || nb.Cells[0].Text != "x = 1" || nb.URI != py {
		t.Fatalf("Read(.py) = %v, %v", nb, err)
	}
	if _, err := Read(filepath.Join(dir, "a.txt")); err == nil || !strings.Contains(err.Error(), `unsupported file type ".txt", want .ipynb or a percent-format .py`) {
		t.Errorf("Read(.txt) error = %v", err)
	}
	if _, err := Read(filepath.Join(dir, "missing.ipynb")); err == nil || !strings.Contains(err.Error(), "no such file") {
		t.Errorf("Read(missing) error = %v", err)
	}
	bad := filepath.Join(dir, "bad.ipynb")
	if err := os.WriteFile(bad, []byte(`{"nbformat": 4, "cells": [{"cell_type": "code", "source": 3}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Read(bad); err == nil || !strings.Contains(err.Error(), bad+": cells[0].source is a number") {
		t.Errorf("Read(bad) error = %v", err)
	}
}
