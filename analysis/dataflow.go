package analysis

import (
	"context"
	"fmt"
	"hash/fnv"
	"sort"
	"sync"

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
	// kernel). A name in it is defined even if no cell defines it.
	Namespace map[string]bool
}

// Result is one analysis pass over a notebook.
type Result struct {
	// Facts of every code cell, by cell ID.
	Facts map[string]*CellFacts
	// Findings of the static layer, by cell ID, sorted by range. Cells without findings
	// have no entry.
	Findings map[string][]Finding
	// Flow answers where names come from.
	Flow *Flow
}

// Finding codes of the static layer.
const (
	CodeUndefinedName    = "undefined-name"
	CodeNotRunDefinition = "not-run-definition"
	CodeStaleDefinition  = "stale-definition"
	CodeSyntaxError      = "syntax-error"
)

// Analyzer analyses notebooks, keeping parsed cells between passes so a keystroke
// re-parses one cell. It is safe for concurrent use.
type Analyzer struct {
	cache *Cache

	// Typo suggestions depend only on which names exist; they are kept between passes
	// while the executed cells and the namespace stay the same (a keystroke in a cell
	// that has not run changes neither).
	mu         sync.Mutex
	typoSig    uint64
	candidates map[int][]string
	typos      map[string]string
}

// NewAnalyzer returns an Analyzer with an empty cache.
func NewAnalyzer() *Analyzer { return &Analyzer{cache: NewCache()} }

// Cache returns the analyzer's per-cell facts cache (for Forget when a cell closes).
func (a *Analyzer) Cache() *Cache { return a.cache }

// Analyze computes facts, dataflow and static findings for nb. It fails only when ctx is
// done.
func (a *Analyzer) Analyze(ctx context.Context, nb *notebook.Notebook, opts Options) (*Result, error) {
	res := &Result{Facts: map[string]*CellFacts{}, Findings: map[string][]Finding{}}
	for i, c := range nb.Cells {
		if i%16 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, fmt.Errorf("analyze %s: %w", nb.URI, err)
			}
		}
		if isPythonCell(c) {
			res.Facts[c.ID] = a.cache.Facts(c.ID, c.Text)
		}
	}
	res.Flow = newFlow(nb, res.Facts)
	sig := res.Flow.signature(opts)
	a.mu.Lock()
	if a.typoSig == sig && a.candidates != nil {
		res.Flow.candidates = a.candidates
		res.Flow.typos = make(map[string]string, len(a.typos))
		for k, v := range a.typos {
			res.Flow.typos[k] = v
		}
	}
	a.mu.Unlock()
	for _, c := range nb.Cells {
		if f := res.Facts[c.ID]; f != nil {
			if fs := res.Flow.cellFindings(c, f, opts); len(fs) > 0 {
				res.Findings[c.ID] = fs
			}
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("analyze %s: %w", nb.URI, err)
	}
	if res.Flow.candidates != nil {
		a.mu.Lock()
		a.typoSig, a.candidates, a.typos = sig, res.Flow.candidates, res.Flow.typos
		a.mu.Unlock()
	}
	return res, nil
}

// signature identifies the set of defined names a pass sees: what the executed cells bind
// and delete, in execution order, and the namespace.
func (fl *Flow) signature(opts Options) uint64 {
	h := fnv.New64a()
	for _, id := range fl.history {
		for _, d := range fl.cells[id].facts.Defs {
			h.Write([]byte(d.Name))
			if d.Kind == DefDelete {
				h.Write([]byte{1})
			}
			h.Write([]byte{0})
		}
		h.Write([]byte{2})
	}
	fmt.Fprintf(h, "ns %p %d", opts.Namespace, len(opts.Namespace))
	return h.Sum64()
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
	Range Range
	// ExecutionOrder of the cell's last run, 0 when it has not run.
	ExecutionOrder int
	Kind           DefKind
	Conditional    bool
}

// Flow is the dataflow of names across a notebook's cells in execution order.
type Flow struct {
	history []string // executed cell IDs in execution order
	cells   map[string]*flowCell
	// executed: name -> binding and deletion sites in executed cells, in execution order
	// (source order within a cell).
	executed map[string][]DefSite
	// notRun: name -> binding sites in cells that have not run, in page order.
	notRun map[string][]DefSite
	// star: an executed cell imports with *, or runs code premortem cannot see (%run).
	star bool
	// notRunStar is the page index of the first not-run cell with a star import, or -1.
	notRunStar int
	// candidates and typos memoise typo suggestions for one pass.
	candidates map[int][]string // by length
	typos      map[string]string
}

type flowCell struct {
	id    string
	index int
	order int
	facts *CellFacts
}

func newFlow(nb *notebook.Notebook, facts map[string]*CellFacts) *Flow {
	fl := &Flow{cells: map[string]*flowCell{}, executed: map[string][]DefSite{}, notRun: map[string][]DefSite{}, notRunStar: -1}
	var ran []*flowCell
	for i, c := range nb.Cells {
		f := facts[c.ID]
		if f == nil {
			continue
		}
		fc := &flowCell{id: c.ID, index: i, order: c.ExecutionOrder, facts: f}
		fl.cells[c.ID] = fc
		if c.Executed() {
			ran = append(ran, fc)
		} else {
			if len(f.StarImports) > 0 && fl.notRunStar < 0 {
				fl.notRunStar = i
			}
			for _, d := range f.Defs {
				if d.Kind != DefDelete {
					fl.notRun[d.Name] = append(fl.notRun[d.Name], fc.site(d))
				}
			}
		}
	}
	sort.SliceStable(ran, func(i, j int) bool { return ran[i].order < ran[j].order })
	for _, fc := range ran {
		fl.history = append(fl.history, fc.id)
		for _, d := range fc.facts.Defs {
			fl.executed[d.Name] = append(fl.executed[d.Name], fc.site(d))
		}
		if len(fc.facts.StarImports) > 0 {
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
	for _, s := range fl.executed[name] {
		if s.Kind != DefDelete {
			out = append(out, s)
		}
	}
	return append(out, fl.notRun[name]...)
}

// LastDefinition returns the binding of name the kernel holds after the executed cells:
// the last one in execution order. It reports false when no executed cell binds name or
// the last executed cell to touch it deleted it.
func (fl *Flow) LastDefinition(name string) (DefSite, bool) {
	return fl.lastBefore(name, 0, "")
}

// lastBefore returns the last binding of name in cells that ran before execution order
// limit (0: no limit), ignoring cell skip.
func (fl *Flow) lastBefore(name string, limit int, skip string) (DefSite, bool) {
	sites := fl.executed[name]
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
		fc := fl.cells[id]
		if fc == nil {
			return
		}
		seen := map[string]bool{}
		for _, u := range fc.facts.Uses {
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
