package lsp

import (
	"go.lsp.dev/protocol"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/finding"
	"github.com/premortem/premortem/notebook"
)

// A pass publishes every cell's diagnostics, and rebuilding them (merging the layers,
// converting, comparing with what was sent) for the hundreds of cells of a 2,000-cell
// notebook that have findings made a keystroke cost the notebook's size. pubEntry keeps how
// one cell's diagnostics were last built, so publish rebuilds only the cells whose inputs
// changed: their static findings (a pass re-uses the slice of a cell it did not judge
// again), text, kernel layers, settings, or the definitions their related locations
// point at.
type pubEntry struct {
	static []finding.Finding
	text   string
	line   int
	// answers is the Session's version of the cell's answers (judge.Session.Version).
	answers  int
	hold     *shadowHold
	settings pubSettings
	// related are the names related locations were computed for, with the flow's
	// DefinitionsKey of each at the time.
	related []relatedDep
	diags   []protocol.Diagnostic
}

type relatedDep struct {
	name string
	key  any
}

// pubSettings are the settings mergedLocked reads.
type pubSettings struct {
	static, rules bool
	shadow        string
}

// cellDiagnosticsLocked returns cell c's diagnostics for the document's latest static
// result, rebuilding them only when something they come from changed. Callers hold d.rmu.
func (d *document) cellDiagnosticsLocked(c *notebook.Cell, index int, settings Settings) []protocol.Diagnostic {
	ps := pubSettings{settings.Static.Enabled, settings.Rules.Enabled, settings.Shadow.Mode}
	static := d.static.Findings[c.ID]
	answers := d.sess.Version(c.ID)
	h := d.holdForLocked(c)
	if e := d.pubCache[c.ID]; e != nil && e.settings == ps && e.text == c.Text && e.line == c.SourceLine &&
		e.answers == answers && e.hold == h && sameFindings(e.static, static) && e.relatedCurrent(d.static.Flow) {
		return e.diags
	}
	e := &pubEntry{static: static, text: c.Text, line: c.SourceLine, answers: answers, hold: h, settings: ps}
	for _, f := range d.mergedLocked(d.static, c, index, settings) {
		rel, name := d.relatedLocked(f, c)
		rel = append(d.ownRelatedLocked(f), rel...)
		if name != "" && d.static.Flow != nil {
			e.related = append(e.related, relatedDep{name, d.static.Flow.DefinitionsKey(name)})
		}
		e.diags = append(e.diags, diagnostic(f, c.SourceLine, rel))
	}
	if d.pubCache == nil {
		d.pubCache = map[string]*pubEntry{}
	}
	d.pubCache[c.ID] = e
	return e.diags
}

// prunePubCacheLocked drops the entries of cells the snapshot no longer has, once there
// are more entries than code cells.
func (d *document) prunePubCacheLocked(codeCells int) {
	if len(d.pubCache) <= codeCells {
		return
	}
	keep := make(map[string]bool, codeCells)
	for _, c := range d.staticSnap.Cells {
		keep[c.ID] = true
	}
	for id := range d.pubCache {
		if !keep[id] {
			delete(d.pubCache, id)
		}
	}
}

// relatedCurrent reports whether the definitions behind the entry's related locations are
// unchanged in fl.
func (e *pubEntry) relatedCurrent(fl *analysis.Flow) bool {
	for _, r := range e.related {
		if fl == nil || fl.DefinitionsKey(r.name) != r.key {
			return false
		}
	}
	return true
}

// sameFindings reports whether a and b are the same slice (not merely equal ones).
func sameFindings(a, b []finding.Finding) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// sameDiagnostics reports whether a and b are the same slice.
func sameDiagnostics(a, b []protocol.Diagnostic) bool {
	return len(a) == len(b) && len(a) > 0 && &a[0] == &b[0]
}
