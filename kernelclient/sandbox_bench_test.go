package kernelclient

import (
	"context"
	"sort"
	"testing"
	"time"

	"github.com/premortem/premortem/facts"
	"github.com/premortem/premortem/internal/testkit/python"
)

// BenchmarkShadowSandbox: shadow verdict latency (fork, sandbox, run, collection) of a small
// cell with pandas and torch loaded, with the namespace sandbox and with the forced fallback,
// in a small kernel and in one holding 2 GB (touched, so resident). Goal: p50 < 150 ms small,
// < 250 ms with 2 GB. sandbox-ms is the child's sandbox phase (namespaces, overlay root,
// second fork, /proc, containment; or the fallback's scratch and containment), overlay-ms
// and init-ms two of its steps.
func BenchmarkShadowSandbox(b *testing.B) {
	python.Require(b, "torch")
	for _, size := range []string{"small", "2GB"} {
		b.Run(size, func(b *testing.B) {
			l := launch(b, LaunchOptions{})
			ctx := ctxT(b, 20*time.Minute)
			setup := "import pandas as pd, torch\ndf = pd.DataFrame({'Age': [1.0, 2.0]})"
			if size == "2GB" {
				setup += "\nimport numpy as np\nballast = np.ones(2 * 1024**3 // 8)"
			}
			mustExecute(b, ctx, l, setup)
			if _, err := l.SandboxProbe(ctx, SandboxAuto); err != nil { // injects the inspector
				b.Fatal(err)
			}
			for _, sb := range []string{SandboxAuto, SandboxForceFallback} {
				b.Run("sandbox="+sb, func(b *testing.B) {
					var lat []time.Duration
					var phase = map[string][]float64{}
					var kind string
					for i := 0; i < b.N; i++ {
						start := time.Now()
						r := runShadow(b, ctx, l, smallCell, ShadowOptions{Trace: true, Sandbox: sb})
						lat = append(lat, time.Since(start))
						if r.Status != facts.ShadowError || r.Exception != "KeyError" {
							b.Fatalf("unexpected outcome %+v", r)
						}
						kind = r.Sandbox
						for _, k := range []string{"sandbox", "sandbox_overlay", "sandbox_fork_init", "sandbox_maps", "run"} {
							phase[k] = append(phase[k], r.ChildPhasesMS[k])
						}
					}
					sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
					b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
					for k, unit := range map[string]string{"sandbox": "sandbox-ms", "sandbox_overlay": "overlay-ms",
						"sandbox_fork_init": "init-ms", "sandbox_maps": "maps-ms", "run": "run-ms"} {
						v := phase[k]
						sort.Float64s(v)
						b.ReportMetric(v[len(v)/2], unit)
					}
					b.Logf("sandbox in force: %s", kind)
				})
			}
			ctx2, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			l.Execute(ctx2, "ballast = None")
		})
	}
}
