package kernelclient

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/premortem/premortem/facts"
	"github.com/premortem/premortem/internal/testkit/python"
)

// stateProbe prints, as JSON, everything premortem must leave unchanged in the user's kernel:
// history, outputs, _/__/___, execution count, the user's names and the identities of their
// values, and the random/numpy/torch RNG states. It binds no name itself; the probe run moves
// len(In) and the execution count by one.
const stateProbe = `print(__import__('json').dumps({
 'in': len(In), 'out': sorted(Out), 'u1': repr(_)[:80], 'u2': repr(__)[:80], 'u3': repr(___)[:80],
 'count': get_ipython().execution_count,
 'names': sorted([k, id(v)] for k, v in globals().items() if not k.startswith('_')),
 'random': __import__('hashlib').sha256(repr(__import__('random').getstate()).encode()).hexdigest(),
 'numpy': (lambda np: None if np is None else __import__('hashlib').sha256(repr(np.random.get_state()[1].tolist()).encode() + repr(np.random.get_state()[2:]).encode()).hexdigest())(__import__('sys').modules.get('numpy')),
 'torch': (lambda t: None if t is None else __import__('hashlib').sha256(bytes(t.get_rng_state().tolist())).hexdigest())(__import__('sys').modules.get('torch')),
}))`

// kernelState is stateProbe's output.
type kernelState struct {
	In     int      `json:"in"`
	Out    []int    `json:"out"`
	U1     string   `json:"u1"`
	U2     string   `json:"u2"`
	U3     string   `json:"u3"`
	Count  int      `json:"count"`
	Names  [][2]any `json:"names"`
	Random string   `json:"random"`
	Numpy  *string  `json:"numpy"`
	Torch  *string  `json:"torch"`
}

// probeState runs stateProbe as a user execute.
func probeState(t testing.TB, ctx context.Context, k Kernel) kernelState {
	t.Helper()
	r, err := k.Execute(ctx, stateProbe)
	if err != nil || r.Status != "ok" {
		t.Fatalf("state probe: %+v %v", r, err)
	}
	var s kernelState
	if err := json.Unmarshal([]byte(r.Stdout), &s); err != nil {
		t.Fatalf("state probe output %q: %v", r.Stdout, err)
	}
	return s
}

// sameState compares two probes taken with nothing but premortem's requests in between.
func sameState(t testing.TB, what string, before, after kernelState) {
	t.Helper()
	if after.Count != before.Count+1 || after.In != before.In+1 {
		t.Errorf("%s moved the history: count %d -> %d, len(In) %d -> %d", what, before.Count, after.Count, before.In, after.In)
	}
	after.Count, after.In = before.Count, before.In
	if !reflect.DeepEqual(before, after) {
		t.Errorf("%s changed the user's kernel state:\nbefore %+v\nafter  %+v", what, before, after)
	}
}

// mustExecute runs code as the user would and fails the test on an error.
func mustExecute(t testing.TB, ctx context.Context, k Kernel, code string) *ExecuteResult {
	t.Helper()
	r, err := k.Execute(ctx, code)
	if err != nil {
		t.Fatalf("execute %.60q: %v", code, err)
	}
	if r.Status != "ok" {
		t.Fatalf("execute %.60q: %s: %s\n%s", code, r.Ename, r.Evalue, r.Stderr)
	}
	return r
}

// kindsSetup binds one value of each kind the inspector knows.
const kindsSetup = `
import random, numpy as np, pandas as pd, torch, scipy.sparse as sp
from PIL import Image
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC
random.seed(1); np.random.seed(2); torch.manual_seed(3)
df = pd.DataFrame({"Age": [22.0, None, 35.0], "Price": ["$36,945", "12", None], "n": [1, 2, 3]})
gb = df.groupby("n")
arr = np.arange(12, dtype=np.float32).reshape(3, 4)
t = torch.ones(2, 3, requires_grad=True)
net = torch.nn.Sequential(torch.nn.Linear(4, 16), torch.nn.ReLU(), torch.nn.Linear(16, 3))
ds = torch.utils.data.TensorDataset(torch.zeros(10, 4), torch.zeros(10, dtype=torch.long))
dl = torch.utils.data.DataLoader(ds, batch_size=5, shuffle=True)
X = pd.DataFrame({"a": [0.0, 1, 2, 3], "b": [1.0, 0, 1, 0]})
clf = LogisticRegression().fit(X, [0, 1, 0, 1])
raw = LogisticRegression()
pipe = Pipeline([("scale", StandardScaler()), ("svc", SVC())])
m = sp.csr_matrix(np.eye(3))
img = Image.new("L", (8, 4))
d = {"lr": 0.1, "epochs": 3}
words = ["a", "b"]
def f(x, *, k=2): return x
`

// TestInspectorKinds: the facts of each supported kind decode into facts types with the right
// shape, dtype, columns and fitted state, from a real kernel.
func TestInspectorKinds(t *testing.T) {
	python.Require(t, "torch")
	python.Require(t, "sklearn")
	l := launch(t, LaunchOptions{})
	ctx := ctxT(t, 120*time.Second)
	mustExecute(t, ctx, l, kindsSetup)
	names := []string{"df", "df.Age", "df.Nope", "gb", "arr", "t", "net", "dl", "ds", "clf", "raw", "pipe",
		"pipe.predict_proba", "clf.predict", "raw.coef_", "m", "img", "d", "words", "f", "np", "np.linalg.inv", "nope"}
	ins, err := l.Inspect(ctx, InspectRequest{Names: names, Budget: 500 * time.Millisecond, Namespace: true})
	if err != nil {
		t.Fatal(err)
	}
	v := ins.Values
	check := func(name string, ok bool, detail any) {
		t.Helper()
		if !ok {
			t.Errorf("%s: unexpected facts %+v", name, detail)
		}
	}
	df := v["df"]
	check("df", df.Kind == facts.KindDataFrame && reflect.DeepEqual(df.Shape, []int{3, 3}) && len(df.Columns) == 3, df)
	if len(df.Columns) == 3 {
		age, price := df.Columns[0], df.Columns[1]
		check("df.Age column", age.Name == "Age" && age.Dtype == "float64" && age.Nulls != nil && *age.Nulls == 1, age)
		check("df.Price column", price.Dtype == "object" && reflect.DeepEqual(price.NonNumericSample, []string{"$36,945"}) &&
			reflect.DeepEqual(price.ElementTypes, []string{"str"}), price)
	}
	check("df.Age", v["df.Age"].Kind == facts.KindSeries && v["df.Age"].Dtype == "float64", v["df.Age"])
	check("df.Nope", !v["df.Nope"].Exists, v["df.Nope"])
	check("gb", v["gb"].Kind == facts.KindGroupBy, v["gb"])
	arr := v["arr"]
	check("arr", arr.Kind == facts.KindNDArray && arr.Dtype == "float32" && reflect.DeepEqual(arr.Shape, []int{3, 4}) &&
		arr.Max != nil && *arr.Max == 11, arr)
	tt := v["t"]
	check("t", tt.Kind == facts.KindTensor && tt.Dtype == "torch.float32" && tt.Device == "cpu" &&
		tt.RequiresGrad != nil && *tt.RequiresGrad && reflect.DeepEqual(tt.Shape, []int{2, 3}), tt)
	net := v["net"]
	check("net", net.Kind == facts.KindModule && net.Module != nil && net.Module.Parameters == 4*16+16+16*3+3 &&
		net.Module.First != nil && *net.Module.First.InFeatures == 4 && net.Module.Last != nil &&
		*net.Module.Last.OutFeatures == 3 && net.Module.Training != nil && *net.Module.Training, net.Module)
	dl := v["dl"]
	check("dl", dl.Kind == facts.KindDataLoader && dl.Loader != nil && *dl.Loader.BatchSize == 5 && *dl.Loader.Len == 2 &&
		*dl.Loader.DatasetLen == 10 && reflect.DeepEqual(dl.Loader.SampleShapes, [][]int{{4}, {}}), dl.Loader)
	check("ds", v["ds"].Kind == facts.KindDataset, v["ds"])
	clf := v["clf"]
	check("clf", clf.Kind == facts.KindEstimator && clf.Estimator != nil && clf.Estimator.Fitted &&
		*clf.Estimator.NFeaturesIn == 2 && reflect.DeepEqual(clf.Estimator.FeatureNamesIn, []string{"a", "b"}) &&
		len(clf.Estimator.Classes) == 2, clf.Estimator)
	check("raw", v["raw"].Estimator != nil && !v["raw"].Estimator.Fitted, v["raw"].Estimator)
	pipe := v["pipe"]
	check("pipe", pipe.Estimator != nil && !pipe.Estimator.Fitted && len(pipe.Estimator.Steps) == 2 &&
		pipe.Estimator.Steps[1].Estimator.Class == "SVC", pipe.Estimator)
	check("pipe.predict_proba", !v["pipe.predict_proba"].Exists, v["pipe.predict_proba"])
	check("clf.predict", v["clf.predict"].Kind == facts.KindCallable && v["clf.predict"].Signature == "(X)", v["clf.predict"])
	check("raw.coef_", !v["raw.coef_"].Exists, v["raw.coef_"])
	check("m", v["m"].Kind == facts.KindSparse && v["m"].Layout == "csr", v["m"])
	check("img", v["img"].Kind == facts.KindImage && reflect.DeepEqual(v["img"].Shape, []int{4, 8}), v["img"])
	check("d", v["d"].Kind == facts.KindDict && v["d"].KeysComplete && reflect.DeepEqual(v["d"].Keys, []any{"lr", "epochs"}), v["d"])
	check("words", v["words"].Kind == facts.KindList && *v["words"].Len == 2, v["words"])
	check("f", v["f"].Signature == "(x, *, k=2)", v["f"])
	check("np", v["np"].Kind == facts.KindPyModule, v["np"].Kind)
	check("np.linalg.inv", v["np.linalg.inv"].Kind == facts.KindCallable, v["np.linalg.inv"])
	check("nope", !v["nope"].Exists, v["nope"])
	for _, lib := range []string{"numpy", "pandas", "torch", "sklearn", "scipy", "PIL"} {
		found := false
		for _, m := range ins.Imported {
			found = found || m == lib
		}
		if !found {
			t.Errorf("imported %v lacks %s", ins.Imported, lib)
		}
	}
	t.Logf("inspect of %d names: %.1f ms in the kernel, busy %v", len(names), ins.ElapsedMS, l.LastBusy())
}

// TestInspectorNoTrace: inspecting every kind leaves namespace, history, outputs, execution
// count and the random/numpy/torch RNG states exactly as they were (a real execute shows it).
func TestInspectorNoTrace(t *testing.T) {
	python.Require(t, "torch")
	python.Require(t, "sklearn")
	l := launch(t, LaunchOptions{})
	ctx := ctxT(t, 120*time.Second)
	mustExecute(t, ctx, l, kindsSetup)
	mustExecute(t, ctx, l, "41 + 1")
	mustExecute(t, ctx, l, "'second'")
	before := probeState(t, ctx, l)
	names := []string{"df", "df.Age", "gb", "arr", "t", "net", "dl", "ds", "clf", "pipe", "m", "img", "d", "f", "np", "nope"}
	for _, values := range []bool{true, false} {
		if _, err := l.Inspect(ctx, InspectRequest{Names: names, NoValues: !values, Namespace: true}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := l.WhoAmI(ctx); err != nil {
		t.Fatal(err)
	}
	sameState(t, "Inspect", before, probeState(t, ctx, l))
}

// BenchmarkInspectDataFrame compares a 1,000-row and a 10-million-row 20-column DataFrame:
// sampling keeps the kernel's work independent of size (goal: within 2x).
func BenchmarkInspectDataFrame(b *testing.B) {
	python.Require(b, "pandas")
	l := launch(b, LaunchOptions{})
	ctx := ctxT(b, 10*time.Minute)
	mustExecute(b, ctx, l, "import numpy as np, pandas as pd\n"+
		"small = pd.DataFrame(np.zeros((1000, 20)), columns=[f'c{i}' for i in range(20)])\n"+
		"large = pd.DataFrame(np.zeros((10_000_000, 20)), columns=[f'c{i}' for i in range(20)])")
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		l.Execute(ctx, "del large")
	}()
	for _, name := range []string{"small", "large"} {
		b.Run(name, func(b *testing.B) {
			var kernelMS float64
			var busy time.Duration
			for i := 0; i < b.N; i++ {
				ins, err := l.Inspect(ctx, InspectRequest{Names: []string{name}})
				if err != nil {
					b.Fatal(err)
				}
				if v := ins.Values[name]; len(v.Columns) != 20 || v.Columns[0].Nulls == nil {
					b.Fatalf("%s: %+v", name, v)
				}
				kernelMS += ins.ElapsedMS
				busy += l.LastBusy()
			}
			b.ReportMetric(kernelMS/float64(b.N), "inspector-ms/op")
			b.ReportMetric(float64(busy.Microseconds())/1000/float64(b.N), "busy-ms/op")
		})
	}
}

// TestInspectSamplingBounded: a 10-million-row frame is inspected on a sample (sampled: true),
// and the numbers of both sizes are logged (no timing assert: see BenchmarkInspectDataFrame).
func TestInspectSamplingBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("allocates 1.6 GB in a kernel")
	}
	python.Require(t, "pandas")
	l := launch(t, LaunchOptions{})
	ctx := ctxT(t, 5*time.Minute)
	mustExecute(t, ctx, l, "import numpy as np, pandas as pd\n"+
		"small = pd.DataFrame(np.zeros((1000, 20)), columns=[f'c{i}' for i in range(20)])\n"+
		"large = pd.DataFrame(np.zeros((10_000_000, 20)), columns=[f'c{i}' for i in range(20)])\n"+
		"large.iloc[5, 3] = np.nan")
	ms := map[string]float64{}
	for _, name := range []string{"small", "large", "small", "large"} {
		ins, err := l.Inspect(ctx, InspectRequest{Names: []string{name}})
		if err != nil {
			t.Fatal(err)
		}
		v := ins.Values[name]
		if name == "large" && (!v.Sampled || v.Shape[0] != 10_000_000) {
			t.Errorf("large: sampled=%v shape=%v", v.Sampled, v.Shape)
		}
		if name == "small" && v.Sampled {
			t.Errorf("small frame sampled")
		}
		ms[name] = ins.ElapsedMS
		t.Logf("%s: inspector %.2f ms, kernel busy %v", name, ins.ElapsedMS, l.LastBusy())
	}
	t.Logf("10M rows / 1k rows = %.2fx", ms["large"]/ms["small"])
	mustExecute(t, ctx, l, "del large")
}

// BenchmarkInspect20Names: one inspection of twenty names of every kind (the kernel's busy
// time per inspection; goal under 20 ms).
func BenchmarkInspect20Names(b *testing.B) {
	python.Require(b, "torch")
	python.Require(b, "sklearn")
	l := launch(b, LaunchOptions{})
	ctx := ctxT(b, 5*time.Minute)
	mustExecute(b, ctx, l, kindsSetup)
	names := []string{"df", "df.Age", "gb", "arr", "t", "net", "dl", "ds", "clf", "raw", "pipe", "pipe.predict_proba",
		"clf.predict", "m", "img", "d", "words", "f", "np", "nope"}
	if _, err := l.Inspect(ctx, InspectRequest{Names: names}); err != nil { // injects the inspector
		b.Fatal(err)
	}
	var kernelMS float64
	var busy time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		ins, err := l.Inspect(ctx, InspectRequest{Names: names, Namespace: true})
		if err != nil {
			b.Fatal(err)
		}
		if len(ins.Values) != len(names) {
			b.Fatalf("got %d values", len(ins.Values))
		}
		kernelMS += ins.ElapsedMS
		busy += l.LastBusy()
	}
	b.ReportMetric(kernelMS/float64(b.N), "inspector-ms/op")
	b.ReportMetric(float64(busy.Microseconds())/1000/float64(b.N), "busy-ms/op")
}
