package lsp

import (
	"fmt"
	"strconv"
)

// This file builds the messages exactly as VS Code (vscode-languageclient 9, notebook
// sync) sends them: initialize with notebook client capabilities, cell URIs in VS Code's
// format, cells with ipynb metadata and execution summaries.

// vscodeInitializeParams is VS Code's initialize request, trimmed to the capabilities the
// server reads plus representative others.
func vscodeInitializeParams(initOptions any) map[string]any {
	return map[string]any{
		"processId":  4242,
		"clientInfo": map[string]any{"name": "Visual Studio Code", "version": "1.96.0"},
		"locale":     "en",
		"rootPath":   "/home/u/proj",
		"rootUri":    "file:///home/u/proj",
		"capabilities": map[string]any{
			"workspace": map[string]any{
				"applyEdit": true,
				"workspaceEdit": map[string]any{
					"documentChanges": true, "resourceOperations": []string{"create", "rename", "delete"},
					"failureHandling": "textOnlyTransactional", "normalizesLineEndings": true,
					"changeAnnotationSupport": map[string]any{"groupsOnLabel": true},
				},
				"configuration":          true,
				"didChangeConfiguration": map[string]any{"dynamicRegistration": true},
				"executeCommand":         map[string]any{"dynamicRegistration": true},
				"workspaceFolders":       true,
				"inlayHint":              map[string]any{"refreshSupport": true},
			},
			"textDocument": map[string]any{
				"synchronization": map[string]any{"dynamicRegistration": true, "willSave": true, "willSaveWaitUntil": true, "didSave": true},
				"publishDiagnostics": map[string]any{
					"relatedInformation": true, "versionSupport": false, "tagSupport": map[string]any{"valueSet": []int{1, 2}},
					"codeDescriptionSupport": true, "dataSupport": true,
				},
				"hover": map[string]any{"dynamicRegistration": true, "contentFormat": []string{"markdown", "plaintext"}},
				"codeAction": map[string]any{
					"dynamicRegistration": true, "isPreferredSupport": true, "disabledSupport": true, "dataSupport": true,
					"resolveSupport": map[string]any{"properties": []string{"edit"}},
					"codeActionLiteralSupport": map[string]any{"codeActionKind": map[string]any{"valueSet": []string{
						"", "quickfix", "refactor", "refactor.extract", "refactor.inline", "refactor.rewrite", "source", "source.organizeImports",
					}}},
					"honorsChangeAnnotations": true,
				},
				"inlayHint": map[string]any{"dynamicRegistration": true, "resolveSupport": map[string]any{"properties": []string{"tooltip", "textEdits", "label.tooltip", "label.location", "label.command"}}},
			},
			"window": map[string]any{
				"showMessage":      map[string]any{"messageActionItem": map[string]any{"additionalPropertiesSupport": true}},
				"showDocument":     map[string]any{"support": true},
				"workDoneProgress": true,
			},
			"general": map[string]any{
				"staleRequestSupport": map[string]any{"cancel": true, "retryOnContentModified": []string{"textDocument/semanticTokens/full"}},
				"positionEncodings":   []string{"utf-16"},
			},
			"notebookDocument": map[string]any{"synchronization": map[string]any{"dynamicRegistration": true, "executionSummarySupport": true}},
		},
		"initializationOptions": initOptions,
		"trace":                 "off",
		"workspaceFolders":      []any{map[string]any{"uri": "file:///home/u/proj", "name": "proj"}},
	}
}

// cellURI is the URI VS Code gives the cell with the given handle in a file-backed
// notebook: "vscode-notebook-cell:<path>#" + lenChar + base7(handle) + "s" + base64url("file").
func cellURI(path string, handle int) string {
	h := strconv.FormatInt(int64(handle), 7)
	return fmt.Sprintf("vscode-notebook-cell:%s#%c%ss%s", path, 'W'+rune(len(h)-1), h, "ZmlsZQ%3D%3D")
}

// vsCell is a cell as the test describes it.
type vsCell struct {
	handle int
	text   string
	kind   int // 0: code
	order  int // execution order, 0: never ran
	failed bool
}

// vscodeCell is a NotebookCell as vscode-languageclient sends it: ipynb metadata, and an
// execution summary only when the cell has an order and a success flag.
func vscodeCell(path string, c vsCell) map[string]any {
	kind := c.kind
	if kind == 0 {
		kind = 2
	}
	var count any
	if c.order > 0 {
		count = c.order
	}
	m := map[string]any{
		"kind":     kind,
		"document": cellURI(path, c.handle),
		"metadata": map[string]any{"execution_count": count, "metadata": map[string]any{}},
	}
	if c.order > 0 {
		m["executionSummary"] = map[string]any{"executionOrder": c.order, "success": !c.failed}
	}
	return m
}

func vscodeTextDocument(path string, c vsCell, version int) map[string]any {
	lang := "python"
	if c.kind == 1 {
		lang = "markdown"
	}
	return map[string]any{"uri": cellURI(path, c.handle), "languageId": lang, "version": version, "text": c.text}
}

// vscodeDidOpen is notebookDocument/didOpen for a .ipynb at path.
func vscodeDidOpen(path string, cells ...vsCell) map[string]any {
	var nbCells, docs []any
	for _, c := range cells {
		nbCells = append(nbCells, vscodeCell(path, c))
		docs = append(docs, vscodeTextDocument(path, c, 1))
	}
	return map[string]any{
		"notebookDocument": map[string]any{
			"uri":          "file://" + path,
			"notebookType": "jupyter-notebook",
			"version":      0,
			"metadata": map[string]any{
				"kernelspec":    map[string]any{"display_name": "Python 3", "language": "python", "name": "python3"},
				"language_info": map[string]any{"name": "python", "version": "3.11.2"},
			},
			"cells": nbCells,
		},
		"cellTextDocuments": docs,
	}
}

// vscodeTextChange is a didChange carrying one ranged edit in one cell.
func vscodeTextChange(path string, version, handle, cellVersion int, sl, sc, el, ec int, text string) map[string]any {
	return map[string]any{
		"notebookDocument": map[string]any{"uri": "file://" + path, "version": version},
		"change": map[string]any{"cells": map[string]any{"textContent": []any{map[string]any{
			"document": map[string]any{"uri": cellURI(path, handle), "version": cellVersion},
			"changes": []any{map[string]any{
				"range":       map[string]any{"start": map[string]any{"line": sl, "character": sc}, "end": map[string]any{"line": el, "character": ec}},
				"rangeLength": 0,
				"text":        text,
			}},
		}}}},
	}
}

// vscodeRun is the data change VS Code sends when a cell finishes running.
func vscodeRun(path string, version int, c vsCell) map[string]any {
	return map[string]any{
		"notebookDocument": map[string]any{"uri": "file://" + path, "version": version},
		"change":           map[string]any{"cells": map[string]any{"data": []any{vscodeCell(path, c)}}},
	}
}
