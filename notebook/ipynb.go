package notebook

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"strconv"
	"strings"
)

// ParseIpynb reads a Jupyter notebook (nbformat 4.x). uri becomes the notebook's URI and
// names it in errors. Cells get IDs "cell-<index>" (0-based page position); nbformat cell
// ids are kept for writing but not used as keys.
//
// A cell's source may be a string or a list of strings; execution_count becomes
// ExecutionOrder (null: 0); Success is false when the cell has an "error" output, true when
// it ran without one, nil when it never ran. Numbers are decoded as json.Number (in
// metadata too), so they are written back exactly as read.
//
// Malformed input gives an error naming the place, such as
// "cells[3].source is a number, want a string or a list of strings"; ParseIpynb never
// panics.
func ParseIpynb(data []byte, uri string) (*Notebook, error) {
	nb, err := parseIpynb(data, uri)
	if err != nil {
		return nil, fmt.Errorf("read notebook %s: %w", uri, err)
	}
	return nb, nil
}

func parseIpynb(data []byte, uri string) (*Notebook, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var top any
	if err := dec.Decode(&top); err != nil {
		return nil, jsonError(data, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("not a notebook: unexpected data after the JSON object at byte %d", dec.InputOffset())
	}
	obj, ok := top.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("not a notebook: the file is JSON %s, want an object", typeName(top))
	}
	if err := checkFormat(obj); err != nil {
		return nil, err
	}
	nb := &Notebook{URI: uri, Type: "jupyter-notebook", raw: map[string]any{}}
	for k, v := range obj {
		if k != "cells" && k != "metadata" {
			nb.raw[k] = v
		}
	}
	switch m := obj["metadata"].(type) {
	case map[string]any:
		nb.Metadata = m
	case nil:
		nb.Metadata = map[string]any{}
	default:
		return nil, fmt.Errorf("metadata is %s, want an object", typeName(m))
	}
	list, ok := obj["cells"].([]any)
	if !ok {
		if _, present := obj["cells"]; !present {
			return nil, fmt.Errorf("cells is missing; is this a Jupyter notebook?")
		}
		return nil, fmt.Errorf("cells is %s, want a list", typeName(obj["cells"]))
	}
	lang := nb.Language()
	nb.Cells = make([]*Cell, 0, len(list))
	for i, v := range list {
		c, err := parseCell(v, lang)
		if err != nil {
			return nil, fmt.Errorf("cells[%d]%s", i, err)
		}
		c.ID = "cell-" + strconv.Itoa(i)
		nb.Cells = append(nb.Cells, c)
	}
	return nb, nil
}

// checkFormat accepts nbformat 4 (any minor version) only.
func checkFormat(obj map[string]any) error {
	v, present := obj["nbformat"]
	if !present {
		return fmt.Errorf("nbformat is missing; is this a Jupyter notebook?")
	}
	n, ok := intValue(v)
	if !ok {
		return fmt.Errorf("nbformat is %s, want the number 4", typeName(v))
	}
	if n != 4 {
		return fmt.Errorf("nbformat %d is not supported, want 4 (convert it with: jupyter nbconvert --to notebook --nbformat 4 FILE)", n)
	}
	if m, present := obj["nbformat_minor"]; present {
		if _, ok := intValue(m); !ok {
			return fmt.Errorf("nbformat_minor is %s, want an integer", typeName(m))
		}
	}
	return nil
}

// parseCell models one cell object; errors start with the field path after "cells[i]".
func parseCell(v any, lang string) (*Cell, error) {
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf(" is %s, want an object", typeName(v))
	}
	c := &Cell{raw: make(map[string]any, len(obj))}
	for k, v := range obj {
		if k != "metadata" {
			c.raw[k] = v
		}
	}
	switch t := obj["cell_type"].(type) {
	case string:
		switch t {
		case "code":
			c.Kind, c.Language = Code, lang
		case "markdown":
			c.Kind, c.Language = Markup, "markdown"
		case "raw":
			c.Kind, c.Language = Markup, "raw"
		default:
			return nil, fmt.Errorf(".cell_type is %q, want code, markdown or raw", t)
		}
	case nil:
		if _, present := obj["cell_type"]; !present {
			return nil, fmt.Errorf(".cell_type is missing")
		}
		return nil, fmt.Errorf(".cell_type is null, want code, markdown or raw")
	default:
		return nil, fmt.Errorf(".cell_type is %s, want code, markdown or raw", typeName(t))
	}
	text, err := sourceText(obj["source"])
	if err != nil {
		if _, present := obj["source"]; !present {
			return nil, fmt.Errorf(".source is missing")
		}
		return nil, fmt.Errorf(".source%w", err)
	}
	c.Text = text
	switch m := obj["metadata"].(type) {
	case map[string]any:
		c.Metadata = m
	case nil:
	default:
		return nil, fmt.Errorf(".metadata is %s, want an object", typeName(m))
	}
	if c.Kind != Code {
		return c, nil
	}
	switch n := obj["execution_count"].(type) {
	case nil:
	case json.Number:
		k, ok := intValue(n)
		if !ok || k < 0 {
			return nil, fmt.Errorf(".execution_count is %s, want a non-negative integer or null", n)
		}
		c.ExecutionOrder = k
	default:
		return nil, fmt.Errorf(".execution_count is %s, want an integer or null", typeName(n))
	}
	failed := false
	switch outs := obj["outputs"].(type) {
	case nil:
	case []any:
		for j, o := range outs {
			out, ok := o.(map[string]any)
			if !ok {
				return nil, fmt.Errorf(".outputs[%d] is %s, want an object", j, typeName(o))
			}
			if out["output_type"] == "error" {
				failed = true
			}
		}
	default:
		return nil, fmt.Errorf(".outputs is %s, want a list", typeName(outs))
	}
	if failed || c.ExecutionOrder > 0 {
		ok := !failed
		c.Success = &ok
	}
	return c, nil
}

// sourceText joins an nbformat multiline string: a string, or a list of strings that are
// concatenated as they are (each line keeps its "\n").
func sourceText(v any) (string, error) {
	switch s := v.(type) {
	case string:
		return s, nil
	case []any:
		var b strings.Builder
		for i, line := range s {
			l, ok := line.(string)
			if !ok {
				return "", fmt.Errorf("[%d] is %s, want a string", i, typeName(line))
			}
			b.WriteString(l)
		}
		return b.String(), nil
	default:
		return "", fmt.Errorf(" is %s, want a string or a list of strings", typeName(v))
	}
}

// MarshalIpynb writes the notebook as nbformat 4 JSON the way Jupyter does (keys sorted,
// one-space indent, non-ASCII unescaped, a final newline), so a notebook read with
// ParseIpynb and written back unchanged is byte-identical to a file Jupyter wrote.
//
// Fields premortem does not model are written back as read. An edited source is written
// as a list of lines (or a string if it was one). A notebook that did not come from a
// file is written as nbformat 4.5, and cells without an nbformat id get one derived from
// their ID when the notebook's minor version is 5 or more.
func (nb *Notebook) MarshalIpynb() ([]byte, error) {
	top := make(map[string]any, len(nb.raw)+4)
	for k, v := range nb.raw {
		top[k] = v
	}
	if _, ok := top["nbformat"]; !ok {
		top["nbformat"] = json.Number("4")
	}
	if _, ok := top["nbformat_minor"]; !ok {
		top["nbformat_minor"] = json.Number("5")
	}
	top["metadata"] = orEmpty(nb.Metadata)
	minor, _ := intValue(top["nbformat_minor"])
	ids := newCellIDs(nb.Cells, minor >= 5)
	cells := make([]any, len(nb.Cells))
	for i, c := range nb.Cells {
		cells[i] = c.ipynb(ids)
	}
	top["cells"] = cells
	var buf bytes.Buffer
	if err := writeJSON(&buf, top, 0); err != nil {
		return nil, fmt.Errorf("write notebook %s: %w", nb.URI, err)
	}
	buf.WriteByte('\n')
	return buf.Bytes(), nil
}

// ipynb returns the cell as an nbformat cell object, built fresh (raw is not modified).
func (c *Cell) ipynb(ids *cellIDs) map[string]any {
	out := make(map[string]any, len(c.raw)+5)
	for k, v := range c.raw {
		out[k] = v
	}
	switch {
	case c.Kind == Code:
		out["cell_type"] = "code"
	case c.Language == "raw":
		out["cell_type"] = "raw"
	default:
		out["cell_type"] = "markdown"
	}
	if old, err := sourceText(c.raw["source"]); err != nil || old != c.Text {
		if _, wasString := c.raw["source"].(string); wasString {
			out["source"] = c.Text
		} else {
			out["source"] = splitLines(c.Text)
		}
	}
	out["metadata"] = orEmpty(c.Metadata)
	if c.Kind == Code {
		if n, ok := c.raw["execution_count"]; !ok || executionCount(n) != c.ExecutionOrder {
			out["execution_count"] = nil
			if c.ExecutionOrder > 0 {
				out["execution_count"] = c.ExecutionOrder
			}
		}
		if _, ok := out["outputs"].([]any); !ok {
			out["outputs"] = []any{}
		}
	} else {
		delete(out, "execution_count")
		delete(out, "outputs")
	}
	if id := ids.id(c); id != "" {
		out["id"] = id
	}
	return out
}

// executionCount is the ExecutionOrder an nbformat execution_count value means.
func executionCount(v any) int {
	n, _ := intValue(v)
	return n
}

// splitLines splits text into nbformat source lines, each keeping its "\n".
func splitLines(text string) []any {
	lines := []any{}
	for text != "" {
		i := strings.IndexByte(text, '\n')
		if i < 0 {
			lines = append(lines, text)
			break
		}
		lines = append(lines, text[:i+1])
		text = text[i+1:]
	}
	return lines
}

// cellIDs hands out nbformat cell ids (required from nbformat 4.5) to cells that have none,
// derived from the cell's ID so that writing twice gives the same file.
type cellIDs struct {
	need bool
	used map[string]bool
}

func newCellIDs(cells []*Cell, need bool) *cellIDs {
	ids := &cellIDs{need: need, used: map[string]bool{}}
	for _, c := range cells {
		if s, ok := c.raw["id"].(string); ok {
			ids.used[s] = true
		}
	}
	return ids
}

// id returns the id to set on c, or "" to keep what c.raw has.
func (ids *cellIDs) id(c *Cell) string {
	if _, ok := c.raw["id"]; ok || !ids.need {
		return ""
	}
	h := fnv.New64a()
	h.Write([]byte(c.ID))
	base := fmt.Sprintf("%016x", h.Sum64())[:8]
	id := base
	for n := 1; ids.used[id]; n++ {
		id = base + "-" + strconv.Itoa(n)
	}
	ids.used[id] = true
	return id
}

func orEmpty(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return m
}

// intValue returns v as an int when it is an integral JSON number.
func intValue(v any) (int, bool) {
	switch n := v.(type) {
	case json.Number:
		k, err := strconv.ParseInt(string(n), 10, 0)
		return int(k), err == nil
	case float64:
		k := int(n)
		return k, float64(k) == n
	case int:
		return n, true
	}
	return 0, false
}

// typeName names a decoded JSON value's type for error messages.
func typeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case json.Number, float64:
		return "a number"
	case string:
		return "a string"
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

// jsonError turns a decoding error into one with a line and column.
func jsonError(data []byte, err error) error {
	var syn *json.SyntaxError
	if errors.As(err, &syn) {
		// Offset is just past the offending byte.
		line, col := lineCol(data, syn.Offset-1)
		return fmt.Errorf("not valid JSON at line %d, column %d: %v", line, col, err)
	}
	if errors.Is(err, io.EOF) {
		return fmt.Errorf("the file is empty, want a notebook's JSON")
	}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("not valid JSON: the file ends in the middle of a value (truncated?)")
	}
	return fmt.Errorf("not valid JSON: %w", err)
}

// lineCol returns the 1-based line and column (in bytes) of the byte at offset off.
func lineCol(data []byte, off int64) (int, int) {
	off = max(0, min(off, int64(len(data))))
	before := data[:off]
	line := bytes.Count(before, []byte("\n")) + 1
	col := len(before) - bytes.LastIndexByte(before, '\n')
	return line, col
}
