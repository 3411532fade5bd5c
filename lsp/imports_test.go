package lsp

import (
	"os/exec"
	"strings"
	"testing"
)

// TestLSPReachesLayersThroughJudge: the language server keeps only LSP. It reaches the
// layers (the runtime rules, the repair library, the LLM client) only through judge's
// pipeline, so that the editor and `premortem check` cannot drift apart: lsp's own
// (non-test) files import none of those packages.
func TestLSPReachesLayersThroughJudge(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{join .Imports "\n"}}`, "github.com/premortem/premortem/lsp").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	imports := strings.Fields(string(out))
	if !contains(imports, "github.com/premortem/premortem/judge") {
		t.Fatalf("lsp does not import judge? imports: %v", imports)
	}
	for _, banned := range []string{
		"github.com/premortem/premortem/analysis/rules",
		"github.com/premortem/premortem/analysis/repair",
		"github.com/premortem/premortem/llm",
	} {
		if contains(imports, banned) {
			t.Errorf("lsp imports %s: reach that layer through judge (judge.Run, judge.LLMConfig...)", banned)
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
