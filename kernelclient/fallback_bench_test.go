package kernelclient

import (
	"fmt"
	"os"
	"sort"
	"testing"
	"time"

	"github.com/premortem/premortem/facts"
	"github.com/premortem/premortem/internal/testkit/python"
)

// BenchmarkFallbackView: what the fallback's private view of files (inspector 33_view.py)
// costs a shadow run. The same cell writes a CSV and an .npy and reads them back, once to
// paths (through the view) and once to in-memory buffers (no file at all); the difference of
// the run phases is the emulation's cost, guards-ms the time to install the view and the
// other guards, p50-ms the whole verdict. "libraries" writes and reads back through the
// writers whose C library opens paths (33_writers.py: sqlite3 via to_sql, PyTables via
// to_hdf), emulated in memory; it is skipped without PyTables.
func BenchmarkFallbackView(b *testing.B) {
	python.Require(b, "pandas")
	l := launch(b, LaunchOptions{})
	ctx := ctxT(b, 10*time.Minute)
	mustExecute(b, ctx, l, "import pandas as pd, numpy as np, io\ndf = pd.DataFrame({'Age': np.arange(1000.0)})\n"+
		"try:\n    import tables  # as a notebook that uses HDF5 has: the child does not import it\nexcept ImportError:\n    pass")
	if _, err := l.SandboxProbe(ctx, SandboxForceFallback); err != nil { // injects the inspector
		b.Fatal(err)
	}
	dir := b.TempDir()
	cells := map[string]string{
		"files": fmt.Sprintf("p = %q\ndf.to_csv(p + '/a.csv', index=False)\nback = pd.read_csv(p + '/a.csv')\n"+
			"np.save(p + '/a.npy', back.values)\nx = np.load(p + '/a.npy')\nassert x.shape == (1000, 1)", dir),
		"memory": "buf = io.StringIO()\ndf.to_csv(buf, index=False)\nbuf.seek(0)\nback = pd.read_csv(buf)\n" +
			"nb = io.BytesIO()\nnp.save(nb, back.values)\nnb.seek(0)\nx = np.load(nb)\nassert x.shape == (1000, 1)",
	}
	cells["libraries"] = fmt.Sprintf("import sqlite3\np = %q\ndf.to_sql('df', sqlite3.connect(p + '/a.db'), index=False)\n"+
		"back = pd.read_sql('select * from df', sqlite3.connect(p + '/a.db'))\ndf.to_hdf(p + '/a.h5', 'df')\n"+
		"x = pd.read_hdf(p + '/a.h5', 'df')\nassert x.shape == back.shape == (1000, 1)", dir)
	for _, name := range []string{"memory", "files", "libraries"} {
		b.Run(name, func(b *testing.B) {
			if name == "libraries" {
				python.Require(b, "tables")
			}
			var lat []time.Duration
			phase := map[string][]float64{}
			for i := 0; i < b.N; i++ {
				start := time.Now()
				r := runShadow(b, ctx, l, cells[name], ShadowOptions{Sandbox: SandboxForceFallback})
				lat = append(lat, time.Since(start))
				if r.Status != facts.ShadowOK || r.Sandbox != facts.SandboxFallback {
					b.Fatalf("unexpected outcome %+v", r)
				}
				for _, k := range []string{"guards", "run"} {
					phase[k] = append(phase[k], r.ChildPhasesMS[k])
				}
			}
			sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
			for k, unit := range map[string]string{"guards": "guards-ms", "run": "run-ms"} {
				v := phase[k]
				sort.Float64s(v)
				b.ReportMetric(v[len(v)/2], unit)
			}
		})
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		b.Fatalf("the view wrote to the real directory: %v", left)
	}
}
