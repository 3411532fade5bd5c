package lsp

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
)

// progressSeq numbers the server's work-done progress tokens.
var progressSeq atomic.Int64

// progress returns the pipeline's progress hook for a pass (judge.Pass.Progress): each
// call begins a $/progress report, when the client supports it; the function it returns
// reports a message, or ends the progress (once).
func (s *Server) progress(ctx context.Context) func(title string) func(msg string, end bool) {
	return func(title string) func(string, bool) { return s.beginProgress(ctx, title) }
}

// beginProgress starts a work-done progress titled title (a no-op when the client does not
// support them); the returned function reports msg, or ends the progress when end is set.
func (s *Server) beginProgress(ctx context.Context, title string) func(msg string, end bool) {
	s.mu.Lock()
	supported := s.client.workDoneProgress
	s.mu.Unlock()
	if !supported || s.conn == nil {
		return func(string, bool) {}
	}
	token := fmt.Sprintf("premortem-%d", progressSeq.Add(1))
	if _, err := s.conn.Call(ctx, "window/workDoneProgress/create", WorkDoneProgressCreateParams{Token: token}, nil); err != nil {
		s.tracef("workDoneProgress/create: %v", err)
		return func(string, bool) {}
	}
	s.notify("$/progress", ProgressParams{Token: token, Value: WorkDoneProgressValue{Kind: "begin", Title: title}})
	var once sync.Once
	return func(msg string, end bool) {
		if end {
			once.Do(func() {
				s.notify("$/progress", ProgressParams{Token: token, Value: WorkDoneProgressValue{Kind: "end"}})
			})
			return
		}
		s.notify("$/progress", ProgressParams{Token: token, Value: WorkDoneProgressValue{Kind: "report", Message: msg}})
	}
}
