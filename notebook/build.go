package notebook

import "fmt"

// NewPython returns an empty Jupyter notebook for the python3 kernel, with the kernelspec
// metadata Jupyter writes, for code that builds notebooks to judge or to write
// (MarshalIpynb) rather than reading them.
func NewPython(uri string) *Notebook {
	return &Notebook{URI: uri, Type: "jupyter-notebook", Metadata: map[string]any{
		"kernelspec": map[string]any{"name": "python3", "display_name": "Python 3", "language": "python"},
	}}
}

// AddCode appends a Python code cell with text and returns it; order is its execution
// count (0: never run). Its ID is "cell-<index>", as a cell read from a file gets.
func (nb *Notebook) AddCode(text string, order int) *Cell {
	c := &Cell{ID: fmt.Sprintf("cell-%d", len(nb.Cells)), Kind: Code, Language: "python", Text: text, ExecutionOrder: order}
	nb.Cells = append(nb.Cells, c)
	return c
}
