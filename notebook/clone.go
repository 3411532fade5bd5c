package notebook

// Clone returns a deep copy of the notebook: a snapshot that later Apply calls on nb do not
// change, and that can be read while nb is edited. Metadata maps are copied; the unexported
// round-trip fields are shared, which is safe because nothing modifies them after parsing.
func (nb *Notebook) Clone() *Notebook {
	out := *nb
	out.Metadata = copyMap(nb.Metadata)
	out.Cells = make([]*Cell, len(nb.Cells))
	for i, c := range nb.Cells {
		out.Cells[i] = c.Clone()
	}
	if nb.Cells == nil {
		out.Cells = nil
	}
	return &out
}

// Clone returns a deep copy of the cell.
func (c *Cell) Clone() *Cell {
	out := *c
	out.Metadata = copyMap(c.Metadata)
	if c.Success != nil {
		ok := *c.Success
		out.Success = &ok
	}
	return &out
}

// copyMap deep-copies a JSON-like map; nil stays nil.
func copyMap(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = copyValue(v)
	}
	return out
}

// copyValue deep-copies JSON-like values (maps and slices); other values are immutable
// (strings, numbers, booleans) or not ours to copy and are shared.
func copyValue(v any) any {
	switch v := v.(type) {
	case map[string]any:
		return copyMap(v)
	case []any:
		if v == nil {
			return v
		}
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = copyValue(e)
		}
		return out
	case []string:
		if v == nil {
			return v
		}
		return append([]string(nil), v...)
	default:
		return v
	}
}
