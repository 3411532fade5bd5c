package lsp

import (
	"sync"

	"github.com/premortem/premortem/finding"
	"github.com/premortem/premortem/judge"
	"github.com/premortem/premortem/notebook"
)

// This file is what the editor keeps of fix verification. Verification itself is the last
// layer of judge's pipeline: after the squiggle of a predicted crash is published (static,
// rules, shadow, LLM), the focus cell's candidate repairs are shadow-run one at a time
// (judge.VerifyFixes). Each candidate proven to make the cell run is published at once
// (layers.go records it here): the finding's fixes are replaced by the verified ones, so
// the diagnostic's data and the code actions change and the client asks for them again.
// Verification belongs to the pass: the next edit or run cancels it; a busy kernel stops
// it (kernelclient.ErrBusy) and the next idle event resumes it from the outcomes already
// collected, which are kept per cell text and kernel execution count.

// verifyStore holds the verification state of a document's cells (document.verify).
type verifyStore struct {
	mu    sync.Mutex
	cells map[string]*cellVerify // by cell ID
	// version counts records and resets (changes).
	version int
}

// cellVerify is what verification learned about one cell text at one kernel state.
type cellVerify struct {
	text string
	// execCount is the kernel execution count the outcomes are about.
	execCount int
	// known are the outcomes of the candidates run so far.
	known map[string]judge.Outcome
	// findings are the findings with verified fixes, as of the last outcome; matched to
	// the published findings by digest.
	findings []finding.Finding
	done     bool
}

// reset forgets every cell's verification: after a kernel restart the proofs were about
// another kernel's state, and execution counts start again (a count could match).
func (vs *verifyStore) reset() {
	vs.mu.Lock()
	vs.cells = nil
	vs.version++
	vs.mu.Unlock()
}

// state returns the cell's verification state for its current text and kernel execution
// count, starting a fresh one when either changed.
func (vs *verifyStore) state(c *notebook.Cell, execCount int) *cellVerify {
	vs.mu.Lock()
	defer vs.mu.Unlock()
	if vs.cells == nil {
		vs.cells = map[string]*cellVerify{}
	}
	cv := vs.cells[c.ID]
	if cv == nil || cv.text != c.Text || cv.execCount != execCount {
		cv = &cellVerify{text: c.Text, execCount: execCount, known: map[string]judge.Outcome{}}
		vs.cells[c.ID] = cv
	}
	return cv
}

// record stores an outcome and the findings as they stand after it.
func (vs *verifyStore) record(cv *cellVerify, o judge.Outcome, fs []finding.Finding) {
	vs.mu.Lock()
	defer vs.mu.Unlock()
	if o.Key != "" {
		cv.known[o.Key] = o
	}
	if fs != nil {
		cv.findings = fs
	}
	vs.version++
}

// changes counts what verification recorded: publish rebuilds a cell's diagnostics when
// it moved (publish_cache.go), so a proven fix shows.
func (vs *verifyStore) changes() int {
	vs.mu.Lock()
	defer vs.mu.Unlock()
	return vs.version
}

// withVerified replaces the fixes (and evidence) of the findings verification has
// answered for, when its answer is about the cell's current text. Callers hold d.rmu;
// vs.mu is taken inside (never the other way round).
func (vs *verifyStore) withVerified(c *notebook.Cell, fs []finding.Finding) []finding.Finding {
	vs.mu.Lock()
	defer vs.mu.Unlock()
	cv := vs.cells[c.ID]
	if cv == nil || cv.text != c.Text || len(cv.findings) == 0 {
		return fs
	}
	by := map[string]finding.Finding{}
	for _, f := range cv.findings {
		by[findingDigest(f)] = f
	}
	out := make([]finding.Finding, len(fs))
	for i, f := range fs {
		if v, ok := by[findingDigest(f)]; ok && v.Exception == f.Exception {
			f.Fixes = v.Fixes
			f.Evidence = v.Evidence
			if len(f.Fixes) > 0 && f.Fixes[0].Verified {
				// Said in the diagnostic too: its message changes, so the client re-reads
				// the code actions (and the user sees a proven fix exists).
				f.Evidence = append(append([]string(nil), f.Evidence...), "quick fix proven in a copy of the kernel: "+f.Fixes[0].Title)
			}
		}
		out[i] = f
	}
	return out
}
