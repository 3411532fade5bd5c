package kernelclient

import (
	"sort"
	"testing"
	"time"

	"github.com/premortem/premortem/facts"
	"github.com/premortem/premortem/internal/testkit/python"
)

// trainCell is a 20-epoch training cell: an MLP on 20 000 rows in batches of 64 (6 260
// steps), with the model, optimizer and loader from an earlier cell.
const trainSetup = "import torch\nfrom torch import nn\nfrom torch.utils.data import DataLoader, TensorDataset\n" +
	"torch.manual_seed(0)\nX = torch.randn(20000, 64)\ny = torch.randint(0, 10, (20000,))\n" +
	"loader = DataLoader(TensorDataset(X, y), batch_size=64)\n" +
	"model = nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 10))\n" +
	"opt = torch.optim.Adam(model.parameters())"

const trainCell = "for epoch in range(20):\n    for xb, yb in loader:\n        loss = nn.functional.cross_entropy(model(xb), yb)\n" +
	"        opt.zero_grad()\n        loss.backward()\n        opt.step()\n"

// BenchmarkShadowTrain20Epochs: wall time of the full shadow run (no fast dev run) of a
// 20-epoch training cell on meta tensors (--shadow-tensors meta: no arithmetic) and on real
// tensors. run-ms is the child's run phase.
func BenchmarkShadowTrain20Epochs(b *testing.B) {
	python.Require(b, "torch")
	l := launch(b, LaunchOptions{})
	ctx := ctxT(b, 20*time.Minute)
	mustExecute(b, ctx, l, trainSetup)
	for _, tensors := range []string{facts.TensorsMeta, facts.TensorsReal} {
		b.Run("tensors="+tensors, func(b *testing.B) {
			var lat []time.Duration
			var run []float64
			for i := 0; i < b.N; i++ {
				start := time.Now()
				r := runShadow(b, ctx, l, trainCell, ShadowOptions{Timeout: 10 * time.Minute, Tensors: tensors})
				lat = append(lat, time.Since(start))
				if r.Status != facts.ShadowOK {
					b.Fatalf("unexpected outcome %+v", r)
				}
				if (r.Meta != nil) != (tensors == facts.TensorsMeta) {
					b.Fatalf("tensors %s: meta %+v", tensors, r.Meta)
				}
				if r.Meta != nil && r.Meta.CUDACalls != 0 {
					b.Fatalf("meta run made %d CUDA calls", r.Meta.CUDACalls)
				}
				run = append(run, r.ChildPhasesMS["run"])
			}
			sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
			sort.Float64s(run)
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
			b.ReportMetric(run[len(run)/2], "run-ms")
		})
	}
}
