package lsp

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"

	"go.lsp.dev/protocol"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/facts"
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
	// verify holds the fixes proven in a copy of the kernel, per cell (verify.go).
	verify verifyStore
}

// cellLayers is what the rules, shadow and LLM layers found for one cell text.
type cellLayers struct {
	text string
	// runID is the kernel execution count the facts were taken at.
	runID      int
	inspection *facts.Inspection
	rules      []analysis.Finding
	checked    bool
	shadow     *facts.ShadowResult
	shadowFind []analysis.Finding
	// shadowRun is the kernel execution count the shadow run forked at.
	shadowRun int
	llm       []analysis.Finding
	// llmDone is set once the LLM answered for this text, at kernel count llmRun.
	llmDone bool
	llmRun  int
	notes   []string
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
	if l == nil || l.text != c.Text {
		return nil
	}
	return l
}

// setLayers records new kernel-layer results for a cell, replacing stale ones.
func (d *document) updateLayers(c *notebook.Cell, f func(l *cellLayers)) {
	d.rmu.Lock()
	defer d.rmu.Unlock()
	l := d.layers[c.ID]
	if l == nil || l.text != c.Text {
		l = &cellLayers{text: c.Text}
		d.layers[c.ID] = l
	}
	f(l)
}

// snapshot returns a copy of the live notebook that later changes do not affect. It is
// shallow on purpose: notebook.Apply is copy-on-write (a change replaces the *Cell values
// it touches and the metadata maps, it never writes into them), so sharing the unchanged
// cells is safe and a keystroke does not deep-copy 200 cells. Callers hold Server.mu.
func (d *document) snapshot() *notebook.Notebook {
	cp := *d.nb
	cp.Cells = slices.Clone(d.nb.Cells)
	return &cp
}
