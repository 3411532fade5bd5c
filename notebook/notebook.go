// Package notebook is premortem's model of a Jupyter notebook: its cells (kind, language,
// text, execution order and success), reading and writing .ipynb (nbformat 4) and
// percent-format .py notebooks, and applying LSP 3.17 notebook change events. It knows
// nothing of LSP's wire format (package lsp converts) nor of analysis.
//
// Positions are LSP's: 0-based lines and UTF-16 characters (see OffsetOf). Notebook.Apply
// is all or nothing: a change it refuses leaves the notebook as it was. Cells and notebooks
// are plain data without locks: the caller serializes access and hands Clone snapshots to
// concurrent readers.
package notebook

// Kind is a cell kind, numbered as LSP's NotebookCellKind.
type Kind int

// Cell kinds.
const (
	Markup Kind = 1
	Code   Kind = 2
)

// Cell is one cell. Cells are identified by ID, never by position: in an editor the ID is
// the cell document URI (an opaque string such as
// "vscode-notebook-cell:/p/a.ipynb#W0sZmlsZQ%3D%3D"); for files read from disk it is
// "cell-<index>" of the page position at load time (nbformat cell ids are kept with the
// other unmodeled .ipynb fields for writing back, not used as keys).
type Cell struct {
	ID   string
	Kind Kind
	// Language is the cell's language id: the kernel language for code cells, "markdown"
	// for markdown cells, "raw" for nbformat raw cells (kind Markup: never run, never
	// analyzed).
	Language string
	// Text is the cell's source; lines end with "\n" for files (percent-format CRLF is
	// normalized), and as the editor sent them for LSP cells.
	Text string
	// Version is the cell document's version (LSP), 0 for files.
	Version int
	// Metadata is the cell's metadata object as sent or stored.
	Metadata map[string]any
	// ExecutionOrder is the kernel execution count of the cell's last run; 0 when the cell
	// never ran (or its outputs were cleared).
	ExecutionOrder int
	// Success is the outcome of the last run, nil when unknown.
	Success *bool
	// SourceLine is the 0-based line of the source file where the cell's text starts, for
	// cells read from a percent-format .py file (so cell positions map back into the file:
	// file line = SourceLine + cell line, same UTF-16 character for code cells). 0 otherwise.
	SourceLine int

	// raw keeps the .ipynb cell's fields as read (all but metadata), for round trips: fields
	// premortem does not model are written back as they were, and a modeled field
	// (source, execution_count) keeps its original spelling while its value is unchanged.
	// raw is never modified after parsing, so clones share it.
	raw map[string]any
	// percent is how the cell was spelled in a percent-format file, nil otherwise.
	percent *percentCell
}

// Executed reports whether the cell ran in the kernel (it carries an execution order).
func (c *Cell) Executed() bool { return c.ExecutionOrder > 0 }

// Notebook is an ordered list of cells plus notebook metadata.
type Notebook struct {
	// URI of the notebook document in an editor, or its file path.
	URI string
	// Type is the notebook type ("jupyter-notebook").
	Type     string
	Version  int
	Metadata map[string]any
	Cells    []*Cell

	// raw keeps top-level .ipynb fields premortem does not model (nbformat, nbformat_minor,
	// anything unknown), for round trips. Never modified after parsing.
	raw map[string]any
	// eol is the line ending of a percent-format file ("\n" when unknown).
	eol string
}

// Cell returns the cell with the given ID, or nil.
func (nb *Notebook) Cell(id string) *Cell {
	for _, c := range nb.Cells {
		if c.ID == id {
			return c
		}
	}
	return nil
}

// Index returns the page position of the cell with the given ID, or -1.
func (nb *Notebook) Index(id string) int {
	for i, c := range nb.Cells {
		if c.ID == id {
			return i
		}
	}
	return -1
}

// Language returns the notebook's kernel language from its metadata ("python" when unset).
func (nb *Notebook) Language() string {
	if li, ok := nb.Metadata["language_info"].(map[string]any); ok {
		if name, ok := li["name"].(string); ok && name != "" {
			return name
		}
	}
	if ks, ok := nb.Metadata["kernelspec"].(map[string]any); ok {
		if l, ok := ks["language"].(string); ok && l != "" {
			return l
		}
	}
	return "python"
}

// KernelName returns the kernelspec name from the notebook's metadata, "" when unset.
func (nb *Notebook) KernelName() string {
	if ks, ok := nb.Metadata["kernelspec"].(map[string]any); ok {
		if n, ok := ks["name"].(string); ok {
			return n
		}
	}
	return ""
}
