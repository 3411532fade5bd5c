package lsp

import (
	"strings"
	"testing"
)

// FuzzMessages sends arbitrary message bodies (and arbitrary params for the notebook
// methods) to a running server: whatever arrives, the server must still answer the next
// request. Run briefly in CI: go test -fuzz FuzzMessages -fuzztime 10s ./lsp
func FuzzMessages(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","method":"notebookDocument/didOpen","params":{"notebookDocument":{"uri":"file:///a.ipynb","notebookType":"jupyter-notebook","version":0,"cells":[{"kind":2,"document":"c0"}]},"cellTextDocuments":[{"uri":"c0","languageId":"python","version":1,"text":"x = y"}]}}`,
		`{"jsonrpc":"2.0","method":"notebookDocument/didChange","params":{"notebookDocument":{"uri":"file:///a.ipynb","version":1},"change":{"cells":{"structure":{"array":{"start":5,"deleteCount":9}}}}}}`,
		`{"jsonrpc":"2.0","method":"notebookDocument/didChange","params":{"notebookDocument":{"uri":"file:///a.ipynb","version":1},"change":{"cells":{"textContent":[{"document":{"uri":"c0","version":2},"changes":[{"range":{"start":{"line":0,"character":99},"end":{"line":0,"character":1}},"text":"zz"}]}]}}}}`,
		`{"jsonrpc":"2.0","id":3,"method":"textDocument/hover","params":{"textDocument":{"uri":"c0"},"position":{"line":-1,"character":0}}}`,
		`{"jsonrpc":"2.0","id":"s","method":"textDocument/codeAction","params":{"textDocument":{"uri":"c0"},"range":null,"context":{}}}`,
		`{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":{"uri":"file:///p.py","languageId":"python","version":1,"text":"# %%\nprint(q)\n# %%"}}}`,
		`{"jsonrpc":"2.0","method":"workspace/didChangeConfiguration","params":{"settings":{"premortem":{"debounce":-5}}}}`,
		`[]`, `null`, `{"id":{}}`, "\x00\xff",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, body string) {
		c, _ := startInProcess(t)
		c.initialize(map[string]any{"kernel": map[string]any{"autoAttach": false}})
		c.sendRaw([]byte(body))
		if strings.Contains(body, `"exit"`) || strings.Contains(body, `"shutdown"`) {
			return // a fuzzed exit or shutdown legitimately ends service
		}
		r := c.call("textDocument/hover", map[string]any{"textDocument": map[string]any{"uri": "c0"}, "position": map[string]any{"line": 0, "character": 0}})
		if r.Error != nil && !strings.Contains(r.Error.Message, "shut down") {
			t.Fatalf("hover after %q: %s", body, r.Error.Message)
		}
	})
}
