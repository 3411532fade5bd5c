package main

import (
	"bytes"
	"strings"
	"testing"
)

// The evaluation itself is tested in internal/eval; these tests check that the flags reach
// it.

const testCases = "../../testdata/junobench/cases"

// TestEvalOfflineCodeSettingPredictsNothing: without an endpoint the code setting builds
// prompts (to count tokens) and predicts no crash; the defaults beside --cases are found.
func TestEvalOfflineCodeSettingPredictsNothing(t *testing.T) {
	t.Setenv("PREMORTEM_LLM_BASE_URL", "")
	t.Setenv("PREMORTEM_LLM_MODEL", "")
	var stdout, stderr bytes.Buffer
	code := runEval([]string{"--cases", testCases, "--ids", "pandas_10", "--setting", "code", "--quiet"}, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if !strings.Contains(stdout.String(), "| premortem code | 2 | 0 | 2 | 50.0 | 0.0 | 0.0 | 0.0 | 50.0 |") {
		t.Errorf("offline row:\n%s", stdout.String())
	}
	if !strings.Contains(stdout.String(), "LLM offline (no LLM endpoint)") {
		t.Errorf("title does not say the run was offline:\n%s", stdout.String())
	}
}

// TestEvalFlagErrors: a bad flag value is exit 2 with a message naming it.
func TestEvalFlagErrors(t *testing.T) {
	t.Setenv("PREMORTEM_LLM_BASE_URL", "")
	t.Setenv("PREMORTEM_LLM_MODEL", "")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--setting", "static,bogus"}, `unknown setting "bogus"`},
		{[]string{"--setting", "static", "--shadow", "off"}, `--shadow "off": want safe or always`},
		{[]string{"--setting", "static", "--llm-base-url", "http://127.0.0.1:1/v1"}, "set --llm-base-url and --llm-model"},
		{[]string{"extra"}, "usage: premortem eval"},
	} {
		var stdout, stderr bytes.Buffer
		args := append([]string{"--cases", testCases, "--ids", "pandas_10", "--quiet"}, tc.args...)
		if code := runEval(args, &stdout, &stderr); code != 2 {
			t.Errorf("%v: exit %d, want 2", tc.args, code)
		}
		if !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("%v: stderr %q lacks %q", tc.args, stderr.String(), tc.want)
		}
	}
}
