package notebook

import "fmt"

// Open builds the notebook of a notebookDocument/didOpen: cells gives the page order, kind,
// metadata and execution summary of each cell, opened the text documents of those cells,
// matched by ID. Every cell needs exactly one text document and every text document a
// cell; otherwise Open returns an error naming the cell.
func Open(uri, notebookType string, version int, metadata map[string]any, cells []CellData, opened []OpenedCell) (*Notebook, error) {
	list, err := splice(nil, &StructureChange{Cells: cells, Opened: opened})
	if err != nil {
		return nil, fmt.Errorf("open notebook %s: %w", uri, err)
	}
	return &Notebook{URI: uri, Type: notebookType, Version: version, Metadata: metadata, Cells: list}, nil
}
