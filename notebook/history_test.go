package notebook

import (
	"reflect"
	"testing"
)

func ids(cells []*Cell) []string {
	var out []string
	for _, c := range cells {
		out = append(out, c.ID)
	}
	return out
}

func TestHistoryAndCodeCells(t *testing.T) {
	nb := &Notebook{Cells: []*Cell{
		{ID: "md", Kind: Markup, ExecutionOrder: 1}, // markup never counts
		{ID: "late", Kind: Code, ExecutionOrder: 9},
		{ID: "never", Kind: Code},
		{ID: "first", Kind: Code, ExecutionOrder: 2},
		{ID: "tie-a", Kind: Code, ExecutionOrder: 5}, // after a kernel restart counts repeat
		{ID: "tie-b", Kind: Code, ExecutionOrder: 5},
		{ID: "raw", Kind: Markup, Language: "raw"},
	}}
	if got, want := ids(nb.History()), []string{"first", "tie-a", "tie-b", "late"}; !reflect.DeepEqual(got, want) {
		t.Errorf("History = %v, want %v", got, want)
	}
	if got, want := ids(nb.CodeCells()), []string{"late", "never", "first", "tie-a", "tie-b"}; !reflect.DeepEqual(got, want) {
		t.Errorf("CodeCells = %v, want %v", got, want)
	}
	if got := (&Notebook{}).History(); len(got) != 0 {
		t.Errorf("empty History = %v", got)
	}
}

func TestClone(t *testing.T) {
	nb := openABCD(t)
	nb.Metadata = map[string]any{"ks": map[string]any{"name": "python3"}, "list": []any{map[string]any{"a": 1}}, "strs": []string{"x"}}
	c := nb.Clone()
	if !reflect.DeepEqual(c, nb) {
		t.Fatal("clone differs")
	}
	c.Metadata["ks"].(map[string]any)["name"] = "changed"
	c.Metadata["list"].([]any)[0].(map[string]any)["a"] = 2
	c.Metadata["strs"].([]string)[0] = "y"
	c.Cells[2].Metadata["tags"].([]any)[0] = "changed"
	*c.Cells[0].Success = false
	c.Cells[1].Text = "changed"
	c.Cells = c.Cells[:1]
	if nb.Metadata["ks"].(map[string]any)["name"] != "python3" || nb.Metadata["list"].([]any)[0].(map[string]any)["a"] != 1 || nb.Metadata["strs"].([]string)[0] != "x" {
		t.Errorf("clone shares notebook metadata: %v", nb.Metadata)
	}
	if got, want := describe(nb), []string{cellA, cellB, cellC, cellD}; !reflect.DeepEqual(got, want) {
		t.Errorf("clone shares cells: %v", got)
	}
	if nb.Cells[2].Metadata["tags"].([]any)[0] != "intro" {
		t.Errorf("clone shares cell metadata")
	}
	if (&Notebook{}).Clone().Cells != nil {
		t.Errorf("clone of an empty notebook has cells")
	}
}

func TestCellAndIndex(t *testing.T) {
	nb := openABCD(t)
	if c := nb.Cell(uriC); c == nil || c.Text != "# Titanic 🚢" || nb.Index(uriC) != 2 {
		t.Errorf("Cell/Index of C: %v, %d", c, nb.Index(uriC))
	}
	if nb.Cell("nope") != nil || nb.Index("nope") != -1 {
		t.Errorf("unknown cell found")
	}
}
