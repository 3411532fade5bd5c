package notebook

import (
	"fmt"
	"testing"
)

// bigNotebook opens a 200-cell notebook of eight-line Python cells, half of them run.
func bigNotebook(b *testing.B) *Notebook {
	b.Helper()
	var cells []CellData
	var opened []OpenedCell
	for i := range 200 {
		id := fmt.Sprintf("vscode-notebook-cell:/home/u/project/analysis.ipynb#W%dsZmlsZQ%%3D%%3D", i)
		d := CellData{ID: id, Kind: Code, Metadata: map[string]any{"tags": []any{}}}
		if i%2 == 0 {
			d.HasSummary, d.ExecutionOrder, d.Success = true, i+1, boolp(true)
		}
		cells = append(cells, d)
		opened = append(opened, OpenedCell{ID: id, Language: "python", Version: 1, Text: fmt.Sprintf(
			"# cell %d: clean the frame\ndf%d = df.copy()\ndf%d[\"Age\"] = df%d[\"Age\"].fillna(df%d[\"Age\"].median())\n"+
				"df%d = df%d.dropna(subset=[\"Embarked\"])\nX%d = df%d[[\"Age\", \"Fare\"]].to_numpy()\n"+
				"y%d = df%d[\"Survived\"]\nprint(X%d.shape, y%d.mean())\n", i, i, i, i, i, i, i, i, i, i, i, i, i)})
	}
	nb, err := Open("file:///home/u/project/analysis.ipynb", "jupyter-notebook", 1, nil, cells, opened)
	if err != nil {
		b.Fatal(err)
	}
	return nb
}

// BenchmarkApplyKeystroke types one character into cell 150 of a 200-cell notebook, as one
// didChange with a single textContent edit does.
func BenchmarkApplyKeystroke(b *testing.B) {
	nb := bigNotebook(b)
	id := nb.Cells[150].ID
	insert := Change{Text: []TextChange{{ID: id, Edits: []TextEdit{{StartLine: 4, StartChar: 10, EndLine: 4, EndChar: 10, Text: "x"}}}}}
	remove := Change{Text: []TextChange{{ID: id, Edits: []TextEdit{{StartLine: 4, StartChar: 10, EndLine: 4, EndChar: 11}}}}}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		ch := insert
		if i%2 == 1 {
			ch = remove
		}
		ch.Text[0].Version = i + 2
		if err := nb.Apply(ch); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkClone is the cost of a snapshot of the 200-cell notebook (one per request).
func BenchmarkClone(b *testing.B) {
	nb := bigNotebook(b)
	b.ReportAllocs()
	for b.Loop() {
		_ = nb.Clone()
	}
}
