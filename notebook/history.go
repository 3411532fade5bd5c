package notebook

import "sort"

// CodeCells returns the code cells in page order.
func (nb *Notebook) CodeCells() []*Cell {
	var out []*Cell
	for _, c := range nb.Cells {
		if c.Kind == Code {
			out = append(out, c)
		}
	}
	return out
}

// History returns the code cells that ran in the kernel, in the order they last ran
// (ExecutionOrder ascending). Cells with the same order (a kernel restart can repeat counts)
// keep their page order.
func (nb *Notebook) History() []*Cell {
	var out []*Cell
	for _, c := range nb.Cells {
		if c.Kind == Code && c.Executed() {
			out = append(out, c)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].ExecutionOrder < out[j].ExecutionOrder })
	return out
}
