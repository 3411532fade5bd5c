package analysis

import (
	"context"
	"fmt"
	"sort"
	"sync"

	"github.com/premortem/premortem/finding"
	"github.com/premortem/premortem/notebook"
)

// Dataflow across cells follows the order cells actually ran (their execution counts),
// not page order: the kernel's namespace is what the executed cells left in it, whatever
// their position. A cell that has not run is judged as if the user ran it now:
//
//   - a name the kernel namespace has (Options.Namespace, when known), or that an executed
//     cell binds (and no later run deleted), is defined;
//   - a name bound only by a not-run cell above the target is a warning
//     (not-run-definition): running the notebook top to bottom would define it, running
//     the target alone raises NameError;
//   - a name bound nowhere, or only by not-run cells below the target, is an error
//     (undefined-name, NameError), naming the cell that defines it if any.
//
// An executed cell is judged the same way (as a re-run), with its own previous run
// counted among the executed cells.

// Options tune one analysis pass.
type Options struct {
	// Namespace is the set of names in the kernel's user namespace, nil when unknown (no
	// kernel). A name in it is defined even if no cell defines it. A pass compares it with
	// the previous pass's by identity: pass a new map when the names change.
	Namespace map[string]bool
	// Log, when set, receives one line per cell that exceeded a bound on analysis work
	// (naming the cell and what was skipped), each time the cell's text changes.
	Log func(msg string)
}

// Result is one analysis pass over a notebook. It is shared with later passes (the maps
// of cells that did not change are reused): never modify it.
type Result struct {
	// Facts of every code cell, by cell ID.
	Facts map[string]*CellFacts
	// Findings of the static layer, by cell ID, sorted by range. Cells without findings
	// have no entry.
	Findings map[string][]finding.Finding
	// Flow answers where names come from.
	Flow *Flow
}

// Analyzer analyses notebooks, keeping parsed cells and the last pass between passes, so
// a keystroke costs what it changes, not the notebook's size: it re-parses one cell,
// updates the dataflow for the names that cell binds, and re-judges only the cells whose
// answers can change (see incremental.go). It is safe for concurrent use; passes run one
// at a time.
type Analyzer struct {
	cache *Cache

	mu   sync.Mutex
	last *passState // the previous pass, nil before the first
}

// NewAnalyzer returns an Analyzer with an empty cache.
func NewAnalyzer() *Analyzer { return &Analyzer{cache: NewCache()} }

// Cache returns the analyzer's per-cell facts cache (for Forget when a cell closes).
func (a *Analyzer) Cache() *Cache { return a.cache }

// Close frees what the analyzer holds (the syntax trees' C memory at once, the facts and
// the previous pass for the collector) when its notebook closes. A later Analyze starts
// from scratch.
func (a *Analyzer) Close() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.last = nil
	a.cache.Close()
}

// Analyze computes facts, dataflow and static findings for nb. It fails only when ctx is
// done.
func (a *Analyzer) Analyze(ctx context.Context, nb *notebook.Notebook, opts Options) (*Result, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	in, err := a.collect(ctx, nb, opts)
	if err != nil {
		return nil, err
	}
	var st *passState
	if a.last != nil && in.sameShape(a.last) && a.last.nsSig == nsSignature(opts) {
		st = a.last.update(in, opts)
	} else {
		st = fullPass(in, a.last, opts)
		a.cache.retain(st.facts)
	}
	a.last = st
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("analyze %s: %w", nb.URI, err)
	}
	return &Result{Facts: st.facts, Findings: st.findings, Flow: st.flow}, nil
}

// nsSignature identifies the namespace a pass was judged against.
func nsSignature(opts Options) string {
	return fmt.Sprintf("%p %d", opts.Namespace, len(opts.Namespace))
}

// isPythonCell reports whether c is a code cell the static layer understands.
func isPythonCell(c *notebook.Cell) bool {
	if c.Kind != notebook.Code {
		return false
	}
	switch c.Language {
	case "", "python", "python3", "ipython", "ipython3":
		return true
	}
	return false
}

// DefSite is one place a cell binds a name.
type DefSite struct {
	CellID string
	// Index is the cell's page position (0-based).
	Index int
	// Range of the bound name in the cell.
	Range finding.Range
	// ExecutionOrder of the cell's last run, 0 when it has not run.
	ExecutionOrder int
	Kind           DefKind
	Conditional    bool
}

// Flow is the dataflow of names across a notebook's cells in execution order. A Flow is
// immutable once its pass returns: later passes derive new Flows that share its tables.
type Flow struct {
	history []string // executed cell IDs in execution order
	cells   map[string]*flowCell
	facts   map[string]*CellFacts // by cell ID: the pass's Result.Facts
	// sites: name -> binding and deletion sites in executed cells, in execution order
	// (source order within a cell), and binding sites in cells that have not run, in page
	// order.
	sites siteTable
	// star: an executed cell imports with *, or runs code premortem cannot see (%run).
	star bool
	// notRunStar is the page index of the first not-run cell with a star import, or -1.
	notRunStar int
	// rec, while a cell is judged, collects the names whose sites the judgement read, and
	// usedTypo whether it asked for a typo suggestion: a later pass re-judges the cell
	// when one of those changes.
	rec      map[string]bool
	usedTypo bool
	// typo suggests names for typos (kept by the analyzer between passes).
	typo *typoIndex
}

type flowCell struct {
	id    string
	index int
	order int
	// hpos is the cell's position in history, -1 when it has not run.
	hpos int
}

func newFlow(nb *notebook.Notebook, facts map[string]*CellFacts) *Flow {
	fl := &Flow{cells: map[string]*flowCell{}, facts: facts, sites: siteTable{base: map[string]*nameSites{}}, notRunStar: -1}
	var ran []*flowCell
	for i, c := range nb.Cells {
		f := facts[c.ID]
		if f == nil {
			continue
		}
		fc := &flowCell{id: c.ID, index: i, order: c.ExecutionOrder, hpos: -1}
		fl.cells[c.ID] = fc
		if c.Executed() {
			ran = append(ran, fc)
		} else {
			if len(f.StarImports) > 0 && fl.notRunStar < 0 {
				fl.notRunStar = i
			}
			for _, d := range f.Defs {
				if d.Kind != DefDelete {
					ns := fl.sites.base.add(d.Name)
					ns.notRun = append(ns.notRun, fc.site(d))
				}
			}
		}
	}
	sort.SliceStable(ran, func(i, j int) bool { return ran[i].order < ran[j].order })
	for _, fc := range ran {
		fc.hpos = len(fl.history)
		fl.history = append(fl.history, fc.id)
		f := facts[fc.id]
		for _, d := range f.Defs {
			ns := fl.sites.base.add(d.Name)
			ns.executed = append(ns.executed, fc.site(d))
		}
		if len(f.StarImports) > 0 {
			fl.star = true
		}
	}
	return fl
}

func (fc *flowCell) site(d Def) DefSite {
	return DefSite{CellID: fc.id, Index: fc.index, Range: d.Range, ExecutionOrder: fc.order, Kind: d.Kind, Conditional: d.Conditional}
}

// History returns the executed cells' IDs in execution order.
func (fl *Flow) History() []string { return append([]string(nil), fl.history...) }

// Definitions returns every place a cell binds name: executed cells in execution order,
// then cells that have not run in page order.
func (fl *Flow) Definitions(name string) []DefSite {
	var out []DefSite
	for _, s := range fl.exec(name) {
		if s.Kind != DefDelete {
			out = append(out, s)
		}
	}
	return append(out, fl.pending(name)...)
}

// DefinitionsKey returns a comparable token for name's binding sites: two Flows of the
// same Analyzer give equal tokens for name only when Definitions(name) is the same in
// both, so a client can keep what it derived from them (related locations) between
// passes. Unequal tokens do not imply a difference.
func (fl *Flow) DefinitionsKey(name string) any { return fl.sites.get(name) }

// LastDefinition returns the binding of name the kernel holds after the executed cells:
// the last one in execution order. It reports false when no executed cell binds name or
// the last executed cell to touch it deleted it.
func (fl *Flow) LastDefinition(name string) (DefSite, bool) {
	return fl.lastBefore(name, 0, "")
}

// lastBefore returns the last binding of name in cells that ran before execution order
// limit (0: no limit), ignoring cell skip.
func (fl *Flow) lastBefore(name string, limit int, skip string) (DefSite, bool) {
	sites := fl.exec(name)
	for i := len(sites) - 1; i >= 0; i-- {
		s := sites[i]
		if limit > 0 && s.ExecutionOrder >= limit || s.CellID == skip {
			continue
		}
		if s.Kind == DefDelete {
			if s.Conditional {
				continue
			}
			return DefSite{}, false
		}
		return s, true
	}
	return DefSite{}, false
}

// Dependencies returns the executed cells cellID depends on, transitively, through the
// names it reads: for each free name, the executed cell whose binding the reader sees
// (for a cell about to run, the kernel's current one; for the cells it depends on, the one
// before their run). The result is in execution order and excludes cellID.
func (fl *Flow) Dependencies(cellID string) []string {
	deps := map[string]bool{}
	var visit func(id string, limit int)
	visit = func(id string, limit int) {
		f := fl.facts[id]
		if f == nil {
			return
		}
		seen := map[string]bool{}
		for _, u := range f.Uses {
			if seen[u.Name] || IsBuiltin(u.Name) {
				continue
			}
			seen[u.Name] = true
			s, ok := fl.lastBefore(u.Name, limit, id)
			if !ok || deps[s.CellID] || s.CellID == cellID {
				continue
			}
			deps[s.CellID] = true
			visit(s.CellID, s.ExecutionOrder)
		}
	}
	visit(cellID, 0)
	var out []string
	for _, id := range fl.history {
		if deps[id] {
			out = append(out, id)
		}
	}
	return out
}

// CellNumber returns the 1-based page position of a cell, as messages name cells, or 0.
func (fl *Flow) CellNumber(cellID string) int {
	if fc := fl.cells[cellID]; fc != nil {
		return fc.index + 1
	}
	return 0
}
