package lsp

import (
	"context"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"go.lsp.dev/protocol"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/facts"
	"github.com/premortem/premortem/finding"
	"github.com/premortem/premortem/notebook"
)

// document is one synced notebook: a notebook document, or a percent-format .py file
// synced as a text document. The live model (nb, text) changes only on the connection's
// read goroutine with Server.mu held; passes and requests work on clones.
type document struct {
	uri string
	// percent is true for a .py file: cells come from its "# %%" markers, diagnostics go
	// to the file URI with cell lines shifted by Cell.SourceLine.
	percent bool
	text    string // the whole file, for percent documents

	nb *notebook.Notebook

	// gen counts changes; a pass or publication for an older gen is stale.
	gen        atomic.Uint64
	passCancel context.CancelFunc
	// passes counts the running passes (added under Server.mu while the document is
	// open), so a closed document's memory is released only once none uses it.
	passes sync.WaitGroup
	// focus is the cell edited last (notebooks only).
	focus string

	// analyzer caches per-cell facts; amu serializes passes and requests using it.
	amu      sync.Mutex
	analyzer *analysis.Analyzer

	// rmu guards the results below.
	rmu sync.Mutex
	// static is the static layer's result for snapshot staticSnap (gen staticGen).
	static     *analysis.Result
	staticSnap *notebook.Notebook
	staticGen  uint64
	// layers holds what the kernel-backed layers said per cell ID, valid while the cell's
	// text is unchanged.
	layers map[string]*cellLayers
	// published is the last diagnostics sent per URI; only changes are sent again, and a
	// URI that leaves gets an empty list.
	published map[string][]protocol.Diagnostic
	// namespace is the kernel namespace from the last inspection (nil: unknown), so the
	// static layer can be certain about names.
	namespace map[string]bool
	// pubCache is how each cell's diagnostics were last built (see publish_cache.go).
	pubCache map[string]*pubEntry
	// epoch counts the kernel's restarts (and deaths): facts taken in an older epoch are
	// about another kernel process, whatever their execution count says. Guarded by rmu.
	epoch int
	// staleRuns are the cells whose execution summary is from a kernel that has since
	// restarted or died (cell ID -> the execution order they showed then): snapshots show
	// them as never run until they run again. Guarded by Server.mu, like nb.
	staleRuns map[string]int
	// verify holds the fixes proven in a copy of the kernel, per cell (verify.go).
	verify verifyStore
	// hold is the latest pass's hold on its focus cell's uncertain findings while its
	// shadow run is coming (hold.go); nil for none. Guarded by rmu.
	hold *shadowHold
}

// cellLayers is what the rules, shadow and LLM layers found for one cell text. The
// kernel execution count each answer was taken at is its execCount: an answer older than
// the kernel's latest count is stale.
type cellLayers struct {
	text string
	// epoch is the document's kernel epoch the results belong to.
	epoch int
	// rulesExecCount is the execution count the facts were taken at.
	rulesExecCount int
	inspection     *facts.Inspection
	rules          []finding.Finding
	checked        bool
	shadow         *facts.ShadowResult
	shadowFind     []finding.Finding
	// shadowExecCount is the execution count the shadow run forked at; shadowProvisional
	// marks a fast answer whose full run goes on (or was stopped by a newer pass, which
	// then runs the cell again).
	shadowExecCount   int
	shadowProvisional bool
	llm               []finding.Finding
	// llmDone is set once the LLM answered for this text, at llmExecCount.
	llmDone      bool
	llmExecCount int
	notes        []string
	// version counts updates, so publish can tell the layers changed.
	version int
}

func newDocument(uri string, nb *notebook.Notebook) *document {
	return &document{
		uri:       uri,
		nb:        nb,
		analyzer:  analysis.NewAnalyzer(),
		layers:    map[string]*cellLayers{},
		published: map[string][]protocol.Diagnostic{},
	}
}

// cancelPass stops the running pass, if any. Callers hold Server.mu or own d.
func (d *document) cancelPass() {
	if d.passCancel != nil {
		d.passCancel()
		d.passCancel = nil
	}
}

// cellURI returns the URI diagnostics for a cell are published on: the cell URI itself
// for notebooks, the file for percent documents.
func (d *document) cellURI(cellID string) string {
	if d.percent {
		return d.uri
	}
	return cellID
}

// layersFor returns the kernel layers' results for the cell if they are still about its
// current text.
func (d *document) layersFor(c *notebook.Cell) *cellLayers {
	d.rmu.Lock()
	defer d.rmu.Unlock()
	l := d.layers[c.ID]
	if l == nil || l.text != c.Text || l.epoch != d.epoch {
		return nil
	}
	return l
}

// kernelEpoch returns the current kernel epoch; a caller asking the kernel takes it
// before, and records its answer with updateLayersAt.
func (d *document) kernelEpoch() int {
	d.rmu.Lock()
	defer d.rmu.Unlock()
	return d.epoch
}

// setLayers records new kernel-layer results for a cell, replacing stale ones.
func (d *document) updateLayers(c *notebook.Cell, f func(l *cellLayers)) {
	d.rmu.Lock()
	defer d.rmu.Unlock()
	d.updateLayersLocked(c, f)
}

// updateLayersAt is updateLayers for an answer asked of the kernel in epoch: it is
// dropped (false) when the kernel has restarted since, so no fact of the old kernel
// survives a restart under an execution count the new kernel reuses.
func (d *document) updateLayersAt(c *notebook.Cell, epoch int, f func(l *cellLayers)) bool {
	d.rmu.Lock()
	defer d.rmu.Unlock()
	if epoch != d.epoch {
		return false
	}
	d.updateLayersLocked(c, f)
	return true
}

func (d *document) updateLayersLocked(c *notebook.Cell, f func(l *cellLayers)) {
	l := d.layers[c.ID]
	if l == nil || l.text != c.Text || l.epoch != d.epoch {
		l = &cellLayers{text: c.Text, epoch: d.epoch}
		d.layers[c.ID] = l
	}
	f(l)
	l.version++
}

// kernelRestartedLocked resets the document to a new kernel (or none): a new epoch, no
// cached facts, an unknown namespace, and every run so far marked stale. Callers hold
// Server.mu.
func (d *document) kernelRestartedLocked() {
	if d.staleRuns == nil {
		d.staleRuns = map[string]int{}
	}
	for _, c := range d.nb.Cells {
		if c.Executed() {
			d.staleRuns[c.ID] = c.ExecutionOrder
		}
	}
	d.rmu.Lock()
	d.epoch++
	d.layers = map[string]*cellLayers{}
	d.namespace = nil
	d.pubCache = nil
	d.rmu.Unlock()
	d.verify.reset()
}

// ranInKernelLocked: the current kernel ran code, so a cell with that text is part of its
// history again. Callers hold Server.mu.
func (d *document) ranInKernelLocked(code string) {
	code = strings.TrimSpace(code)
	for id := range d.staleRuns {
		if c := d.nb.Cell(id); c == nil || strings.TrimSpace(c.Text) == code {
			delete(d.staleRuns, id)
		}
	}
}

// currentRun is the cell's execution order in the current kernel: 0 for a run that
// predates a restart. Callers hold Server.mu.
func (d *document) currentRun(c *notebook.Cell) int {
	if o, ok := d.staleRuns[c.ID]; ok && o == c.ExecutionOrder {
		return 0
	}
	return c.ExecutionOrder
}

// snapshot returns a copy of the live notebook that later changes do not affect. It is
// shallow on purpose: notebook.Apply is copy-on-write (a change replaces the *Cell values
// it touches and the metadata maps, it never writes into them), so sharing the unchanged
// cells is safe and a keystroke does not deep-copy 200 cells. Callers hold Server.mu.
//
// Cells whose run predates a kernel restart are shown as never run (copies, the live
// cells are not touched): the analysis then sees the new kernel's history. A cell leaves
// staleRuns for good when its execution summary changes (the client clears it while the
// cell runs again, then reports the new order) or when the new kernel runs its text.
func (d *document) snapshot() *notebook.Notebook {
	cp := *d.nb
	cp.Cells = slices.Clone(d.nb.Cells)
	for i, c := range cp.Cells {
		o, ok := d.staleRuns[c.ID]
		if !ok {
			continue
		}
		if c.ExecutionOrder != o {
			delete(d.staleRuns, c.ID)
			continue
		}
		fresh := *c
		fresh.ExecutionOrder, fresh.Success = 0, nil
		cp.Cells[i] = &fresh
	}
	return &cp
}
