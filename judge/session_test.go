package judge

import (
	"strings"
	"testing"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/facts"
	"github.com/premortem/premortem/finding"
	"github.com/premortem/premortem/notebook"
)

// TestSessionStale: an answer is current for the cell text, kernel epoch and execution
// count it was taken at, and for nothing else.
func TestSessionStale(t *testing.T) {
	cell := &notebook.Cell{ID: "c", Kind: notebook.Code, Text: "df['x']"}
	nb := &notebook.Notebook{Cells: []*notebook.Cell{cell}}
	res := &analysis.Result{Facts: map[string]*analysis.CellFacts{"c": {}}}
	rulesAt := func(s *Session, exec int) {
		t.Helper()
		if !s.keep(cell, s.Epoch(), exec, Answer{Layer: LayerRules, Cell: "c", Inspection: &facts.Inspection{ExecutionCount: exec}}) {
			t.Fatal("keep refused an answer of the current epoch")
		}
	}
	for _, tc := range []struct {
		name  string
		then  func(s *Session) *notebook.Notebook
		exec  int
		force bool
		stale bool
	}{
		{"same state", nil, 3, false, false},
		{"a newer run", nil, 4, false, true},
		{"forced", nil, 3, true, true},
		{"text edited", func(*Session) *notebook.Notebook {
			c := *cell
			c.Text = "df['y']"
			return &notebook.Notebook{Cells: []*notebook.Cell{&c}}
		}, 3, false, true},
		{"kernel restarted", func(s *Session) *notebook.Notebook { s.KernelChanged(); return nb }, 3, false, true},
		{"forgotten", func(s *Session) *notebook.Notebook { s.Forget(); return nb }, 3, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := NewSession(nil)
			rulesAt(s, 3)
			now := nb
			if tc.then != nil {
				now = tc.then(s)
			}
			got := len(s.StaleRules(now, res, "c", tc.exec, tc.force)) == 1
			if got != tc.stale {
				t.Fatalf("stale = %v, want %v", got, tc.stale)
			}
		})
	}
}

// TestSessionEpoch: a pass that began before a restart stores nothing, and what was known
// before it is gone.
func TestSessionEpoch(t *testing.T) {
	s := NewSession(nil)
	cell := &notebook.Cell{ID: "c", Kind: notebook.Code, Text: "x"}
	old := s.Epoch()
	shadow := Answer{Layer: LayerShadow, Cell: "c", Shadow: &facts.ShadowResult{Status: facts.ShadowOK}}
	if !s.keep(cell, old, 1, shadow) {
		t.Fatal("keep refused an answer of the current epoch")
	}
	v := s.Version("c")
	s.KernelChanged()
	if r, _ := s.Shadow(cell); r != nil {
		t.Fatal("a shadow answer of the old kernel survived its restart")
	}
	if s.Version("c") == v {
		t.Fatal("the version did not change when the answers were forgotten")
	}
	if s.keep(cell, old, 1, shadow) {
		t.Fatal("an answer of the old kernel was stored after the restart")
	}
	if s.setNamespace(old, []string{"df"}) || s.namespace != nil {
		t.Fatal("the old kernel's namespace was kept after the restart: the static layer would trust its names")
	}
	if !s.setNamespace(s.Epoch(), []string{"df"}) || s.setNamespace(s.Epoch(), []string{"df"}) {
		t.Fatal("a new namespace must count as a change once, and the same one again as none")
	}
}

// TestSessionSeed: the focus cell's current answers reach the pass, stale and provisional
// ones do not, and force ignores them all.
func TestSessionSeed(t *testing.T) {
	cell := &notebook.Cell{ID: "c", Kind: notebook.Code, Text: "y = 1 / x"}
	crash := finding.Finding{Cell: "c", Source: finding.SourceShadow, Severity: finding.SeverityError, Code: "zero-division", Exception: "ZeroDivisionError"}
	for _, tc := range []struct {
		name        string
		provisional bool
		exec        int
		force       bool
		want        bool
	}{
		{"final, same count", false, 2, false, true},
		{"provisional", true, 2, false, false},
		{"older count", false, 3, false, false},
		{"forced", false, 2, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := NewSession(nil)
			s.keep(cell, s.Epoch(), 2, Answer{Layer: LayerShadow, Cell: "c", Shadow: &facts.ShadowResult{Status: facts.ShadowError}, Findings: []finding.Finding{crash}, Provisional: tc.provisional})
			st := &focusState{cell: cell}
			s.seed(st, tc.exec, tc.force, true)
			if got := st.shadowFinal && len(st.l.ShadowFindings) == 1; got != tc.want {
				t.Fatalf("seeded = %v, want %v", got, tc.want)
			}
			if settled := s.ShadowSettled(cell); settled != !tc.provisional {
				t.Fatalf("settled = %v with provisional %v", settled, tc.provisional)
			}
		})
	}
}

// TestSessionFindings: the one merge, with the view's static findings, what it holds back,
// and the fixes verification proved in place of the library's.
func TestSessionFindings(t *testing.T) {
	cell := &notebook.Cell{ID: "c", Kind: notebook.Code, Text: "model.predict(X)"}
	rule := finding.Finding{Cell: "c", Source: finding.SourceRules, Severity: finding.SeverityError, Code: finding.NotFitted,
		Exception: "NotFittedError", Message: "model is not fitted", Fixes: []finding.Fix{{Title: "fit it"}}}
	s := NewSession(nil)
	s.keep(cell, s.Epoch(), 1, Answer{Layer: LayerRules, Cell: "c", Findings: []finding.Finding{rule}, Inspection: &facts.Inspection{ExecutionCount: 1}})

	if fs, _ := s.Findings(cell, 0, View{Rules: true}); len(fs) != 1 || fs[0].Code != finding.NotFitted {
		t.Fatalf("rules on: %+v", fs)
	}
	if fs, _ := s.Findings(cell, 0, View{Rules: false}); len(fs) != 0 {
		t.Fatalf("rules off still shows %+v", fs)
	}
	if fs, _ := s.Findings(cell, 0, View{Rules: true, Held: func(finding.Finding) bool { return true }}); len(fs) != 0 {
		t.Fatalf("a held finding shows: %+v", fs)
	}
	proven := rule
	proven.Fixes = []finding.Fix{{Title: "fit it on X_train", Verified: true}}
	s.keep(cell, s.Epoch(), 1, Answer{Layer: LayerVerify, Cell: "c", Findings: []finding.Finding{proven}, Outcome: Outcome{Key: "k", Verified: true}})
	fs, _ := s.Findings(cell, 0, View{Rules: true})
	if len(fs) != 1 || len(fs[0].Fixes) != 1 || !fs[0].Fixes[0].Verified ||
		!strings.Contains(strings.Join(fs[0].Evidence, "\n"), "quick fix proven in a copy of the kernel: fit it on X_train") {
		t.Fatalf("verified fix not shown: %+v", fs)
	}
	// A clean shadow run dismisses the prediction, and nothing is unknown.
	s.keep(cell, s.Epoch(), 1, Answer{Layer: LayerShadow, Cell: "c", Shadow: &facts.ShadowResult{Status: facts.ShadowOK}})
	if fs, unknown := s.Findings(cell, 0, View{Rules: true, Shadow: true}); len(fs) != 0 || unknown != nil {
		t.Fatalf("after a clean run: %+v, unknown %+v", fs, unknown)
	}
	// A run that timed out tells nothing: the verdict is unknown, with its reason.
	s.keep(cell, s.Epoch(), 1, Answer{Layer: LayerShadow, Cell: "c", Shadow: &facts.ShadowResult{Status: facts.ShadowTimeout}})
	if _, unknown := s.Findings(&notebook.Cell{ID: "c", Text: cell.Text}, 0, View{Shadow: true}); unknown == nil || unknown.Reason == "" {
		t.Fatalf("a timed-out run gave no unknown verdict: %+v", unknown)
	}
}
