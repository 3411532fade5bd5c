package lsp

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/premortem/premortem/internal/testkit/scenario"
)

// TestScenarios replays recorded VS Code message sequences from testdata/lsp/*.txtar
// against an in-process server. Sections, in order:
//
//	-- initializationOptions --       (optional, first) JSON
//	-- notify METHOD --               params JSON, sent as a notification
//	-- raw --                         bytes sent as one message body (bad input)
//	-- expect URI --                  one "code@line:char-line:char" per line, none = no diagnostics
//	-- call METHOD --                 params JSON, sent as a request ...
//	-- result --                      ... each line must occur in its result JSON ("null": result is null)
//	-- error --                       ... its error message must contain each line
//	-- log --                         a logMessage containing the text must arrive
//	-- status URI --                  the latest premortem/status of URI: first line the state,
//	                                  each further line must occur in it (JSON)
//	-- shown --                       a showMessage containing the text must have arrived
//
// Every scenario ends with shutdown and exit, and checks exit code 0.
func TestScenarios(t *testing.T) {
	scenario.Run(t, scenario.Dir(t, "lsp"), 1, runScenario)
}

func runScenario(t *testing.T, sc *scenario.File) {
	c, exit := startInProcess(t)
	files := sc.Sections
	var initOptions any
	if len(files) > 0 && files[0].Name == "initializationOptions" {
		if err := json.Unmarshal(files[0].Data, &initOptions); err != nil {
			t.Fatalf("initializationOptions: %v", err)
		}
		files = files[1:]
	}
	c.initialize(initOptions)
	var last rawResponse
	var lastMethod string
	for i, f := range files {
		verb, arg := f.Verb(), f.Arg()
		body := strings.TrimSpace(string(f.Data))
		params := func() any {
			var p any
			if err := json.Unmarshal([]byte(body), &p); err != nil {
				t.Fatalf("section %d (%s): invalid JSON: %v", i, f.Name, err)
			}
			return p
		}
		switch verb {
		case "notify":
			c.notify(arg, params())
		case "raw":
			c.sendRaw([]byte(body))
		case "expect":
			c.waitDiags(arg, diagSummaryStrings(f.Lines()))
		case "call":
			lastMethod = arg
			last = c.call(arg, params())
		case "result":
			if last.Error != nil {
				t.Fatalf("%s: error %s, want a result", lastMethod, last.Error.Message)
			}
			for _, l := range f.Lines() {
				if !strings.Contains(string(last.Result), l) {
					t.Errorf("%s result %s does not contain %q", lastMethod, last.Result, l)
				}
			}
		case "error":
			if last.Error == nil {
				t.Fatalf("%s: result %s, want an error", lastMethod, last.Result)
			}
			for _, l := range f.Lines() {
				if !strings.Contains(last.Error.Message, l) {
					t.Errorf("%s error %q does not contain %q", lastMethod, last.Error.Message, l)
				}
			}
		case "log":
			c.waitLog(body)
		case "status":
			lines := strings.Split(body, "\n")
			st := c.waitStatus(arg, strings.TrimSpace(lines[0]))
			js, _ := json.Marshal(st)
			for _, l := range lines[1:] {
				if l = strings.TrimSpace(l); l != "" && !strings.Contains(string(js), l) {
					t.Errorf("status of %s %s does not contain %q", arg, js, l)
				}
			}
		case "shown":
			c.mu.Lock()
			shown := strings.Join(c.shown, "\n")
			c.mu.Unlock()
			if !strings.Contains(shown, body) {
				t.Errorf("no showMessage contains %q; shown: %s", body, shown)
			}
		default:
			t.Fatalf("section %d: unknown section %q", i, f.Name)
		}
	}
	c.shutdownExit()
	if code := <-exit; code != 0 {
		t.Errorf("exit code %d after shutdown and exit, want 0", code)
	}
}

// diagSummaryStrings renders expected "code@range" entries like diagSummary.
func diagSummaryStrings(entries []string) string {
	sortStrings(entries)
	return "[" + strings.Join(entries, " ") + "]"
}
