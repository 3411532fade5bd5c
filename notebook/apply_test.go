package notebook

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// Cell URIs as VS Code spells them; opaque to the package.
const (
	uriA = "vscode-notebook-cell:/home/u/titanic.ipynb#W0sZmlsZQ%3D%3D"
	uriB = "vscode-notebook-cell:/home/u/titanic.ipynb#W1sZmlsZQ%3D%3D"
	uriC = "vscode-notebook-cell:/home/u/titanic.ipynb#W2sZmlsZQ%3D%3D"
	uriD = "vscode-notebook-cell:/home/u/titanic.ipynb#W3sZmlsZQ%3D%3D"
	uriN = "vscode-notebook-cell:/home/u/titanic.ipynb#W4sZmlsZQ%3D%3D"
)

var shortName = map[string]string{uriA: "A", uriB: "B", uriC: "C", uriD: "D", uriN: "N"}

func boolp(b bool) *bool { return &b }

// openABCD opens a four-cell notebook: A and B ran (1, 2), C is markdown, D never ran.
func openABCD(t testing.TB) *Notebook {
	t.Helper()
	nb, err := Open("file:///home/u/titanic.ipynb", "jupyter-notebook", 1, map[string]any{"k": "v"},
		[]CellData{
			{ID: uriA, Kind: Code, HasSummary: true, ExecutionOrder: 1, Success: boolp(true)},
			{ID: uriB, Kind: Code, HasSummary: true, ExecutionOrder: 2, Success: boolp(true)},
			{ID: uriC, Kind: Markup, Metadata: map[string]any{"tags": []any{"intro"}}},
			{ID: uriD, Kind: Code},
		},
		[]OpenedCell{
			{ID: uriD, Language: "python", Version: 1, Text: "df.Age.mean()\n"},
			{ID: uriA, Language: "python", Version: 1, Text: "import pandas as pd"},
			{ID: uriB, Language: "python", Version: 1, Text: "df = pd.read_csv(\"数据.csv\")"},
			{ID: uriC, Language: "markdown", Version: 1, Text: "# Titanic 🚢"},
		})
	if err != nil {
		t.Fatal(err)
	}
	return nb
}

// describe renders the notebook's cells compactly: "A code python v1 run1 ok: text".
func describe(nb *Notebook) []string {
	var out []string
	for _, c := range nb.Cells {
		name := shortName[c.ID]
		if name == "" {
			name = c.ID
		}
		kind := "code"
		if c.Kind == Markup {
			kind = "markup"
		}
		run := "-"
		if c.ExecutionOrder > 0 || c.Success != nil {
			run = fmt.Sprintf("run%d", c.ExecutionOrder)
			if c.Success != nil {
				run += map[bool]string{true: " ok", false: " failed"}[*c.Success]
			}
		}
		out = append(out, fmt.Sprintf("%s %s %s v%d %s: %s", name, kind, c.Language, c.Version, run, c.Text))
	}
	return out
}

var (
	cellA = "A code python v1 run1 ok: import pandas as pd"
	cellB = "B code python v1 run2 ok: df = pd.read_csv(\"数据.csv\")"
	cellC = "C markup markdown v1 -: # Titanic 🚢"
	cellD = "D code python v1 -: df.Age.mean()\n"
)

func code(id string) CellData   { return CellData{ID: id, Kind: Code} }
func markup(id string) CellData { return CellData{ID: id, Kind: Markup} }
func ran(id string, order int, ok bool) CellData {
	return CellData{ID: id, Kind: Code, HasSummary: true, ExecutionOrder: order, Success: boolp(ok)}
}
func typed(id string, version, line, char int, text string) TextChange {
	return TextChange{ID: id, Version: version, Edits: []TextEdit{{StartLine: line, StartChar: char, EndLine: line, EndChar: char, Text: text}}}
}

func TestOpen(t *testing.T) {
	nb := openABCD(t)
	if got, want := describe(nb), []string{cellA, cellB, cellC, cellD}; !reflect.DeepEqual(got, want) {
		t.Fatalf("cells:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if nb.URI != "file:///home/u/titanic.ipynb" || nb.Type != "jupyter-notebook" || nb.Version != 1 || nb.Metadata["k"] != "v" {
		t.Errorf("notebook fields: %+v", nb)
	}
	if got := nb.Cells[2].Metadata["tags"]; !reflect.DeepEqual(got, []any{"intro"}) {
		t.Errorf("cell metadata tags = %v", got)
	}
}

func TestOpenErrors(t *testing.T) {
	tests := []struct {
		name    string
		cells   []CellData
		opened  []OpenedCell
		wantErr string
	}{
		{"cell without text", []CellData{code(uriA)}, nil, "has no text"},
		{"text without cell", []CellData{code(uriA)}, []OpenedCell{{ID: uriA}, {ID: uriB}}, "didOpen for cell \"" + uriB + "\", which is not in the notebook's cell array"},
		{"duplicate cell", []CellData{code(uriA), code(uriA)}, []OpenedCell{{ID: uriA}}, "in the notebook twice"},
		{"duplicate text", []CellData{code(uriA)}, []OpenedCell{{ID: uriA}, {ID: uriA}}, "didOpen lists cell"},
		{"bad kind", []CellData{{ID: uriA, Kind: 7}}, []OpenedCell{{ID: uriA}}, "cell kind 7"},
		{"empty id", []CellData{{Kind: Code}}, []OpenedCell{{}}, "empty document URI"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Open("file:///n.ipynb", "jupyter-notebook", 1, nil, tt.cells, tt.opened)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), "open notebook file:///n.ipynb") {
				t.Fatalf("error = %v, want %q", err, tt.wantErr)
			}
		})
	}
	nb, err := Open("file:///empty.ipynb", "jupyter-notebook", 0, nil, nil, nil)
	if err != nil || len(nb.Cells) != 0 {
		t.Fatalf("empty notebook: %v, %v", nb, err)
	}
}

func TestApply(t *testing.T) {
	tests := []struct {
		name    string
		changes []Change
		want    []string
	}{
		{
			name:    "nothing",
			changes: []Change{{}},
			want:    []string{cellA, cellB, cellC, cellD},
		},
		{
			// VS Code's diff of [A B C D] -> [D A B C]: no common prefix or suffix, and D is
			// in neither didOpen nor didClose. ruff lost D's text here (ruff#12573).
			name:    "moved cell keeps its text",
			changes: []Change{{Structure: &StructureChange{Start: 0, DeleteCount: 4, Cells: []CellData{code(uriD), ran(uriA, 1, true), ran(uriB, 2, true), markup(uriC)}}}},
			want:    []string{"D code python v1 -: df.Age.mean()\n", cellA, cellB, cellC},
		},
		{
			// The array carries each cell's full state, as on the wire: a moved cell sent
			// without executionSummary has none.
			name:    "moved cell takes kind and summary from the array",
			changes: []Change{{Structure: &StructureChange{Start: 0, DeleteCount: 2, Cells: []CellData{ran(uriB, 2, true), code(uriA)}}}},
			want:    []string{cellB, "A code python v1 -: import pandas as pd", cellC, cellD},
		},
		{
			name:    "swap middle cells",
			changes: []Change{{Structure: &StructureChange{Start: 1, DeleteCount: 2, Cells: []CellData{markup(uriC), ran(uriB, 2, true)}}}},
			want:    []string{cellA, cellC, cellB, cellD},
		},
		{
			name: "insert at start",
			changes: []Change{{Structure: &StructureChange{Start: 0, Cells: []CellData{code(uriN)},
				Opened: []OpenedCell{{ID: uriN, Language: "python", Version: 1, Text: "import numpy as np"}}}}},
			want: []string{"N code python v1 -: import numpy as np", cellA, cellB, cellC, cellD},
		},
		{
			name: "insert at end",
			changes: []Change{{Structure: &StructureChange{Start: 4, Cells: []CellData{code(uriN)},
				Opened: []OpenedCell{{ID: uriN, Language: "python", Version: 1, Text: ""}}}}},
			want: []string{cellA, cellB, cellC, cellD, "N code python v1 -: "},
		},
		{
			name:    "delete top cell",
			changes: []Change{{Structure: &StructureChange{Start: 0, DeleteCount: 1, Closed: []string{uriA}}}},
			want:    []string{cellB, cellC, cellD},
		},
		{
			name:    "delete all cells",
			changes: []Change{{Structure: &StructureChange{Start: 0, DeleteCount: 4, Closed: []string{uriA, uriB, uriC, uriD}}}},
		},
		{
			name:    "deleted without didClose just leaves",
			changes: []Change{{Structure: &StructureChange{Start: 3, DeleteCount: 1}}},
			want:    []string{cellA, cellB, cellC},
		},
		{
			// A language change closes and reopens the cell document in one change.
			name: "language change in one change",
			changes: []Change{{Structure: &StructureChange{Start: 3, DeleteCount: 1, Cells: []CellData{code(uriD)},
				Opened: []OpenedCell{{ID: uriD, Language: "sql", Version: 1, Text: "SELECT 1"}}, Closed: []string{uriD}}}},
			want: []string{cellA, cellB, cellC, "D code sql v1 -: SELECT 1"},
		},
		{
			name: "language change reopened outside the splice",
			changes: []Change{{Structure: &StructureChange{Start: 4,
				Opened: []OpenedCell{{ID: uriA, Language: "r", Version: 2, Text: "library(x)"}}, Closed: []string{uriA}}}},
			want: []string{"A code r v2 run1 ok: library(x)", cellB, cellC, cellD},
		},
		{
			// Python -> markdown: the cell stops matching the selector (closed), then the
			// client may send it back as a new cell document.
			name: "language change as two changes",
			changes: []Change{
				{Structure: &StructureChange{Start: 1, DeleteCount: 1, Closed: []string{uriB}}},
				{Structure: &StructureChange{Start: 1, Cells: []CellData{markup(uriB)},
					Opened: []OpenedCell{{ID: uriB, Language: "markdown", Version: 1, Text: "notes"}}}},
			},
			want: []string{cellA, "B markup markdown v1 -: notes", cellC, cellD},
		},
		{
			name:    "executionSummary arrives",
			changes: []Change{{Data: []CellData{ran(uriD, 3, false)}}},
			want:    []string{cellA, cellB, cellC, "D code python v1 run3 failed: df.Age.mean()\n"},
		},
		{
			name:    "executionSummary without success",
			changes: []Change{{Data: []CellData{{ID: uriD, Kind: Code, HasSummary: true, ExecutionOrder: 3}}}},
			want:    []string{cellA, cellB, cellC, "D code python v1 run3: df.Age.mean()\n"},
		},
		{
			// While a cell runs, and after "clear outputs", the summary is absent.
			name:    "executionSummary cleared",
			changes: []Change{{Data: []CellData{code(uriB)}}},
			want:    []string{cellA, "B code python v1 -: df = pd.read_csv(\"数据.csv\")", cellC, cellD},
		},
		{
			name: "run: cleared then arrives",
			changes: []Change{
				{Data: []CellData{code(uriA)}},
				{Data: []CellData{ran(uriA, 5, true)}},
			},
			want: []string{"A code python v1 run5 ok: import pandas as pd", cellB, cellC, cellD},
		},
		{
			name:    "kind change by data",
			changes: []Change{{Data: []CellData{markup(uriD)}}},
			want:    []string{cellA, cellB, cellC, "D markup python v1 -: df.Age.mean()\n"},
		},
		{
			name:    "typing",
			changes: []Change{{Text: []TextChange{typed(uriD, 2, 0, 6, "x")}}, {Text: []TextChange{typed(uriD, 3, 0, 7, "y")}}},
			want:    []string{cellA, cellB, cellC, "D code python v3 -: df.Agexy.mean()\n"},
		},
		{
			name:    "typing after emoji in markdown",
			changes: []Change{{Text: []TextChange{typed(uriC, 2, 0, 12, "!")}}},
			want:    []string{cellA, cellB, "C markup markdown v2 -: # Titanic 🚢!", cellD},
		},
		{
			name:    "typing after CJK",
			changes: []Change{{Text: []TextChange{{ID: uriB, Version: 2, Edits: []TextEdit{{StartLine: 0, StartChar: 18, EndLine: 0, EndChar: 20, Text: "资料"}}}}}},
			want:    []string{cellA, "B code python v2 run2 ok: df = pd.read_csv(\"资料.csv\")", cellC, cellD},
		},
		{
			name:    "text version 0 keeps the version",
			changes: []Change{{Text: []TextChange{{ID: uriA, Edits: []TextEdit{{Full: true, Text: "import polars as pl"}}}}}},
			want:    []string{"A code python v1 run1 ok: import polars as pl", cellB, cellC, cellD},
		},
		{
			name: "structure then data then text in one change",
			changes: []Change{{
				Structure: &StructureChange{Start: 1, Cells: []CellData{code(uriN)},
					Opened: []OpenedCell{{ID: uriN, Language: "python", Version: 1, Text: "y = 1"}}},
				Data: []CellData{ran(uriN, 9, true)},
				Text: []TextChange{typed(uriN, 2, 0, 5, "0"), typed(uriA, 2, 0, 0, "# ")},
			}},
			want: []string{"A code python v2 run1 ok: # import pandas as pd", "N code python v2 run9 ok: y = 10", cellB, cellC, cellD},
		},
		{
			name: "move then type in the moved cell",
			changes: []Change{{
				Structure: &StructureChange{Start: 0, DeleteCount: 4, Cells: []CellData{code(uriD), ran(uriA, 1, true), ran(uriB, 2, true), markup(uriC)}},
				Text:      []TextChange{typed(uriD, 2, 1, 0, "df.Fare.sum()")},
			}},
			want: []string{"D code python v2 -: df.Age.mean()\ndf.Fare.sum()", cellA, cellB, cellC},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			nb := openABCD(t)
			for i, ch := range tt.changes {
				if err := nb.Apply(ch); err != nil {
					t.Fatalf("change %d: %v", i, err)
				}
			}
			if got := describe(nb); !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("cells:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

func TestApplyNotebookFields(t *testing.T) {
	nb := openABCD(t)
	md := map[string]any{"kernelspec": map[string]any{"name": "python3"}}
	if err := nb.Apply(Change{Version: 7, Metadata: md}); err != nil {
		t.Fatal(err)
	}
	if nb.Version != 7 || nb.KernelName() != "python3" {
		t.Fatalf("version %d, kernel %q", nb.Version, nb.KernelName())
	}
	if err := nb.Apply(Change{Text: []TextChange{typed(uriA, 2, 0, 0, "x")}}); err != nil {
		t.Fatal(err)
	}
	if nb.Version != 7 || nb.KernelName() != "python3" {
		t.Fatalf("a text-only change (version 0, no metadata) changed version %d or metadata %v", nb.Version, nb.Metadata)
	}
	if err := nb.Apply(Change{Data: []CellData{{ID: uriC, Kind: Markup, Metadata: map[string]any{"tags": []any{}}}}}); err != nil {
		t.Fatal(err)
	}
	if got := nb.Cells[2].Metadata["tags"]; !reflect.DeepEqual(got, []any{}) {
		t.Fatalf("cell metadata not replaced: %v", nb.Cells[2].Metadata)
	}
}

// TestApplyErrors checks that a bad change is refused with a clear error and leaves the
// notebook exactly as it was, even when its first parts were fine.
func TestApplyErrors(t *testing.T) {
	opened := func(id string) []OpenedCell { return []OpenedCell{{ID: id, Language: "python", Text: "new"}} }
	tests := []struct {
		name    string
		change  Change
		wantErr string
	}{
		{"splice start past end", Change{Structure: &StructureChange{Start: 5}}, "cells.structure: array splice start 5, deleteCount 0 is out of range for 4 cells"},
		{"splice deletes past end", Change{Structure: &StructureChange{Start: 2, DeleteCount: 3}}, "out of range"},
		{"negative start", Change{Structure: &StructureChange{Start: -1}}, "out of range"},
		{"negative delete", Change{Structure: &StructureChange{DeleteCount: -1}}, "out of range"},
		{"unknown cell in array", Change{Structure: &StructureChange{Start: 0, Cells: []CellData{code(uriN)}}}, "has no text: it is neither in didOpen nor already in the notebook"},
		{"moved cell not deleted", Change{Structure: &StructureChange{Start: 0, Cells: []CellData{code(uriD)}}}, "would be in the notebook twice"},
		{"close unknown cell", Change{Structure: &StructureChange{Start: 0, Closed: []string{uriN}}}, "didClose for cell \"" + uriN + "\", which is not in the notebook"},
		{"closed cell still there", Change{Structure: &StructureChange{Start: 0, Closed: []string{uriA}}}, "is closed but still in the notebook"},
		{"closed cell in array", Change{Structure: &StructureChange{Start: 0, DeleteCount: 1, Cells: []CellData{code(uriA)}, Closed: []string{uriA}}}, "is closed but still in the array"},
		{"opened cell not in array", Change{Structure: &StructureChange{Start: 0, Opened: opened(uriN)}}, "not in the notebook's cell array"},
		{"bad kind in array", Change{Structure: &StructureChange{Start: 0, Cells: []CellData{{ID: uriN}}, Opened: opened(uriN)}}, "cell kind 0"},
		{"unknown cell in data", Change{Data: []CellData{code(uriN)}}, "cells.data[0]: unknown cell \"" + uriN + "\""},
		{"bad kind in data", Change{Data: []CellData{{ID: uriA, Kind: 3}}}, "cell kind 3"},
		{"negative execution order", Change{Data: []CellData{{ID: uriA, Kind: Code, HasSummary: true, ExecutionOrder: -2}}}, "executionOrder -2 is negative"},
		{"unknown cell in text", Change{Text: []TextChange{typed(uriN, 2, 0, 0, "x")}}, "cells.textContent[0]: unknown cell"},
		{"deleted cell in text", Change{Structure: &StructureChange{Start: 0, DeleteCount: 1, Closed: []string{uriA}}, Text: []TextChange{typed(uriA, 2, 0, 0, "x")}}, "unknown cell"},
		{"line past end", Change{Text: []TextChange{typed(uriA, 2, 1, 0, "x")}}, "line 1 is past the end of the text (it has 1 lines)"},
		{
			"structure and data fine, second text edit bad",
			Change{
				Version:   9,
				Metadata:  map[string]any{"x": 1},
				Structure: &StructureChange{Start: 0, DeleteCount: 1, Closed: []string{uriA}},
				Data:      []CellData{ran(uriD, 4, true)},
				Text:      []TextChange{typed(uriB, 2, 0, 0, "x"), typed(uriC, 2, 3, 0, "y")},
			},
			"cells.textContent[1]",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			nb := openABCD(t)
			before := nb.Clone()
			cells := append([]*Cell(nil), nb.Cells...)
			err := nb.Apply(tt.change)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("error = %v, want %q", err, tt.wantErr)
			}
			if !reflect.DeepEqual(nb, before) {
				t.Fatalf("a refused change modified the notebook:\n%s", strings.Join(describe(nb), "\n"))
			}
			for i := range cells {
				if nb.Cells[i] != cells[i] {
					t.Fatalf("a refused change replaced cell %d", i)
				}
			}
		})
	}
}

// TestApplyKeepsSnapshots checks that a *Cell or Clone taken before Apply still shows the
// old state: the server hands them to analysis passes that run while edits arrive.
func TestApplyKeepsSnapshots(t *testing.T) {
	nb := openABCD(t)
	snap := nb.Clone()
	oldD := nb.Cells[3]
	oldCells := nb.Cells
	changes := []Change{
		{Text: []TextChange{typed(uriD, 2, 0, 0, "x = ")}},
		{Data: []CellData{ran(uriD, 3, true)}},
		{Structure: &StructureChange{Start: 0, DeleteCount: 4, Cells: []CellData{ran(uriD, 3, true), ran(uriA, 1, true), ran(uriB, 2, true), markup(uriC)}}},
	}
	for _, ch := range changes {
		if err := nb.Apply(ch); err != nil {
			t.Fatal(err)
		}
	}
	if oldD.Text != "df.Age.mean()\n" || oldD.ExecutionOrder != 0 || oldD.Version != 1 {
		t.Errorf("old *Cell changed: %+v", oldD)
	}
	if oldCells[0].ID != uriA || oldCells[3] != oldD {
		t.Errorf("old cell slice changed")
	}
	if got, want := describe(snap), []string{cellA, cellB, cellC, cellD}; !reflect.DeepEqual(got, want) {
		t.Errorf("clone changed:\n%s", strings.Join(got, "\n"))
	}
	if nb.Cells[0].Text != "x = df.Age.mean()\n" || nb.Cells[0].ExecutionOrder != 3 {
		t.Errorf("new state wrong: %s", strings.Join(describe(nb), "\n"))
	}
}
