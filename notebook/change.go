package notebook

// Change is one notebookDocument/didChange event in premortem's terms (package lsp converts
// the wire shape). Apply applies Structure, then Data, then Text, as the LSP spec orders.
type Change struct {
	// Version is the notebook's new version (0: unchanged).
	Version int
	// Metadata replaces the notebook metadata when non-nil.
	Metadata map[string]any
	// Structure is the cell array splice, nil when the cell list did not change.
	Structure *StructureChange
	// Data carries cells whose kind, metadata or execution summary changed (matched by ID).
	Data []CellData
	// Text carries text edits per cell (matched by ID).
	Text []TextChange
}

// StructureChange replaces DeleteCount cells at Start with Cells. Opened carries the text of
// cells new to the notebook; Closed lists IDs of cells that left it. A cell that merely moved
// is in Cells but in neither Opened nor Closed: it keeps its text.
type StructureChange struct {
	Start       int
	DeleteCount int
	Cells       []CellData
	Opened      []OpenedCell
	Closed      []string
}

// CellData is a cell as the array/data parts of a change describe it (no text).
type CellData struct {
	ID       string
	Kind     Kind
	Metadata map[string]any
	// ExecutionOrder and Success come from the LSP executionSummary; HasSummary is false
	// when the summary was absent (a running cell, or outputs cleared), which resets them.
	HasSummary     bool
	ExecutionOrder int
	Success        *bool
}

// OpenedCell is a cell text document that joins the notebook.
type OpenedCell struct {
	ID       string
	Language string
	Version  int
	Text     string
}

// TextChange is the content changes of one cell document.
type TextChange struct {
	ID      string
	Version int
	Edits   []TextEdit
}

// TextEdit is one LSP TextDocumentContentChangeEvent: a ranged edit in UTF-16 positions,
// or a full replacement when Full is true.
type TextEdit struct {
	Full bool
	// Start and End are 0-based line and UTF-16 character.
	StartLine, StartChar int
	EndLine, EndChar     int
	Text                 string
}
