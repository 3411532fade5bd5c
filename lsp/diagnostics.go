package lsp

import (
	"context"
	"fmt"
	"reflect"
	"runtime/debug"
	"time"

	"go.lsp.dev/protocol"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/finding"
	"github.com/premortem/premortem/judge"
	"github.com/premortem/premortem/notebook"
)

// This file is the scheduler, gopls-style: every change cancels the document's running
// pass and starts a new one on a snapshot. A pass computes the static layer at once and
// publishes, then waits for the debounce (a pause in typing) before the kernel-backed
// layers, which publish again as each one answers. Publication is guarded by the pass's
// generation, so a cancelled pass never overwrites newer diagnostics.

// pass is one diagnostics pass: a snapshot of a document and what to do with it.
type pass struct {
	d        *document
	gen      uint64
	snap     *notebook.Notebook
	settings Settings
	// focus is the cell the user edited last: kernel-backed layers start there, and only
	// it gets a shadow run and an LLM prediction.
	focus string
	// force re-runs layers even when their cached answer is current (commands).
	force bool
	// hold is the pass's hold on its focus cell's uncertain findings (hold.go), nil for none.
	hold *shadowHold
}

// schedule starts a new pass for d on a snapshot of its current state, cancelling the
// running one.
func (s *Server) schedule(d *document) { s.scheduleWith(d, "", false) }

// scheduleWith is schedule with an explicit focus cell (empty: the last edited cell) and
// an optional forced re-run of the kernel layers.
func (s *Server) scheduleWith(d *document, focus string, force bool) {
	// Asked before Server.mu is taken: the attachments have their own lock.
	attached := s.rt.attachmentFor(d) != nil
	s.mu.Lock()
	if s.docs[d.uri] != d {
		s.mu.Unlock()
		return
	}
	d.cancelPass()
	if focus == "" {
		focus = d.focus
	}
	p := &pass{d: d, gen: d.gen.Add(1), snap: d.snapshot(), settings: s.settings, focus: focus, force: force}
	d.beginHold(p, focus, attached && shadowComing(d, p.snap.Cell(focus), p.settings))
	ctx, cancel := context.WithCancel(s.ctx)
	d.passCancel = cancel
	d.passes.Add(1)
	s.mu.Unlock()
	go func() {
		defer d.passes.Done()
		s.runPass(ctx, p)
	}()
}

// runPass is one diagnostics pass over a snapshot.
func (s *Server) runPass(ctx context.Context, p *pass) {
	d := p.d
	defer func() {
		if r := recover(); r != nil {
			s.tracef("panic in diagnostics pass for %s: %v\n%s", d.uri, r, debug.Stack())
			s.logf(protocol.MessageTypeError, "internal error while checking %s: %v (premortem keeps running)", d.uri, r)
		}
	}()
	// A pass that ends, whatever the reason, shows what its hold kept back (a cancelled
	// one leaves it to the pass that replaced it).
	defer func() {
		if ctx.Err() == nil {
			s.endHold(p)
		}
	}()
	res, err := s.analyze(ctx, d, p.gen, p.snap)
	if err != nil {
		if ctx.Err() == nil {
			s.logf(protocol.MessageTypeError, "analysis of %s failed: %v", d.uri, err)
		}
		return
	}
	s.publish(ctx, d, p.gen)
	if !s.rt.wanted(d, p.settings) {
		return
	}
	if wait := p.settings.Debounce.D(); wait > 0 && !p.force {
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
	s.rt.check(ctx, p, res)
}

// analyze runs the static analysis of a snapshot and records it as the document's latest
// result (unless a newer one is already there).
func (s *Server) analyze(ctx context.Context, d *document, gen uint64, snap *notebook.Notebook) (*analysis.Result, error) {
	d.rmu.Lock()
	if d.static != nil && d.staticGen == gen {
		res := d.static
		d.rmu.Unlock()
		return res, nil
	}
	d.rmu.Unlock()
	res, err := d.sess.Analyze(ctx, snap)
	if err != nil {
		return nil, err
	}
	s.recordStatic(d, gen, snap, res)
	return res, nil
}

// recordStatic records res, the static result of snap at gen, as the document's latest
// (unless a newer one is already there).
func (s *Server) recordStatic(d *document, gen uint64, snap *notebook.Notebook, res *analysis.Result) {
	d.rmu.Lock()
	defer d.rmu.Unlock()
	if gen >= d.staticGen {
		d.static, d.staticSnap, d.staticGen = res, snap, gen
	}
}

// current returns the document's latest static result and its snapshot, analyzing the
// live state first when the latest pass has not finished. Requests use it.
func (s *Server) current(ctx context.Context, d *document) (*analysis.Result, *notebook.Notebook, error) {
	s.mu.Lock()
	if s.docs[d.uri] != d {
		s.mu.Unlock()
		return nil, nil, fmt.Errorf("%s is no longer open", d.uri)
	}
	gen := d.gen.Load()
	d.rmu.Lock()
	if d.static != nil && d.staticGen == gen {
		res, snap := d.static, d.staticSnap
		d.rmu.Unlock()
		s.mu.Unlock()
		return res, snap, nil
	}
	d.rmu.Unlock()
	snap := d.snapshot()
	s.mu.Unlock()
	res, err := s.analyze(ctx, d, gen, snap)
	return res, snap, err
}

// publish sends the merged diagnostics of the document's latest results, for every URI
// whose diagnostics changed, and empty lists for URIs that have none any more.
func (s *Server) publish(ctx context.Context, d *document, gen uint64) {
	settings := s.currentSettings()
	d.rmu.Lock()
	defer d.rmu.Unlock()
	if ctx.Err() != nil || d.gen.Load() != gen || d.static == nil || d.staticGen != gen {
		return
	}
	byURI := map[string][]protocol.Diagnostic{}
	code := 0
	for i, c := range d.staticSnap.Cells {
		if c.Kind != notebook.Code {
			continue
		}
		code++
		diags := d.cellDiagnosticsLocked(c, i, settings)
		if len(diags) == 0 {
			continue
		}
		uri := d.cellURI(c.ID)
		if d.percent {
			byURI[uri] = append(byURI[uri], diags...)
		} else {
			byURI[uri] = diags
		}
	}
	d.prunePubCacheLocked(code)
	for uri, diags := range byURI {
		if sameDiagnostics(d.published[uri], diags) || reflect.DeepEqual(d.published[uri], diags) {
			continue
		}
		d.published[uri] = diags
		s.sendDiagnostics(uri, diags)
	}
	for uri := range d.published {
		if _, ok := byURI[uri]; !ok {
			delete(d.published, uri)
			s.sendDiagnostics(uri, []protocol.Diagnostic{})
		}
	}
}

// clearAll publishes empty diagnostics for everything the document ever published.
func (s *Server) clearAll(d *document) {
	d.rmu.Lock()
	defer d.rmu.Unlock()
	for uri := range d.published {
		s.sendDiagnostics(uri, []protocol.Diagnostic{})
	}
	d.published = map[string][]protocol.Diagnostic{}
}

func (s *Server) sendDiagnostics(uri string, diags []protocol.Diagnostic) {
	s.notify("textDocument/publishDiagnostics", publishDiagnosticsParams{URI: uri, Diagnostics: diags})
}

// publishDiagnosticsParams is protocol.PublishDiagnosticsParams with an opaque URI.
type publishDiagnosticsParams struct {
	URI         string                `json:"uri"`
	Diagnostics []protocol.Diagnostic `json:"diagnostics"`
}

// mergedLocked returns the findings shown for a cell: the static layer's (when enabled)
// merged by the Session with the kernel layers' answers about the cell's text, and the
// outcome-unknown diagnostic when the shadow layer ran but nothing could tell. Callers hold
// d.rmu.
func (d *document) mergedLocked(res *analysis.Result, c *notebook.Cell, index int, settings Settings) []finding.Finding {
	v := judge.View{Rules: settings.Rules.Enabled, Shadow: settings.Shadow.Mode != ShadowOff}
	if settings.Static.Enabled && res != nil {
		v.Static = res.Findings[c.ID]
		if d.percent {
			v.Static = withoutNotRun(v.Static)
		}
	}
	// While the cell's shadow run is coming, what it may disprove waits for it (hold.go).
	if h := d.holdForLocked(c); h != nil {
		v.Held = h.held
	}
	fs, unknown := d.sess.Findings(c, index, v)
	if unknown != nil {
		return append(fs, unknownDiagnostic(c.ID, c.Text, unknown))
	}
	return fs
}

// merged is mergedLocked for requests.
func (d *document) merged(res *analysis.Result, c *notebook.Cell, index int, settings Settings) []finding.Finding {
	d.rmu.Lock()
	defer d.rmu.Unlock()
	return d.mergedLocked(res, c, index, settings)
}

// withoutNotRun drops not-run-definition warnings. A percent-format file has no execution
// state (every cell counts as not run, the user runs it top to bottom), so a warning on
// every name from an earlier cell would be noise.
func withoutNotRun(fs []finding.Finding) []finding.Finding {
	var out []finding.Finding
	for _, f := range fs {
		if f.Code != finding.NotRunDefinition {
			out = append(out, f)
		}
	}
	return out
}
