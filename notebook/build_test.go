package notebook

import (
	"reflect"
	"testing"
)

// TestNewPython: a built notebook writes as an .ipynb that reads back with the same cells,
// execution counts and kernelspec, and cell IDs as a file's.
func TestNewPython(t *testing.T) {
	nb := NewPython("built.ipynb")
	nb.AddCode("import pandas as pd\ndf = pd.DataFrame()", 1)
	nb.AddCode("df['x']", 0)
	data, err := nb.MarshalIpynb()
	if err != nil {
		t.Fatal(err)
	}
	back, err := ParseIpynb(data, "built.ipynb")
	if err != nil {
		t.Fatalf("%v\n%s", err, data)
	}
	if back.KernelName() != "python3" || back.Language() != "python" || len(back.Cells) != 2 {
		t.Fatalf("read back kernel %q, language %q, %d cells\n%s", back.KernelName(), back.Language(), len(back.Cells), data)
	}
	for i, c := range back.Cells {
		want := nb.Cells[i]
		got := []any{c.ID, c.Kind, c.Language, c.Text, c.ExecutionOrder}
		if w := []any{want.ID, want.Kind, want.Language, want.Text, want.ExecutionOrder}; !reflect.DeepEqual(got, w) {
			t.Errorf("cell %d read back as %v, want %v", i, got, w)
		}
	}
}
