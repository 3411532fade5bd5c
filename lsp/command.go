package lsp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/premortem/premortem/finding"
	"github.com/premortem/premortem/judge"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/kernelclient"
	"github.com/premortem/premortem/notebook"
)

// executeCommand runs one of the server's commands (premortem.server.*, or the legacy
// premortem.* ids). Results are what the client shows: explain returns a Markdown string
// (the VS Code extension opens it in a Markdown preview), attachKernel the notebook's
// KernelStatus, listKernels a []KernelEntry; the others return a short status string.
func (s *Server) executeCommand(ctx context.Context, params json.RawMessage) (any, error) {
	var p ExecuteCommandParams
	if err := decode("workspace/executeCommand", params, &p); err != nil {
		return nil, err
	}
	switch canonicalCommand(p.Command) {
	case CommandAttachKernel:
		return s.attachKernelCommand(ctx, p.Arguments)
	case CommandListKernels:
		return s.listKernelsCommand(ctx)
	case CommandRecheck:
		return s.recheckCommand(ctx, p.Arguments)
	case CommandShadowRun:
		return s.shadowRunCommand(ctx, p.Arguments)
	case CommandExplain:
		return s.explainCommand(ctx, p.Arguments)
	}
	return nil, jsonrpc2.Errorf(jsonrpc2.InvalidParams, "unknown command %q (premortem offers %s)", p.Command, strings.Join(serverCommands, ", "))
}

// listKernelsCommand: []. The running kernels on this machine and those of local Jupyter
// Servers, as `premortem kernels --json` finds them, bounded by discoverTimeout.
func (s *Server) listKernelsCommand(ctx context.Context) (any, error) {
	found, err := s.rt.discoverAll(ctx)
	if err != nil {
		return nil, err
	}
	return kernelEntries(found), nil
}

// stringArg returns argument i as a string ("" when absent or null), or the "uri"/"path"
// member of an object argument.
func stringArg(args []json.RawMessage, i int) (string, error) {
	if i >= len(args) || len(args[i]) == 0 || string(args[i]) == "null" {
		return "", nil
	}
	var sv string
	if err := json.Unmarshal(args[i], &sv); err == nil {
		return sv, nil
	}
	var obj struct {
		URI  string `json:"uri"`
		Path string `json:"path"`
	}
	if err := json.Unmarshal(args[i], &obj); err != nil {
		return "", jsonrpc2.Errorf(jsonrpc2.InvalidParams, "argument %d must be a string: %v", i+1, err)
	}
	if obj.URI != "" {
		return obj.URI, nil
	}
	return obj.Path, nil
}

// attachKernelCommand: [connectionFile?, notebookUri?]. The file may also be a server
// kernel URL from listKernels. Without one it uses the premortem.kernel.connectionFile
// setting, then discovery. It returns the KernelStatus of the (first) notebook; a failure
// is the error response (the client shows it) and the notebooks' status.
func (s *Server) attachKernelCommand(ctx context.Context, args []json.RawMessage) (any, error) {
	path, err := stringArg(args, 0)
	if err != nil {
		return nil, err
	}
	target, err := stringArg(args, 1)
	if err != nil {
		return nil, err
	}
	if path == "" {
		path = s.currentSettings().Kernel.ConnectionFile
	}
	var docs []*document
	if target != "" {
		d := s.documentFor(target)
		if d == nil || d.percent {
			return nil, jsonrpc2.Errorf(jsonrpc2.InvalidParams, "%s is not an open notebook", target)
		}
		docs = []*document{d}
	} else {
		docs = s.notebooks()
	}
	if len(docs) == 0 {
		return nil, jsonrpc2.NewError(jsonrpc2.InvalidParams, "open a notebook first: a kernel is attached to notebooks")
	}
	// Sorted, so the notebook whose status is returned does not depend on map order.
	slices.SortFunc(docs, func(a, b *document) int { return strings.Compare(a.uri, b.uri) })
	actx, cancel := context.WithTimeout(ctx, attachTimeout)
	defer cancel()
	if _, err := s.rt.attach(actx, docs, path, originCommand); err != nil {
		return nil, err
	}
	st := s.rt.statusOf(docs[0].uri)
	if len(docs) > 1 {
		st.URI = "" // several notebooks: the client keeps its own (each got its status)
	}
	return st, nil
}

// documentFor finds the document of a notebook, percent-file or cell URI.
func (s *Server) documentFor(uri string) *document {
	s.mu.Lock()
	defer s.mu.Unlock()
	if d := s.docs[uri]; d != nil {
		return d
	}
	return s.cells[uri]
}

// recheckCommand: [uri?]. Forgets cached kernel-layer answers and runs a pass now.
func (s *Server) recheckCommand(ctx context.Context, args []json.RawMessage) (any, error) {
	uri, err := stringArg(args, 0)
	if err != nil {
		return nil, err
	}
	var docs []*document
	if uri != "" {
		d := s.documentFor(uri)
		if d == nil {
			return nil, jsonrpc2.Errorf(jsonrpc2.InvalidParams, "%s is not open", uri)
		}
		docs = []*document{d}
	} else {
		s.mu.Lock()
		for _, d := range s.docs {
			docs = append(docs, d)
		}
		s.mu.Unlock()
	}
	for _, d := range docs {
		d.sess.Forget()
		focus := ""
		if _, isCell := s.cellsOf(uri); isCell {
			focus = uri
		}
		s.scheduleWith(d, focus, true)
	}
	return fmt.Sprintf("re-checking %d document(s)", len(docs)), nil
}

// cellsOf reports whether uri is a cell URI.
func (s *Server) cellsOf(uri string) (*document, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d, ok := s.cells[uri]
	return d, ok
}

// cellSnapshot returns the document, a snapshot and the cell for a cell URI.
func (s *Server) cellSnapshot(ctx context.Context, uri string) (*document, *notebook.Notebook, *analysis.Result, *notebook.Cell, error) {
	d, ok := s.cellsOf(uri)
	if !ok {
		return nil, nil, nil, nil, jsonrpc2.Errorf(jsonrpc2.InvalidParams, "%q is not a cell of an open notebook", uri)
	}
	res, snap, err := s.current(ctx, d)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	c := snap.Cell(uri)
	if c == nil {
		return nil, nil, nil, nil, jsonrpc2.Errorf(jsonrpc2.InvalidParams, "cell %q is gone", uri)
	}
	return d, snap, res, c, nil
}

// shadowRunCommand: [cellUri]. Shadow-runs the cell now (the child's guards still refuse
// side effects) and returns a one-line outcome. Every way it can fail that the user can
// cause has its own answer: no kernel, a busy kernel (the run is then made when the kernel
// is idle, and its outcome shown), a lost kernel, a newer shadow run that cancelled it.
func (s *Server) shadowRunCommand(ctx context.Context, args []json.RawMessage) (any, error) {
	uri, err := stringArg(args, 0)
	if err != nil {
		return nil, err
	}
	d, _, _, _, err := s.cellSnapshot(ctx, uri)
	if err != nil {
		return nil, err
	}
	a := s.rt.attachmentFor(d)
	if a == nil {
		if lost := s.rt.lostAttachment(d); lost != "" {
			return nil, jsonrpc2.NewError(jsonrpc2.InvalidRequest, lost+"; premortem re-attaches by itself when the kernel restarts, or "+attachHint)
		}
		return nil, jsonrpc2.NewError(jsonrpc2.InvalidRequest, "no kernel attached: "+attachHint)
	}
	// Only the user's cell makes this wait for idle: a request of ours in flight (the
	// automatic run this one cancels, an inspection) ends by itself.
	if a.k.RunningOthers() {
		return s.rt.shadowWhenIdle(a, uri), nil
	}
	msg, err := s.explicitShadow(ctx, a, uri)
	if errors.Is(err, kernelclient.ErrBusy) {
		return s.rt.shadowWhenIdle(a, uri), nil
	}
	if err != nil {
		return nil, err
	}
	s.showf(protocol.MessageTypeInfo, "shadow run of the cell: %s", msg)
	return msg, nil
}

// Answers of the shadowRun command that are not an outcome.
const (
	shadowBusyAnswer      = "the kernel is busy running your cell; premortem will run it when the kernel is idle"
	shadowCancelledAnswer = "cancelled by a newer shadow run"
)

// explicitShadow makes the shadow run the user asked for: it takes precedence over the
// automatic runs (shadowGate) and reports what became of it.
func (s *Server) explicitShadow(ctx context.Context, a *attachment, uri string) (string, error) {
	d, snap, res, c, err := s.cellSnapshot(ctx, uri)
	if err != nil {
		return "", err
	}
	settings := s.currentSettings()
	mode := settings.Shadow.Mode
	if mode == ShadowOff {
		mode = ShadowSafe
	}
	p := &pass{d: d, gen: d.gen.Load(), snap: snap, settings: settings, focus: c.ID, force: true}
	// This run answers for the cell now: it takes over the hold before the automatic run it
	// cancels gives up, so what waited for that run goes on waiting for this one.
	d.beginHold(p, c.ID, true)
	defer s.endHold(p)
	seq, end, err := a.shadow.beginExplicit(ctx)
	if err != nil {
		return "", err
	}
	defer end()
	// The user asked for this run: wait for the full run's answer (progress shows it).
	r, err := s.rt.shadowNow(ctx, p, a, res, c, mode)
	if kept, provisional := d.sess.Shadow(c); err == nil && r != nil && !judge.Superseded(r) && kept != nil && !provisional {
		r = kept
	}
	switch {
	case judge.Superseded(r) || (r == nil && a.shadow.newerThan(seq)):
		return shadowCancelledAnswer, nil
	case err != nil && errors.Is(err, kernelclient.ErrBusy):
		return "", err
	case err != nil && (errors.Is(err, kernelclient.ErrDead) || errors.Is(err, kernelclient.ErrRestarted)):
		return "", fmt.Errorf("the kernel was lost during the shadow run (%v); premortem re-attaches when it comes back", err)
	case r == nil && ctx.Err() != nil:
		return "", ctx.Err()
	case r == nil && errors.Is(err, judge.ErrStaleEpoch):
		return "", errors.New("the kernel changed during the shadow run (it restarted, or another one was attached); run the shadow run again")
	case r == nil && err != nil:
		return "", fmt.Errorf("the shadow run failed: %v", err)
	case r == nil:
		return "", errors.New("the shadow run failed; see the premortem log")
	}
	if r.Status == "ok" && r.DevRun.LibraryOnly() {
		return "ran clean with the library's work shortened (fast dev run: " + strings.Join(r.DevRun.Library, "; ") + "); the full run did not finish", nil
	}
	if r.Status == "ok" && r.DevRun.Stands() {
		return "ran clean with its loops shortened (fast dev run: their first and last iterations, every line of them); the full run did not finish", nil
	}
	if r.Status == "ok" && r.DevRun != nil && r.DevRun.Shortened {
		return "ran clean with its loops shortened (fast dev run); the full run did not finish", nil
	}
	return shadowSummary(r.Status, r.Exception, r.Message, r.Line, r.Reason), nil
}

func shadowSummary(status, exc, msg string, line int, reason string) string {
	switch status {
	case "error":
		return fmt.Sprintf("%s: %s (line %d)", exc, msg, line)
	case "ok":
		return "ran to the end without an exception"
	}
	if reason != "" {
		return status + ": " + reason
	}
	return status
}

// explainCommand: [cellUri, range or diagnostic?]. Returns Markdown explaining the
// findings at the range (all of the cell's when absent): the LLM's longer diagnosis when an
// endpoint is configured, else the findings with their evidence and fixes.
func (s *Server) explainCommand(ctx context.Context, args []json.RawMessage) (any, error) {
	uri, err := stringArg(args, 0)
	if err != nil {
		return nil, err
	}
	d, snap, res, c, err := s.cellSnapshot(ctx, uri)
	if err != nil {
		return nil, err
	}
	var want *finding.Range
	if len(args) > 1 {
		var probe struct {
			Range *protocol.Range    `json:"range"`
			Start *protocol.Position `json:"start"`
			End   *protocol.Position `json:"end"`
		}
		if err := json.Unmarshal(args[1], &probe); err == nil {
			switch {
			case probe.Range != nil:
				want = &finding.Range{Start: cellPos(probe.Range.Start, 0), End: cellPos(probe.Range.End, 0)}
			case probe.Start != nil && probe.End != nil:
				want = &finding.Range{Start: cellPos(*probe.Start, 0), End: cellPos(*probe.End, 0)}
			}
		}
	}
	var picked []finding.Finding
	for _, f := range d.merged(res, c, snap.Index(c.ID), s.currentSettings()) {
		if want == nil || overlaps(f.Range, *want) {
			picked = append(picked, f)
		}
	}
	if len(picked) == 0 {
		return "premortem has no finding here to explain.", nil
	}
	return s.rt.llm.explain(ctx, d, snap, res, c, picked)
}

// findingsMarkdown renders findings with their evidence and fixes (the explanation
// without an LLM).
func findingsMarkdown(fs []finding.Finding) string {
	var b strings.Builder
	for i, f := range fs {
		if i > 0 {
			b.WriteString("\n---\n\n")
		}
		title := f.Message
		if f.Exception != "" {
			title = f.Exception + ": " + f.Message
		}
		fmt.Fprintf(&b, "### %s\n\n*%s layer, line %d, `%s`*\n\n", title, f.Source, f.Range.Start.Line+1, f.Code)
		if len(f.Evidence) > 0 {
			b.WriteString("**Evidence**\n\n")
			for _, e := range f.Evidence {
				fmt.Fprintf(&b, "- %s\n", e)
			}
			b.WriteString("\n")
		}
		if f.Explanation != "" {
			b.WriteString(f.Explanation)
			b.WriteString("\n\n")
		}
		for _, fx := range f.Fixes {
			fmt.Fprintf(&b, "**Fix:** %s\n\n", fx.Title)
			for _, e := range fx.Edits {
				fmt.Fprintf(&b, "```python\n%s\n```\n\n", e.NewText)
			}
		}
	}
	return b.String()
}
