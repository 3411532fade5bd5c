package kernelclient

import (
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"
)

// BenchmarkBigCellNextRequest: a shadow run of a 16,000-line cell that starts with a blank
// line (IPython drops it, so the line map has work to do) holds the kernel's main thread
// for shadow-call-ms; normal-ms is a one-line cell's; delay-ms, their difference, is how
// much longer the user's next request waits (goal: under 100 ms; it was 53 s when the line
// map ran difflib in the kernel's main thread).
func BenchmarkBigCellNextRequest(b *testing.B) {
	l := launch(b, LaunchOptions{})
	ctx := ctxT(b, 20*time.Minute)
	mustExecute(b, ctx, l, "x = 0")
	if _, err := l.SandboxProbe(ctx, SandboxAuto); err != nil { // injects the inspector
		b.Fatal(err)
	}
	var sb strings.Builder
	sb.WriteString("\n")
	for i := 0; i < 16000; i++ {
		fmt.Fprintf(&sb, "x%d = %d\n", i, i)
	}
	cell := sb.String()
	// The kernel's main thread is held for the whole shadow request (it answers once the
	// child is forked): a request the user sends meanwhile waits that long. The delay the
	// large cell adds is its shadow request's time less a one-line cell's.
	shadowCall := func(code string) time.Duration {
		start := time.Now()
		r, err := l.Shadow(ctx, code, ShadowOptions{Timeout: 10 * time.Second})
		d := time.Since(start)
		if err != nil {
			b.Fatal(err)
		}
		if r.Token != "" {
			_ = l.ShadowCancel(ctx, r.Token) // only the kernel's time counts
		}
		return d
	}
	var small, big []time.Duration
	for i := 0; i < b.N; i++ {
		small = append(small, shadowCall("x = 1\n"))
		big = append(big, shadowCall(cell))
	}
	med := func(d []time.Duration) float64 {
		sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
		return float64(d[len(d)/2].Microseconds()) / 1000
	}
	s, g := med(small), med(big)
	b.ReportMetric(s, "normal-ms")
	b.ReportMetric(g, "shadow-call-ms")
	b.ReportMetric(g-s, "delay-ms")
}
