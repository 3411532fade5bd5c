package lsp

import (
	"fmt"

	"github.com/premortem/premortem/finding"
	"github.com/premortem/premortem/judge"
	"github.com/premortem/premortem/notebook"
)

// Precision before speed. A pass that will shadow-run its focus cell holds that cell's
// predicted crashes that are not certain by construction (judge.Awaits: they rest on
// introspection of a class or on a model of a library call) until the shadow run's final
// answer is in; the merge then decides (a crash confirms them, a clean run dismisses them
// before the user ever saw them). Certain findings (finding.Finding.Certain) are shown at
// once. When the shadow run cannot answer (no run, a failure, a busy kernel, the pass ends
// without one) the held findings are shown then, as the merge has them.
//
// The hold is set when the pass is scheduled, before its first publication, so the static
// layer's findings wait too. A finding the user already sees is never hidden by a hold (the
// hold remembers what was on screen when it began): holding is only about what appears,
// never a reason for something to vanish.

// shadowHold is the document's hold: cell is the cell whose shadow run is coming (a pass's
// focus, or the cell of an explicit shadowRun, which takes the hold over from the automatic
// run it cancels); shown are the findings (holdKey) visible on the cell when it began.
type shadowHold struct {
	cell  string
	shown map[string]bool
}

// holdKey identifies a finding on one cell across passes: its code and where it starts.
func holdKey(code string, line, char int) string { return fmt.Sprintf("%s@%d:%d", code, line, char) }

// shadowComing reports whether a pass of a document with a live kernel will shadow-run
// its focus cell: the conditions under which runtimeLayer.check gives the pipeline a
// focus and judge's shadow stage runs.
func shadowComing(d *document, focus *notebook.Cell, settings Settings) bool {
	if d.percent || focus == nil || focus.Kind != notebook.Code || focus.Executed() {
		return false
	}
	return settings.Shadow.Mode != ShadowOff && settings.Shadow.Mode != ""
}

// beginHold makes p's hold on cell the document's (coming false: no hold), replacing any
// earlier one: the pass or run that replaced another answers for the cell now.
func (d *document) beginHold(p *pass, cell string, coming bool) {
	d.rmu.Lock()
	defer d.rmu.Unlock()
	if !coming {
		p.hold, d.hold = nil, nil
		return
	}
	h := &shadowHold{cell: cell, shown: map[string]bool{}}
	for _, diag := range d.published[d.cellURI(cell)] {
		if code, ok := diag.Code.(string); ok {
			h.shown[holdKey(code, int(diag.Range.Start.Line), int(diag.Range.Start.Character))] = true
		}
	}
	p.hold, d.hold = h, h
}

// releaseHold ends p's hold, if it is still the document's; it reports whether it did (the
// caller publishes then).
func (d *document) releaseHold(p *pass) bool {
	d.rmu.Lock()
	defer d.rmu.Unlock()
	if p.hold == nil || d.hold != p.hold {
		return false
	}
	d.hold = nil
	return true
}

// holdForLocked returns the hold that applies to cell c now: nil when there is none, or
// when the shadow run's final answer for the current rules is in (the merge decides).
// Callers hold d.rmu.
func (d *document) holdForLocked(c *notebook.Cell) *shadowHold {
	h := d.hold
	if h == nil || h.cell != c.ID || d.sess.ShadowSettled(c) {
		return nil
	}
	return h
}

// held reports whether the hold keeps f back: a predicted crash that is not certain and
// that the user does not already see.
func (h *shadowHold) held(f finding.Finding) bool {
	return judge.Awaits(f) && !h.shown[holdKey(f.Code, f.Range.Start.Line, f.Range.Start.Character)]
}

// endHold ends pass p's hold and publishes what it held back.
func (s *Server) endHold(p *pass) {
	if p.d.releaseHold(p) {
		s.publish(s.ctx, p.d, p.gen)
	}
}
