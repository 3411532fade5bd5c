package kernelclient

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/premortem/premortem/internal/testkit/python"
)

// BenchmarkSilentExecute is the round trip of an empty silent execute: the floor of every
// premortem request (send, kernel busy/idle, reply, idle status).
func BenchmarkSilentExecute(b *testing.B) {
	l := launch(b, LaunchOptions{})
	ctx := ctxT(b, 5*time.Minute)
	var busy time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, _, err := l.evalSilent(ctx, nil); err != nil {
			b.Fatal(err)
		}
		busy += l.LastBusy()
	}
	b.ReportMetric(float64(busy.Microseconds())/1000/float64(b.N), "busy-ms/op")
}

// benchNamespace binds 20 names of the kinds rules ask about most.
var benchNamespace = strings.Join([]string{
	"import numpy as np, pandas as pd",
	"n0, n1, n2 = 1, 2.5, 'text'",
	"l0 = list(range(1000)); t0 = tuple(range(10)); d0 = {str(i): i for i in range(100)}; s0 = set(range(50))",
	"a0 = np.arange(10000.0).reshape(100, 100); a1 = np.zeros(10, dtype=np.int32)",
	"df = pd.DataFrame({'Age': np.arange(1000.0), 'Name': ['x'] * 1000, 'Fare': np.linspace(0, 1, 1000)})",
	"ser = df['Age']; idx = df.index; g = df.groupby('Name')",
	"def f(x, y=1): return x",
	"class C: pass",
	"obj = C(); none = None; flag = True",
}, "\n")

var benchNames = []string{"n0", "n1", "n2", "l0", "t0", "d0", "s0", "a0", "a1", "df", "ser", "idx", "g", "f", "C", "obj", "none", "flag", "df.Age", "df.nope"}

// BenchmarkInspect20 inspects 20 names (values on) in one request; busy-ms/op is how long
// the kernel was busy for it (what the user's next cell could wait at worst).
func BenchmarkInspect20(b *testing.B) {
	python.Require(b, "pandas")
	l := launch(b, LaunchOptions{})
	ctx := ctxT(b, 5*time.Minute)
	if r, err := l.Execute(ctx, benchNamespace); err != nil || r.Status != "ok" {
		b.Fatalf("setup: %+v %v", r, err)
	}
	if len(benchNames) != 20 {
		b.Fatal("want 20 names")
	}
	// The first call injects the inspector: not what is measured.
	if _, err := l.Inspect(ctx, InspectRequest{Names: benchNames}); err != nil {
		b.Fatal(err)
	}
	for _, values := range []bool{true, false} {
		b.Run(fmt.Sprintf("values=%v", values), func(b *testing.B) {
			var busy time.Duration
			var inspMS float64
			for i := 0; i < b.N; i++ {
				ins, err := l.Inspect(ctx, InspectRequest{Names: benchNames, NoValues: !values})
				if err != nil {
					b.Fatal(err)
				}
				if len(ins.Values) != 20 {
					b.Fatalf("%d values", len(ins.Values))
				}
				busy += l.LastBusy()
				inspMS += ins.ElapsedMS
			}
			b.ReportMetric(float64(busy.Microseconds())/1000/float64(b.N), "busy-ms/op")
			b.ReportMetric(inspMS/float64(b.N), "inspector-ms/op")
		})
	}
}

// BenchmarkInject measures injecting the inspector module (first Inspect per kernel
// session): the inspector is removed from sys.modules before each call.
func BenchmarkInject(b *testing.B) {
	l := launch(b, LaunchOptions{})
	ctx := ctxT(b, 5*time.Minute)
	var busy time.Duration
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		if _, _, err := l.evalSilent(ctx, map[string]string{"d": "__import__('sys').modules.pop('" + inspectorModule + "', None) and None"}); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if _, err := l.Inspect(ctx, InspectRequest{Names: []string{"x"}}); err != nil {
			b.Fatal(err)
		}
		busy += l.LastBusy()
	}
	b.ReportMetric(float64(busy.Microseconds())/1000/float64(b.N), "busy-ms/op")
}
