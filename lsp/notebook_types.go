package lsp

import (
	"encoding/json"

	"go.lsp.dev/protocol"
)

// This file holds the LSP 3.17 types go.lsp.dev/protocol v0.12.0 lacks: notebook document
// sync, inlay hints, and a content change event that tells ranged edits from full ones.
// Field names and JSON tags follow the specification exactly. URIs are plain strings:
// cell URIs ("vscode-notebook-cell:/p/a.ipynb#W0sZmlsZQ%3D%3D") are opaque and must never
// pass through go.lsp.dev/uri.

// NotebookCellKind is 1 for markup cells, 2 for code cells.
type NotebookCellKind int

// Notebook cell kinds.
const (
	NotebookCellKindMarkup NotebookCellKind = 1
	NotebookCellKindCode   NotebookCellKind = 2
)

// ExecutionSummary is the outcome of a cell's last run.
type ExecutionSummary struct {
	ExecutionOrder uint32 `json:"executionOrder"`
	Success        *bool  `json:"success,omitempty"`
}

// NotebookCell is one cell of a notebook document; its text lives in the cell text document
// named by Document.
type NotebookCell struct {
	Kind             NotebookCellKind  `json:"kind"`
	Document         string            `json:"document"`
	Metadata         map[string]any    `json:"metadata,omitempty"`
	ExecutionSummary *ExecutionSummary `json:"executionSummary,omitempty"`
}

// NotebookDocument is a notebook as the client opens it.
type NotebookDocument struct {
	URI          string         `json:"uri"`
	NotebookType string         `json:"notebookType"`
	Version      int32          `json:"version"`
	Metadata     map[string]any `json:"metadata,omitempty"`
	Cells        []NotebookCell `json:"cells"`
}

// TextDocumentItem is a cell text document (protocol.TextDocumentItem with a plain string
// URI).
type TextDocumentItem struct {
	URI        string `json:"uri"`
	LanguageID string `json:"languageId"`
	Version    int32  `json:"version"`
	Text       string `json:"text"`
}

// TextDocumentIdentifier names a text document by an opaque URI.
type TextDocumentIdentifier struct {
	URI string `json:"uri"`
}

// VersionedTextDocumentIdentifier names a text document and its version.
type VersionedTextDocumentIdentifier struct {
	URI     string `json:"uri"`
	Version int32  `json:"version"`
}

// NotebookDocumentIdentifier names a notebook.
type NotebookDocumentIdentifier struct {
	URI string `json:"uri"`
}

// VersionedNotebookDocumentIdentifier names a notebook and its version.
type VersionedNotebookDocumentIdentifier struct {
	URI     string `json:"uri"`
	Version int32  `json:"version"`
}

// DidOpenNotebookDocumentParams are the params of notebookDocument/didOpen.
type DidOpenNotebookDocumentParams struct {
	NotebookDocument  NotebookDocument   `json:"notebookDocument"`
	CellTextDocuments []TextDocumentItem `json:"cellTextDocuments"`
}

// NotebookCellArrayChange splices the cell array.
type NotebookCellArrayChange struct {
	Start       uint32         `json:"start"`
	DeleteCount uint32         `json:"deleteCount"`
	Cells       []NotebookCell `json:"cells,omitempty"`
}

// NotebookCellsStructureChange is the structure part of a cell change.
type NotebookCellsStructureChange struct {
	Array    NotebookCellArrayChange  `json:"array"`
	DidOpen  []TextDocumentItem       `json:"didOpen,omitempty"`
	DidClose []TextDocumentIdentifier `json:"didClose,omitempty"`
}

// TextDocumentContentChangeEvent is one edit: ranged when Range is set, a full
// replacement otherwise (protocol's version cannot tell the two apart).
type TextDocumentContentChangeEvent struct {
	Range       *protocol.Range `json:"range,omitempty"`
	RangeLength uint32          `json:"rangeLength,omitempty"`
	Text        string          `json:"text"`
}

// NotebookCellTextContentChange is the text edits of one cell.
type NotebookCellTextContentChange struct {
	Document VersionedTextDocumentIdentifier  `json:"document"`
	Changes  []TextDocumentContentChangeEvent `json:"changes"`
}

// NotebookDocumentCellChanges groups the three kinds of cell changes.
type NotebookDocumentCellChanges struct {
	Structure   *NotebookCellsStructureChange   `json:"structure,omitempty"`
	Data        []NotebookCell                  `json:"data,omitempty"`
	TextContent []NotebookCellTextContentChange `json:"textContent,omitempty"`
}

// NotebookDocumentChangeEvent is the change of notebookDocument/didChange.
type NotebookDocumentChangeEvent struct {
	Metadata map[string]any               `json:"metadata,omitempty"`
	Cells    *NotebookDocumentCellChanges `json:"cells,omitempty"`
}

// DidChangeNotebookDocumentParams are the params of notebookDocument/didChange.
type DidChangeNotebookDocumentParams struct {
	NotebookDocument VersionedNotebookDocumentIdentifier `json:"notebookDocument"`
	Change           NotebookDocumentChangeEvent         `json:"change"`
}

// DidSaveNotebookDocumentParams are the params of notebookDocument/didSave.
type DidSaveNotebookDocumentParams struct {
	NotebookDocument NotebookDocumentIdentifier `json:"notebookDocument"`
}

// DidCloseNotebookDocumentParams are the params of notebookDocument/didClose.
type DidCloseNotebookDocumentParams struct {
	NotebookDocument  NotebookDocumentIdentifier `json:"notebookDocument"`
	CellTextDocuments []TextDocumentIdentifier   `json:"cellTextDocuments"`
}

// NotebookDocumentFilter selects notebooks by type, scheme or path pattern.
type NotebookDocumentFilter struct {
	NotebookType string `json:"notebookType,omitempty"`
	Scheme       string `json:"scheme,omitempty"`
	Pattern      string `json:"pattern,omitempty"`
}

// NotebookCellLanguage selects cells by language.
type NotebookCellLanguage struct {
	Language string `json:"language"`
}

// NotebookSelector is one entry of notebookDocumentSync.notebookSelector.
type NotebookSelector struct {
	Notebook *NotebookDocumentFilter `json:"notebook,omitempty"`
	Cells    []NotebookCellLanguage  `json:"cells,omitempty"`
}

// NotebookDocumentSyncOptions is the server's notebookDocumentSync capability.
type NotebookDocumentSyncOptions struct {
	NotebookSelector []NotebookSelector `json:"notebookSelector"`
	Save             bool               `json:"save,omitempty"`
}

// DidOpenTextDocumentParams are the params of textDocument/didOpen.
type DidOpenTextDocumentParams struct {
	TextDocument TextDocumentItem `json:"textDocument"`
}

// DidChangeTextDocumentParams are the params of textDocument/didChange.
type DidChangeTextDocumentParams struct {
	TextDocument   VersionedTextDocumentIdentifier  `json:"textDocument"`
	ContentChanges []TextDocumentContentChangeEvent `json:"contentChanges"`
}

// DidCloseTextDocumentParams are the params of textDocument/didClose.
type DidCloseTextDocumentParams struct {
	TextDocument TextDocumentIdentifier `json:"textDocument"`
}

// TextDocumentPositionParams is a cell (or file) URI and a position in it.
type TextDocumentPositionParams struct {
	TextDocument TextDocumentIdentifier `json:"textDocument"`
	Position     protocol.Position      `json:"position"`
}

// CodeActionParams are the params of textDocument/codeAction.
type CodeActionParams struct {
	TextDocument TextDocumentIdentifier     `json:"textDocument"`
	Range        protocol.Range             `json:"range"`
	Context      protocol.CodeActionContext `json:"context"`
}

// InlayHintParams are the params of textDocument/inlayHint (LSP 3.17).
type InlayHintParams struct {
	TextDocument TextDocumentIdentifier `json:"textDocument"`
	Range        protocol.Range         `json:"range"`
}

// InlayHintKind is 1 for type hints, 2 for parameter hints.
type InlayHintKind int

// InlayHintKindType marks a hint about a value's type.
const InlayHintKindType InlayHintKind = 1

// InlayHint is one inlay hint (LSP 3.17).
type InlayHint struct {
	Position     protocol.Position `json:"position"`
	Label        string            `json:"label"`
	Kind         InlayHintKind     `json:"kind,omitempty"`
	Tooltip      string            `json:"tooltip,omitempty"`
	PaddingLeft  bool              `json:"paddingLeft,omitempty"`
	PaddingRight bool              `json:"paddingRight,omitempty"`
}

// ExecuteCommandParams are the params of workspace/executeCommand.
type ExecuteCommandParams struct {
	Command   string            `json:"command"`
	Arguments []json.RawMessage `json:"arguments,omitempty"`
}

// WorkDoneProgressCreateParams are the params of window/workDoneProgress/create.
type WorkDoneProgressCreateParams struct {
	Token string `json:"token"`
}

// ProgressParams are the params of $/progress.
type ProgressParams struct {
	Token string `json:"token"`
	Value any    `json:"value"`
}

// WorkDoneProgressValue is a begin, report or end progress payload.
type WorkDoneProgressValue struct {
	Kind        string `json:"kind"`
	Title       string `json:"title,omitempty"`
	Message     string `json:"message,omitempty"`
	Cancellable bool   `json:"cancellable,omitempty"`
}

// CancelParams are the params of $/cancelRequest.
type CancelParams struct {
	ID json.RawMessage `json:"id"`
}
