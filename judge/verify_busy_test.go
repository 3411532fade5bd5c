package judge_test

import (
	"context"
	"errors"
	"testing"

	"github.com/premortem/premortem/facts"
	"github.com/premortem/premortem/finding"
	"github.com/premortem/premortem/judge"
	"github.com/premortem/premortem/kernelclient"
	"github.com/premortem/premortem/notebook"
)

// busyKernel is a kernel that is always busy running the user's cell: every request would
// queue behind it, so premortem must send none.
type busyKernel struct{ requests int }

func (k *busyKernel) Info() kernelclient.KernelInfo { return kernelclient.KernelInfo{} }
func (k *busyKernel) State() kernelclient.State     { return kernelclient.StateBusy }
func (k *busyKernel) RunningOthers() bool           { return true }
func (k *busyKernel) SandboxProbe(context.Context, string) (*facts.SandboxInfo, error) {
	return nil, kernelclient.ErrBusy
}
func (k *busyKernel) Execute(context.Context, string) (*kernelclient.ExecuteResult, error) {
	k.requests++
	return nil, kernelclient.ErrBusy
}
func (k *busyKernel) Inspect(context.Context, kernelclient.InspectRequest) (*facts.Inspection, error) {
	k.requests++
	return nil, kernelclient.ErrBusy
}
func (k *busyKernel) Shadow(context.Context, string, kernelclient.ShadowOptions) (*facts.ShadowResult, error) {
	k.requests++
	return nil, kernelclient.ErrBusy
}
func (k *busyKernel) ShadowResult(context.Context, string) (*facts.ShadowResult, error) {
	k.requests++
	return nil, kernelclient.ErrBusy
}
func (k *busyKernel) ShadowCancel(context.Context, string) error { return nil }
func (k *busyKernel) Events() <-chan kernelclient.Event          { return nil }
func (k *busyKernel) Close() error                               { return nil }

// TestVerifyBusyKernel: verification never sends a request to a busy kernel; it stops with
// ErrBusy (the editor resumes on the next idle event) and the finding keeps its fixes.
func TestVerifyBusyKernel(t *testing.T) {
	nb := &notebook.Notebook{URI: "mem.ipynb", Cells: []*notebook.Cell{
		{ID: "a", Kind: notebook.Code, Text: "import pandas as pd\ndf = pd.DataFrame({'Age': [1]})", ExecutionOrder: 1},
		{ID: "b", Kind: notebook.Code, Text: "df['age']"},
	}}
	rule := finding.Fix{Title: "Use column 'Age'", Edits: []finding.Edit{{Range: finding.Range{Start: finding.Position{Character: 3}, End: finding.Position{Character: 8}}, NewText: "'Age'"}}}
	f := finding.Finding{Cell: "b", Source: finding.SourceRules, Severity: finding.SeverityError, Code: "missing-column", Exception: "KeyError",
		Message: "column 'age' is not in df", Range: finding.Range{Start: finding.Position{Character: 3}, End: finding.Position{Character: 8}}, Fixes: []finding.Fix{rule}}
	k := &busyKernel{}
	j := &judge.Judge{Kernel: k, Options: judge.DefaultOptions()}
	out, err := j.VerifyFixes(context.Background(), judge.VerifyRequest{Notebook: nb, CellID: "b", Findings: []finding.Finding{f}})
	if !errors.Is(err, kernelclient.ErrBusy) {
		t.Fatalf("err = %v, want ErrBusy", err)
	}
	if k.requests != 0 {
		t.Errorf("%d requests sent to a busy kernel", k.requests)
	}
	if len(out) != 1 || len(out[0].Fixes) != 1 || out[0].Fixes[0].Title != rule.Title || out[0].Fixes[0].Verified {
		t.Errorf("findings after a busy stop: %+v, want the rule's fix kept, unverified", out)
	}
}
