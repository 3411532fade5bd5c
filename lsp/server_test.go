package lsp

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

const nbPath = "/home/u/proj/titanic.ipynb"

// TestInitializeCapabilities checks what the server advertises to VS Code.
func TestInitializeCapabilities(t *testing.T) {
	c, _ := startInProcess(t)
	res := c.initialize(nil)
	caps, _ := json.Marshal(res["capabilities"])
	for _, want := range []string{
		`"notebookDocumentSync":{"notebookSelector":[{"cells":[{"language":"python"}],"notebook":{"notebookType":"jupyter-notebook"}}`,
		`"textDocumentSync":{"change":2,"openClose":true}`,
		`"hoverProvider":true`,
		`"codeActionProvider":{"codeActionKinds":["quickfix"]}`,
		`"inlayHintProvider":true`,
		`"premortem.server.attachKernel"`, `"premortem.server.listKernels"`, `"premortem.server.recheck"`,
		`"premortem.server.shadowRun"`, `"premortem.server.explain"`,
	} {
		if !strings.Contains(string(caps), want) {
			t.Errorf("capabilities lack %s:\n%s", want, caps)
		}
	}
	// The extension registers these ids itself: advertising them would make
	// vscode-languageclient fail with "command already exists".
	for _, clash := range []string{`"premortem.attachKernel"`, `"premortem.recheck"`, `"premortem.shadowRun"`, `"premortem.explain"`} {
		if strings.Contains(string(caps), clash) {
			t.Errorf("capabilities advertise %s, which collides with the extension's command", clash)
		}
	}
}

// TestExitCodes checks exit after shutdown (0) and without (1), and that requests after
// shutdown are refused.
func TestExitCodes(t *testing.T) {
	t.Run("shutdown then exit", func(t *testing.T) {
		c, exit := startInProcess(t)
		c.initialize(nil)
		c.callOK("shutdown", nil, nil)
		if r := c.call("textDocument/hover", map[string]any{}); r.Error == nil {
			t.Errorf("hover after shutdown succeeded, want an error")
		}
		c.notify("exit", nil)
		if code := waitExit(t, exit); code != 0 {
			t.Errorf("exit code %d, want 0", code)
		}
	})
	t.Run("exit without shutdown", func(t *testing.T) {
		c, exit := startInProcess(t)
		c.initialize(nil)
		c.notify("exit", nil)
		if code := waitExit(t, exit); code != 1 {
			t.Errorf("exit code %d, want 1", code)
		}
	})
	t.Run("request before initialize", func(t *testing.T) {
		c, _ := startInProcess(t)
		r := c.call("textDocument/hover", map[string]any{})
		if r.Error == nil || r.Error.Code != -32002 {
			t.Errorf("hover before initialize: %+v, want ServerNotInitialized", r.Error)
		}
	})
}

func waitExit(t *testing.T, exit <-chan int) int {
	t.Helper()
	select {
	case code := <-exit:
		return code
	case <-time.After(waitTimeout):
		t.Fatal("server did not exit")
		return -1
	}
}

// TestCancelPreviousPass types quickly into a cell: every keystroke cancels the previous
// pass, and the diagnostics finally published are those of the last text.
func TestCancelPreviousPass(t *testing.T) {
	c, _ := startInProcess(t)
	c.initialize(nil)
	c.notify("notebookDocument/didOpen", vscodeDidOpen(nbPath, vsCell{handle: 0, text: ""}))
	word := "undefined_name_typed_fast"
	for i := range len(word) {
		c.notify("notebookDocument/didChange", vscodeTextChange(nbPath, 1, 0, i+2, 0, i, 0, i, word[i:i+1]))
	}
	c.waitDiags(cellURI(nbPath, 0), fmt.Sprintf("[undefined-name@0:0-0:%d]", len(word)))
}

// TestPercentFile checks a percent-format .py file synced as a text document:
// diagnostics go to the file URI, on the file's lines.
func TestPercentFile(t *testing.T) {
	c, _ := startInProcess(t)
	c.initialize(nil)
	uri := "file:///home/u/proj/analysis.py"
	text := "# %%\nimport math\n\n# %% [markdown]\n# notes\n\n# %%\nprint(math.pi, radius)\n"
	c.notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{"uri": uri, "languageId": "python", "version": 1, "text": text}})
	c.waitDiags(uri, "[undefined-name@7:15-7:21]")
	if st := c.waitStatus(uri, StatusNone); !strings.Contains(st.Detail, "percent-format") {
		t.Errorf("percent file status %+v", st)
	}
	// Define radius in the first cell: the error goes.
	c.notify("textDocument/didChange", map[string]any{
		"textDocument":   map[string]any{"uri": uri, "version": 2},
		"contentChanges": []any{map[string]any{"range": rng(1, 11, 1, 11), "text": "\nradius = 2.0"}},
	})
	c.waitDiags(uri, "[]")
	// A plain .py file without markers is not a notebook: nothing is published.
	plain := "file:///home/u/proj/plain.py"
	c.notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{"uri": plain, "languageId": "python", "version": 1, "text": "print(nope)\n"}})
	var hover rawResponse = c.call("textDocument/hover", map[string]any{"textDocument": map[string]any{"uri": uri}, "position": map[string]any{"line": 8, "character": 17}})
	if hover.Error != nil || !strings.Contains(string(hover.Result), "radius") {
		t.Errorf("hover on radius in a percent file: %s %+v", hover.Result, hover.Error)
	}
	c.mu.Lock()
	_, published := c.diags[plain]
	c.mu.Unlock()
	if published {
		t.Errorf("diagnostics published for a .py file without cell markers")
	}
	if st := c.lastStatus(plain); st.State != "" {
		t.Errorf("status %+v for a .py file without cell markers", st)
	}
	c.notify("textDocument/didClose", map[string]any{"textDocument": map[string]any{"uri": uri}})
	c.wait("status none after close", func() bool {
		n := len(c.statuses)
		return n > 0 && c.statuses[n-1].URI == uri && c.statuses[n-1].State == StatusNone && c.statuses[n-1].Detail == "closed"
	})
}

func rng(sl, sc, el, ec int) map[string]any {
	return map[string]any{"start": map[string]any{"line": sl, "character": sc}, "end": map[string]any{"line": el, "character": ec}}
}

// TestRelatedInformation checks that a NameError points at the cell defining the name.
func TestRelatedInformation(t *testing.T) {
	c, _ := startInProcess(t)
	c.initialize(nil)
	c.notify("notebookDocument/didOpen", vscodeDidOpen(nbPath,
		vsCell{handle: 0, text: "y = x + 1"},
		vsCell{handle: 1, text: "import os\nx = 41"},
	))
	ds := c.waitDiags(cellURI(nbPath, 0), "[undefined-name@0:4-0:5]")
	d := ds[0]
	if d.Source != DiagnosticSource || !strings.HasPrefix(d.Message, "[static] ") || d.Severity != 1 {
		t.Errorf("diagnostic = %+v, want source premortem, a [static] message, severity error", d)
	}
	if len(d.RelatedInformation) != 1 {
		t.Fatalf("relatedInformation = %+v, want the defining cell", d.RelatedInformation)
	}
	ri := d.RelatedInformation[0]
	if string(ri.Location.URI) != cellURI(nbPath, 1) || ri.Location.Range.Start.Line != 1 || !strings.Contains(ri.Message, "has not run") {
		t.Errorf("related = %+v, want cell 2 line 2, not run", ri)
	}
}

// TestConfiguration checks that settings from didChangeConfiguration apply: disabling the
// static layer clears its diagnostics, enabling brings them back.
func TestConfiguration(t *testing.T) {
	c, _ := startInProcess(t)
	c.initialize(map[string]any{"static": map[string]any{"enabled": false}})
	c.notify("notebookDocument/didOpen", vscodeDidOpen(nbPath, vsCell{handle: 0, text: "print(nope)"}))
	c.callOK("textDocument/hover", map[string]any{"textDocument": map[string]any{"uri": cellURI(nbPath, 0)}, "position": map[string]any{"line": 0, "character": 7}}, nil)
	c.mu.Lock()
	n := c.publishes[cellURI(nbPath, 0)]
	c.mu.Unlock()
	if n != 0 {
		t.Errorf("diagnostics published with the static layer off")
	}
	c.notify("workspace/didChangeConfiguration", map[string]any{"settings": map[string]any{"premortem": map[string]any{"static": map[string]any{"enabled": true}}}})
	c.waitDiags(cellURI(nbPath, 0), "[undefined-name@0:6-0:10]")
	c.notify("workspace/didChangeConfiguration", map[string]any{"settings": map[string]any{"premortem.static.enabled": false}})
	c.waitDiags(cellURI(nbPath, 0), "[]")
	c.notify("workspace/didChangeConfiguration", map[string]any{"settings": map[string]any{"premortem": map[string]any{"shadow": map[string]any{"mode": "sometimes"}}}})
	c.waitLog("premortem.shadow.mode")
}

// TestPanicRecovered makes a handler panic: the request gets an error, a logMessage says
// so, and the server keeps serving.
func TestPanicRecovered(t *testing.T) {
	methods["premortem/testPanic"] = method{h: func(*Server, context.Context, json.RawMessage) (any, error) { panic("boom") }}
	t.Cleanup(func() { delete(methods, "premortem/testPanic") })
	c, _ := startInProcess(t)
	c.initialize(nil)
	r := c.call("premortem/testPanic", nil)
	if r.Error == nil || !strings.Contains(r.Error.Message, "boom") {
		t.Fatalf("panicking request: %+v, want an internal error", r.Error)
	}
	c.notify("notebookDocument/didOpen", vscodeDidOpen(nbPath, vsCell{handle: 0, text: "print(nope)"}))
	c.waitDiags(cellURI(nbPath, 0), "[undefined-name@0:6-0:10]")
}

// TestBinary builds premortem and runs `premortem serve --stdio` as VS Code does: the done
// criterion over real stdio, then shutdown and exit with code 0.
func TestBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := filepath.Join(t.TempDir(), "premortem")
	build := exec.Command("go", "build", "-o", bin, "../cmd/premortem")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	logFile := filepath.Join(t.TempDir(), "serve.log")
	cmd := exec.Command(bin, "serve", "--stdio", "--log", logFile)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	var waitErr error
	go func() { waitErr = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		select {
		case <-done:
		default:
			_ = cmd.Process.Kill()
			<-done
		}
	})
	c := newTestClient(t, stdin, stdout)
	c.initialize(nil)
	c.notify("notebookDocument/didOpen", vscodeDidOpen(nbPath,
		vsCell{handle: 0, text: "total = count + 1"},
		vsCell{handle: 1, text: "count = 41"},
	))
	c.waitDiags(cellURI(nbPath, 0), "[undefined-name@0:8-0:13]")
	c.notify("notebookDocument/didChange", vscodeRun(nbPath, 1, vsCell{handle: 1, text: "count = 41", order: 1}))
	c.waitDiags(cellURI(nbPath, 0), "[]")
	c.shutdownExit()
	select {
	case <-done:
		if waitErr != nil {
			t.Errorf("premortem serve exited with %v, want 0", waitErr)
		}
	case <-time.After(waitTimeout):
		t.Fatal("premortem serve did not exit")
	}
	if data, err := os.ReadFile(logFile); err != nil || len(data) == 0 {
		t.Errorf("--log file is empty (%v)", err)
	}
}

// TestPullConfiguration: a client that sends no initializationOptions and signals changes
// with {"settings": null} is asked with workspace/configuration.
func TestPullConfiguration(t *testing.T) {
	c, _ := startInProcess(t)
	c.mu.Lock()
	c.config = map[string]any{"debounce": 5}
	c.mu.Unlock()
	c.initialize(nil)
	c.mu.Lock()
	c.config = map[string]any{"shadow": map[string]any{"mode": "sometimes"}}
	c.mu.Unlock()
	c.notify("workspace/didChangeConfiguration", map[string]any{"settings": nil})
	c.wait("two workspace/configuration requests", func() bool {
		return strings.Count(strings.Join(c.requests, ","), "workspace/configuration") == 2
	})
	c.waitLog("premortem.shadow.mode")
}

// TestCancelRequest: $/cancelRequest cancels an async request's context, and the request
// answers RequestCancelled.
func TestCancelRequest(t *testing.T) {
	methods["premortem/testSlow"] = method{async: true, h: func(_ *Server, ctx context.Context, _ json.RawMessage) (any, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	}}
	t.Cleanup(func() { delete(methods, "premortem/testSlow") })
	c, _ := startInProcess(t)
	c.initialize(nil)
	c.mu.Lock()
	c.nextID++
	id := c.nextID
	ch := make(chan rawResponse, 1)
	c.pending[strconv.Itoa(id)] = ch
	c.mu.Unlock()
	c.send(map[string]any{"jsonrpc": "2.0", "id": id, "method": "premortem/testSlow", "params": map[string]any{}})
	c.notify("$/cancelRequest", map[string]any{"id": id})
	select {
	case r := <-ch:
		if r.Error == nil || r.Error.Code != -32800 {
			t.Errorf("cancelled request answered %+v, want RequestCancelled", r.Error)
		}
	case <-time.After(waitTimeout):
		t.Fatal("cancelled request never answered")
	}
}
