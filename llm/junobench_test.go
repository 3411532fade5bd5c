package llm

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestJunoBenchPrompts builds the code-setting prompt of every development case (copied
// under testdata/junobench) and checks what must always hold: the numbered target is there,
// every statement of the target's direct dependencies the slicer keeps is real cell text,
// and slicing never sends more cells than were executed.
func TestJunoBenchPrompts(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("..", "testdata", "junobench", "cases", "*", "*.json"))
	if len(files) == 0 {
		t.Fatal("no JunoBench cases under testdata/junobench")
	}
	for _, path := range files {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var c struct {
			Executed []struct{ Code string } `json:"executed"`
			Target   struct{ Code string }   `json:"target"`
		}
		if err := json.Unmarshal(b, &c); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		var ex []CellText
		for i, e := range c.Executed {
			ex = append(ex, CellText{Index: i, ExecutionOrder: i + 1, Text: e.Code})
		}
		in := Input{Executed: ex, Target: CellText{Text: c.Target.Code}, Dependencies: SliceDependencies(ex, c.Target.Code)}
		p := BuildPrompt(in, Config{})
		if !strings.Contains(p.User, numberLines(c.Target.Code)) {
			t.Errorf("%s: numbered target missing", path)
		}
		if len(p.Cells) > len(ex) {
			t.Errorf("%s: %d cells sent of %d", path, len(p.Cells), len(ex))
		}
		for _, i := range p.Cells {
			text, _ := sliceStatements(ex, c.Target.Code, nil).excerpt(i, ex[i].Text)
			for _, line := range strings.Split(text, "\n") {
				if !strings.Contains(ex[i].Text, line) {
					t.Errorf("%s: cell %d excerpt line %q is not in the cell", path, i, line)
				}
			}
		}
	}
}
