package lsp

import (
	"context"
	"encoding/json"
	"sort"
	"strings"
	"time"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/finding"
)

// inlayHint shows, at the end of each line a shadow run traced, the compact state of the
// names that line assigned: "X_train: (712, 8) float64".
func (s *Server) inlayHint(ctx context.Context, params json.RawMessage) (any, error) {
	var p InlayHintParams
	if err := decode("textDocument/inlayHint", params, &p); err != nil {
		return nil, err
	}
	hints := []InlayHint{}
	d, cellID, _, ok := s.locate(p.TextDocument.URI, p.Range.Start)
	if !ok {
		return hints, nil
	}
	s.mu.Lock()
	cells := d.nb.Cells
	if !d.percent {
		if i := d.nb.Index(cellID); i >= 0 {
			cells = cells[i : i+1]
		}
	}
	cells = append(cells[:0:0], cells...)
	s.mu.Unlock()
	for _, c := range cells {
		r, _ := d.sess.Shadow(c)
		if r == nil || len(r.Trace) == 0 {
			continue
		}
		lines := analysis.SplitLines(c.Text)
		for _, st := range r.Trace {
			line := st.Line - 1
			if line < 0 || line >= len(lines) || len(st.Names) == 0 {
				continue
			}
			fileLine := uint32(line + c.SourceLine)
			if fileLine < p.Range.Start.Line || fileLine > p.Range.End.Line {
				continue
			}
			names := make([]string, 0, len(st.Names))
			for n := range st.Names {
				names = append(names, n)
			}
			sort.Strings(names)
			var parts []string
			for _, n := range names {
				parts = append(parts, n+": "+compactString(st.Names[n]))
			}
			text := strings.TrimRight(lines[line], "\r")
			hints = append(hints, InlayHint{
				Position:    lspPos(finding.Position{Line: line, Character: analysis.UTF16Len(text)}, c.SourceLine),
				Label:       strings.Join(parts, ", "),
				Kind:        InlayHintKindType,
				Tooltip:     "traced by a premortem shadow run",
				PaddingLeft: true,
			})
		}
	}
	return hints, nil
}

// refreshInlayHints asks the client to request inlay hints again (a shadow run brought a
// new trace), when it supports workspace/inlayHint/refresh.
func (s *Server) refreshInlayHints() {
	s.mu.Lock()
	ok := s.client.inlayHintRefresh
	s.mu.Unlock()
	if !ok || s.conn == nil {
		return
	}
	go func() {
		ctx, cancel := context.WithTimeout(s.ctx, 5*time.Second)
		defer cancel()
		if _, err := s.conn.Call(ctx, "workspace/inlayHint/refresh", nil, nil); err != nil {
			s.tracef("inlayHint/refresh: %v", err)
		}
	}()
}
