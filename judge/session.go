package judge

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"sync"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/facts"
	"github.com/premortem/premortem/finding"
	"github.com/premortem/premortem/notebook"
)

// Session owns what the layers answered about one notebook's cells, the way gopls's
// snapshot owns a package's results: each answer is kept with what it depends on (the
// cell's text, the kernel epoch, the kernel execution count it was taken at), the Session
// decides what is stale, and it merges the layers once (Findings, Merge). The pipeline
// (Judge.Run) reads and stores the answers of its pass here; an editor gives the Session
// its edits (through the snapshots it passes), runs (execution counts) and kernel events
// (KernelChanged), and turns its answers into protocol messages; `premortem check` is a thin
// driver over one Session per notebook. It holds no protocol types.
//
// A Session is safe for concurrent use. Its lock is never held while it calls out (the
// analyzer has its own), so a caller may hold its own lock around a Session call.
type Session struct {
	analyzer *analysis.Analyzer
	log      func(msg string)

	mu sync.Mutex
	// epoch counts the kernel's restarts (and detaches): an answer taken in an older epoch
	// is about another kernel process, whatever its execution count says.
	epoch int
	// namespace is the kernel's user namespace from the last inspection (nil: unknown), so
	// the static layer can be certain about names.
	namespace map[string]bool
	cells     map[string]*answers
	// stores counts stores, so each answers value gets a version no earlier one had.
	stores int
}

// answers is what the kernel-backed layers said about one cell text in one epoch.
type answers struct {
	text  string
	epoch int
	// layers are the answers as the merge reads them; its Static, NoShadow and Notes are
	// the caller's, never stored.
	layers     Layers
	inspection *facts.Inspection
	// rulesAt, shadowAt, llmAt and verifyAt are the execution counts each layer answered
	// at: an answer older than the kernel's latest count is stale.
	rulesAt, shadowAt, llmAt, verifyAt int
	// provisional marks a fast shadow answer whose full run goes on (or was stopped by a
	// newer pass, which then runs the cell again).
	provisional bool
	llmDone     bool
	// outcomes are the candidate fixes run so far at verifyAt (by Outcome.Key), verified
	// the cell's findings with the fixes proven as of the last outcome, verifyDone that
	// every candidate ran.
	outcomes   map[string]Outcome
	verified   []finding.Finding
	verifyDone bool
	version    int
}

// NewSession returns an empty Session. log, when set, receives one line per cell that
// exceeded a bound on analysis work.
func NewSession(log func(msg string)) *Session {
	// Epochs start at 1 so that a Pass's zero Epoch means "the current one".
	return &Session{analyzer: analysis.NewAnalyzer(), log: log, cells: map[string]*answers{}, epoch: 1}
}

// ErrStaleEpoch stops a pass whose kernel restarted (or was detached) under it: its
// answers are about the old kernel and are not kept.
var ErrStaleEpoch = errors.New("the kernel restarted during the pass")

// Analyze runs the static layer over nb with what the Session knows of the kernel's
// namespace.
func (s *Session) Analyze(ctx context.Context, nb *notebook.Notebook) (*analysis.Result, error) {
	s.mu.Lock()
	ns := s.namespace
	s.mu.Unlock()
	res, err := s.analyzer.Analyze(ctx, nb, analysis.Options{Namespace: ns, Log: s.log})
	if err == nil && res == nil {
		err = errors.New("analyzer returned no result")
	}
	if err != nil {
		return nil, fmt.Errorf("analyze %s: %w", nb.URI, err)
	}
	return res, nil
}

// Cache is the static layer's per-cell facts cache.
func (s *Session) Cache() *analysis.Cache { return s.analyzer.Cache() }

// Close frees what the Session holds when its notebook closes.
func (s *Session) Close() {
	s.analyzer.Close()
	s.mu.Lock()
	s.cells = map[string]*answers{}
	s.mu.Unlock()
}

// KernelChanged starts a new epoch: the kernel restarted or died, or another one was
// attached or none is, so every answer and the namespace are forgotten, and a pass still
// running stores nothing more.
func (s *Session) KernelChanged() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.epoch++
	s.cells = map[string]*answers{}
	s.namespace = nil
}

// Forget drops every answer (a re-check the user asked for starts from nothing) and, like
// KernelChanged, makes a pass still running store nothing more; the namespace stays, since
// the kernel is the same.
func (s *Session) Forget() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.epoch++
	s.cells = map[string]*answers{}
}

// Epoch is the current kernel epoch.
func (s *Session) Epoch() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.epoch
}

// setNamespace records the kernel's namespace, inspected in epoch, for the static layer; it
// reports whether it changed (the static layer is then run again). The namespace of a
// kernel that has since restarted is not kept: the new kernel's names are other names.
func (s *Session) setNamespace(epoch int, names []string) bool {
	if names == nil {
		return false
	}
	ns := NameSet(names)
	s.mu.Lock()
	defer s.mu.Unlock()
	if epoch != s.epoch || reflect.DeepEqual(ns, s.namespace) {
		return false
	}
	s.namespace = ns
	return true
}

// currentLocked returns the answers about c's current text in the current epoch, nil when
// there are none. Callers hold s.mu.
func (s *Session) currentLocked(c *notebook.Cell) *answers {
	a := s.cells[c.ID]
	if a == nil || a.text != c.Text || a.epoch != s.epoch {
		return nil
	}
	return a
}

// store applies f to the answers about c's text taken in epoch, replacing stale ones; it
// reports false, storing nothing, when the kernel restarted since epoch.
func (s *Session) store(c *notebook.Cell, epoch int, f func(a *answers)) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if epoch != s.epoch {
		return false
	}
	a := s.currentLocked(c)
	if a == nil {
		a = &answers{text: c.Text, epoch: s.epoch}
		s.cells[c.ID] = a
	}
	f(a)
	s.stores++
	a.version = s.stores
	return true
}

// StaleRules are the code cells of nb that have not run whose rules answer is missing or
// older than the kernel's execution count execCount (all of them when force), the focus
// cell first. Cells without static facts in res are left out.
func (s *Session) StaleRules(nb *notebook.Notebook, res *analysis.Result, focus string, execCount int, force bool) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	stale := func(c *notebook.Cell) bool {
		if c.Kind != notebook.Code || c.Executed() || res.Facts[c.ID] == nil {
			return false
		}
		a := s.currentLocked(c)
		return a == nil || !a.layers.RuntimeChecked || a.rulesAt < execCount || force
	}
	var out []string
	if c := nb.Cell(focus); c != nil && stale(c) {
		out = append(out, c.ID)
	}
	for _, c := range nb.Cells {
		if c.ID != focus && stale(c) {
			out = append(out, c.ID)
		}
	}
	return out
}

// seed gives a pass's focus state what the Session holds about the focus cell that is
// still current at execCount (nothing with force): a layer with a current answer is not
// asked again. Rules that are stale are still the LLM's evidence; rules counts whether the
// rules layer is on.
func (s *Session) seed(st *focusState, execCount int, force, rules bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st.mu.Lock()
	defer st.mu.Unlock()
	a := s.currentLocked(st.cell)
	if a == nil {
		return
	}
	if a.verifyAt != execCount {
		// The proofs were about another kernel state: verification starts again.
		a.verifyAt, a.outcomes, a.verified, a.verifyDone = execCount, nil, nil, false
	}
	st.outcomes = maps.Clone(a.outcomes)
	st.verified = a.verifyDone && !force
	if rules && !st.l.RuntimeChecked {
		st.inspection, st.l.Rules = a.inspection, a.layers.Rules
		st.l.RuntimeChecked = a.layers.RuntimeChecked && a.rulesAt >= execCount && !force
	}
	if a.layers.Shadow != nil && a.shadowAt >= execCount && !a.provisional && !force {
		st.l.Shadow, st.l.ShadowFindings, st.shadowFinal = a.layers.Shadow, a.layers.ShadowFindings, true
	}
	if a.llmDone && a.llmAt >= execCount && !force {
		st.l.LLM, st.llmDone = a.layers.LLM, true
	}
}

// keep stores a pipeline answer about cell c, taken in epoch at the kernel's execution
// count execCount; it reports false when the kernel restarted since (the pass stops).
func (s *Session) keep(c *notebook.Cell, epoch, execCount int, ans Answer) bool {
	switch ans.Layer {
	case LayerRules:
		return s.store(c, epoch, func(a *answers) {
			a.layers.RuntimeChecked, a.rulesAt = true, execCount
			if ans.Err == nil {
				a.inspection, a.layers.Rules = ans.Inspection, ans.Findings
				a.rulesAt = max(execCount, ans.Inspection.ExecutionCount)
			}
		})
	case LayerShadow:
		if ans.Err != nil {
			return true // no answer to keep
		}
		return s.store(c, epoch, func(a *answers) {
			a.layers.Shadow, a.layers.ShadowFindings, a.shadowAt, a.provisional = ans.Shadow, ans.Findings, execCount, ans.Provisional
		})
	case LayerLLM:
		if !ans.Final {
			return true // asked again next pass
		}
		return s.store(c, epoch, func(a *answers) {
			a.layers.LLM, a.llmDone, a.llmAt = ans.Findings, true, execCount
		})
	case LayerVerify:
		return s.store(c, epoch, func(a *answers) {
			if a.verifyAt != execCount {
				a.verifyAt, a.outcomes, a.verified, a.verifyDone = execCount, nil, nil, false
			}
			if ans.Outcome.Key != "" {
				if a.outcomes == nil {
					a.outcomes = map[string]Outcome{}
				}
				a.outcomes[ans.Outcome.Key] = ans.Outcome
			}
			if ans.Findings != nil {
				a.verified = ans.Findings
			}
			a.verifyDone = a.verifyDone || ans.Final
		})
	}
	return true
}

// View is what a caller shows of a cell's answers (Session.Findings).
type View struct {
	// Static are the static layer's findings on the cell, as the caller filters them.
	Static []finding.Finding
	// Rules and Shadow say whether those layers count (an editor's settings); the shadow
	// layer's provisional answer counts too.
	Rules, Shadow bool
	// Held, when set, holds back the static and rules findings it returns true for (an
	// editor's hold while the cell's shadow run is coming).
	Held func(f finding.Finding) bool
}

// Findings merges what every layer said about cell c (at index) with the view's static
// findings, the fixes verification proved in place of the repair library's. unknown is the
// merged verdict when the shadow layer answered but no layer could tell whether the cell
// crashes (an editor says so rather than nothing, which reads as "no crash"); nil
// otherwise.
func (s *Session) Findings(c *notebook.Cell, index int, v View) (fs []finding.Finding, unknown *CellVerdict) {
	l := Layers{Static: v.Static}
	s.mu.Lock()
	a := s.currentLocked(c)
	if a != nil {
		if v.Rules {
			l.Rules, l.RuntimeChecked = a.layers.Rules, a.layers.RuntimeChecked
		}
		if v.Shadow {
			l.Shadow, l.ShadowFindings = a.layers.Shadow, a.layers.ShadowFindings
		}
		l.LLM = a.layers.LLM
	}
	var verified []finding.Finding
	if a != nil {
		verified = a.verified
	}
	s.mu.Unlock()
	if v.Held != nil {
		l.Static, l.Rules = withoutHeld(l.Static, v.Held), withoutHeld(l.Rules, v.Held)
	}
	if len(l.Static)+len(l.Rules)+len(l.ShadowFindings)+len(l.LLM) == 0 && l.Shadow == nil {
		return nil, nil
	}
	m := Merge(c.ID, index, l)
	fs = withVerified(m.Findings, verified)
	if l.Shadow != nil && m.Verdict == VerdictUnknown && m.Reason != "" {
		unknown = m
	}
	return fs, unknown
}

func withoutHeld(fs []finding.Finding, held func(finding.Finding) bool) []finding.Finding {
	var out []finding.Finding
	for _, f := range fs {
		if !held(f) {
			out = append(out, f)
		}
	}
	return out
}

// withVerified replaces the fixes (and evidence) of the findings verification answered
// for with its own. A proven fix is said in the finding's evidence too: an editor's
// diagnostic message then changes, so the client asks for the code actions again (and the
// user sees a proven fix exists).
func withVerified(fs, verified []finding.Finding) []finding.Finding {
	if len(verified) == 0 {
		return fs
	}
	by := map[string]finding.Finding{}
	for _, f := range verified {
		by[f.Digest()] = f
	}
	out := make([]finding.Finding, len(fs))
	for i, f := range fs {
		if v, ok := by[f.Digest()]; ok && v.Exception == f.Exception {
			f.Fixes = v.Fixes
			f.Evidence = v.Evidence
			if len(f.Fixes) > 0 && f.Fixes[0].Verified {
				f.Evidence = append(append([]string(nil), f.Evidence...), "quick fix proven in a copy of the kernel: "+f.Fixes[0].Title)
			}
		}
		out[i] = f
	}
	return out
}

// ShadowSettled reports whether the final shadow answer about c's text is in and no older
// than its rules answer: what waited for the shadow run no longer needs to.
func (s *Session) ShadowSettled(c *notebook.Cell) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	a := s.currentLocked(c)
	return a != nil && a.layers.Shadow != nil && !a.provisional && a.shadowAt >= a.rulesAt
}

// Shadow is the latest shadow answer about c's text (nil: none) and whether it is a
// provisional one.
func (s *Session) Shadow(c *notebook.Cell) (r *facts.ShadowResult, provisional bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if a := s.currentLocked(c); a != nil {
		return a.layers.Shadow, a.provisional
	}
	return nil, false
}

// Inspection is the kernel facts the rules last checked c's text with (nil: none).
func (s *Session) Inspection(c *notebook.Cell) *facts.Inspection {
	s.mu.Lock()
	defer s.mu.Unlock()
	if a := s.currentLocked(c); a != nil {
		return a.inspection
	}
	return nil
}

// Version identifies the state of the answers about cell id: it changes whenever one is
// stored or they are forgotten, so a caller's cache of what it built from them can tell.
func (s *Session) Version(id string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if a := s.cells[id]; a != nil && a.epoch == s.epoch {
		return a.version
	}
	return -s.epoch
}
