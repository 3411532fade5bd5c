package lsp

import (
	"context"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"go.lsp.dev/protocol"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/judge"
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

	// sess owns what every layer answered about the cells (judge.Session): the static
	// layer's analyzer and the kernel's namespace, and the kernel-backed layers' answers
	// keyed by cell text, kernel epoch and execution count.
	sess *judge.Session

	// rmu guards the results below.
	rmu sync.Mutex
	// static is the static layer's result for snapshot staticSnap (gen staticGen).
	static     *analysis.Result
	staticSnap *notebook.Notebook
	staticGen  uint64
	// published is the last diagnostics sent per URI; only changes are sent again, and a
	// URI that leaves gets an empty list.
	published map[string][]protocol.Diagnostic
	// pubCache is how each cell's diagnostics were last built (see publish_cache.go).
	pubCache map[string]*pubEntry
	// staleRuns are the cells whose execution summary is from a kernel that has since
	// restarted or died (cell ID -> the execution order they showed then): snapshots show
	// them as never run until they run again. Guarded by Server.mu, like nb.
	staleRuns map[string]int
	// hold is the latest pass's hold on its focus cell's uncertain findings while its
	// shadow run is coming (hold.go); nil for none. Guarded by rmu.
	hold *shadowHold
}

// newDocument returns a document for nb; log receives the static layer's messages about
// cells that exceeded a bound on analysis work.
func newDocument(uri string, nb *notebook.Notebook, log func(msg string)) *document {
	return &document{
		uri:       uri,
		nb:        nb,
		sess:      judge.NewSession(log),
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
	d.sess.KernelChanged()
	d.rmu.Lock()
	d.pubCache = nil
	d.rmu.Unlock()
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

// analysisLog is where the static layer of the document at uri says that a cell exceeded
// a bound on analysis work: the client's log.
func (s *Server) analysisLog(uri string) func(msg string) {
	return func(msg string) { s.logf(protocol.MessageTypeInfo, "%s: %s", uri, msg) }
}
