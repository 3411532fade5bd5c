package repair

import (
	"strings"
	"testing"

	"github.com/premortem/premortem/facts"
	"github.com/premortem/premortem/finding"
)

// shadowOnly is the input of a crash only the shadow run found: no rule's finding, the
// exception message known only as the shadow finding wraps it.
func shadowOnly(text, exc, msg string, line int, values ...facts.Value) Input {
	in := input(text, exc, msg, line, values...)
	in.Message = ""
	in.Finding.Source = finding.SourceShadow
	in.Finding.Message = exc + ": " + strings.ReplaceAll(msg, "\n", " ") + " (raised at line 1 when run in a copy of the kernel)"
	return in
}

func fitted(name string, nFeatures int) facts.Value {
	return facts.Value{Name: name, Exists: true, Kind: facts.KindEstimator, Estimator: &facts.Estimator{Class: "RandomForestRegressor", Fitted: true, NFeaturesIn: intp(nFeatures), Methods: []string{"predict"}}}
}

// TestCallRepairs covers the families that read what a call needed from the exception
// message: a 1-D X as one sample or one feature, a tensor detached before NumPy, a product's
// operand transposed, the axis a concatenation can join along, a name's words in another
// order, and the shadow-only forms of .ravel(), .to_numpy().reshape and .view -> .reshape.
// want lists texts candidates must produce, the first one by the first candidate; an empty
// want means no candidate may be proposed.
func TestCallRepairs(t *testing.T) {
	const twoD = "Reshape your data either using array.reshape(-1, 1) if your data has a single feature or array.reshape(1, -1) if it contains a single sample."
	one4 := "Expected 2D array, got 1D array instead:\narray=[1500.    3.    2.   12.].\n" + twoD
	one3 := "Expected 2D array, got 1D array instead:\narray=[1500.    3.    2.].\n" + twoD
	long := "Expected 2D array, got 1D array instead:\narray=[0.1 0.2 0.3 0.4 0.5 0.6].\n" + twoD
	grad := "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead."
	concat0 := "all the input array dimensions except for the concatenation axis must match exactly, but along dimension 0, the array at index 0 has size 80 and the array at index 1 has size 20"
	concat1 := "all the input array dimensions except for the concatenation axis must match exactly, but along dimension 1, the array at index 0 has size 3 and the array at index 1 has size 5"
	arr := func(name string, shape ...int) facts.Value {
		return facts.Value{Name: name, Exists: true, Kind: facts.KindNDArray, Shape: shape}
	}
	tensor := func(name, device string, grad bool) facts.Value {
		return facts.Value{Name: name, Exists: true, Kind: facts.KindTensor, Device: device, RequiresGrad: &grad}
	}
	tests := []struct {
		name string
		in   Input
		want []string
	}{
		// 1-D X.
		{"one sample of the model's four features", shadowOnly("new = np.array([1500, 3, 2, 12])\np = model.predict(new)\n", "ValueError", one4, 1, fitted("model", 4)),
			[]string{"new = np.array([1500, 3, 2, 12])\np = model.predict(new.reshape(1, -1))\n"}},
		{"one sample, length from the inspector", input("p = model.predict(row)\n", "ValueError", "Expected 2D array, got 1D array instead:\narray=[...]", 0, fitted("model", 4), arr("row", 4)),
			[]string{"p = model.predict(row.reshape(1, -1))\n"}},
		{"three values for four features: neither", shadowOnly("new = np.array([1500, 3, 2])\np = model.predict(new)\n", "ValueError", one3, 1, fitted("model", 4)), nil},
		{"a model of one feature gets a column", input("p = model.predict(sizes)\n", "ValueError", long, 0, fitted("model", 1), arr("sizes", 6)),
			[]string{"p = model.predict(sizes.reshape(-1, 1))\n"}},
		{"a Series for a one-feature model", input("p = model.predict(df.sqft)\n", "ValueError", long, 0, fitted("model", 1), facts.Value{Name: "df.sqft", Exists: true, Kind: facts.KindSeries}),
			[]string{"p = model.predict(df.sqft.to_numpy().reshape(-1, 1))\n"}},
		{"fit learns one feature from a 1-D X", input("model.fit(x, y)\n", "ValueError", long, 0, fitted("model", 4), arr("x", 6)),
			[]string{"model.fit(x.reshape(-1, 1), y)\n"}},
		{"unknown model: both, verification decides", shadowOnly("p = reg.predict(v)\n", "ValueError", long, 0, arr("v", 6)),
			[]string{"p = reg.predict(v.reshape(1, -1))\n", "p = reg.predict(v.reshape(-1, 1))\n"}},
		{"scalar for a model of four features", input("p = model.predict(5.0)\n", "ValueError", "Expected 2D array, got scalar array instead:\narray=5.0.\n"+twoD, 0, fitted("model", 4)), nil},

		// Tensors into NumPy.
		{"detach before numpy", shadowOnly("preds = model(X_test)\nout = preds.numpy()\n", "RuntimeError", grad, 1),
			[]string{"preds = model(X_test)\nout = preds.detach().numpy()\n", "preds = model(X_test)\nout = preds.detach().cpu().numpy()\n"}},
		{"detach and copy a device tensor", input("arr = out.numpy()\n", "RuntimeError", grad, 0, tensor("out", "cuda:0", true)),
			[]string{"arr = out.detach().cpu().numpy()\n", "arr = out.detach().numpy()\n"}},
		{"np.array of a tensor", shadowOnly("plt.plot(np.array(losses_t))\n", "RuntimeError", grad, 0),
			[]string{"plt.plot(np.array(losses_t.detach()))\n"}},
		{"only the tensor in the graph is detached", input("r = preds.numpy() - y.numpy()\n", "RuntimeError", grad, 0, tensor("y", "cpu", false)),
			[]string{"r = preds.detach().numpy() - y.numpy()\n"}},
		{"a tensor in the graph plotted", input("plt.plot(epochs, losses)\n", "RuntimeError", grad, 0, tensor("losses", "cpu", true), facts.Value{Name: "epochs", Exists: true, Kind: facts.KindList}),
			[]string{"plt.plot(epochs, losses.detach())\n"}},
		{"a plotted tensor the inspector does not know: nothing", input("plt.plot(epochs, losses)\n", "RuntimeError", grad, 0), nil},
		{"already detached: nothing", input("a = out.detach().numpy()\n", "RuntimeError", grad, 0), nil},
		{"device tensor without grad", input("a = out.numpy()\n", "TypeError", "can't convert cuda:0 device type tensor to numpy. Use Tensor.cpu() to copy the tensor to host memory first.", 0),
			[]string{"a = out.cpu().numpy()\n"}},

		// Explicit products.
		{"second operand transposed (B == D)", shadowOnly("h = X @ W\n", "RuntimeError", "mat1 and mat2 shapes cannot be multiplied (8x3 and 4x3)", 0),
			[]string{"h = X @ W.T\n"}},
		{"first operand transposed (A == C)", shadowOnly("h = torch.matmul(A, B)\n", "RuntimeError", "mat1 and mat2 shapes cannot be multiplied (5x8 and 5x2)", 0),
			[]string{"h = torch.matmul(A.T, B)\n"}},
		{"method mm", input("h = feats.mm(proj)\n", "RuntimeError", "mat1 and mat2 shapes cannot be multiplied (16x10 and 4x10)", 0),
			[]string{"h = feats.mm(proj.T)\n"}},
		{"operand that is an operation gets parentheses", input("h = (X + b) @ W\n", "RuntimeError", "mat1 and mat2 shapes cannot be multiplied (8x3 and 4x3)", 0),
			[]string{"h = (X + b) @ W.T\n"}},
		{"no transposition helps", shadowOnly("h = X @ W\n", "RuntimeError", "mat1 and mat2 shapes cannot be multiplied (8x3 and 4x5)", 0), nil},
		{"a Linear layer is not a product", func() Input {
			in := shadowOnly("out = net(X)\n", "RuntimeError", "mat1 and mat2 shapes cannot be multiplied (8x3 and 4x3)", 0)
			in.History = hist("net = nn.Linear(4, 3)")
			return in
		}(), []string{"c0:net = nn.Linear(3, 3)"}},
		{"a product is not a Linear layer", func() Input {
			in := shadowOnly("h = X @ W\n", "RuntimeError", "mat1 and mat2 shapes cannot be multiplied (8x3 and 4x1)", 0)
			in.History = hist("net = nn.Linear(4, 1)")
			return in
		}(), nil},

		// Concatenation axes.
		{"hstack of frames with different rows becomes vstack", shadowOnly("allX = np.hstack([X_tr, X_te])\n", "ValueError", concat0, 0, arr("X_tr", 80, 6), arr("X_te", 20, 6)),
			[]string{"allX = np.vstack([X_tr, X_te])\n"}},
		{"hstack whose widths differ too: nothing", input("allX = np.hstack([X_tr, X_te])\n", "ValueError", concat0, 0, arr("X_tr", 80, 3), arr("X_te", 20, 5)), nil},
		{"vstack of 2-D features becomes hstack", shadowOnly("X = np.vstack((num, cat))\n", "ValueError", concat1, 0, arr("num", 100, 3), arr("cat", 100, 5)),
			[]string{"X = np.hstack((num, cat))\n"}},
		{"vstack of unknown arrays: maybe 1-D rows, nothing", shadowOnly("X = np.vstack((a, b))\n", "ValueError", concat1, 0), nil},
		{"vstack of 1-D arrays: nothing", input("X = np.vstack((a, b))\n", "ValueError", concat1, 0, arr("a", 3), arr("b", 5)), nil},
		{"concatenate gets the axis they differ on", shadowOnly("X = np.concatenate([num, cat])\n", "ValueError", concat1, 0),
			[]string{"X = np.concatenate([num, cat], axis=1)\n"}},
		{"concatenate's axis keyword", input("X = np.concatenate([a, b], axis=1)\n", "ValueError", concat0, 0),
			[]string{"X = np.concatenate([a, b], axis=0)\n"}},

		{"torch.cat of 2-D tensors joined along the other dim", shadowOnly("z = torch.cat([h_img, h_txt])\n", "RuntimeError", "Sizes of tensors must match except in dimension 0. Expected size 16 but got size 8 for tensor number 1 in the list.", 0),
			[]string{"z = torch.cat([h_img, h_txt], dim=1)\n"}},
		{"torch.cat's dim keyword", input("z = torch.cat((a, b), dim=1)\n", "RuntimeError", "Sizes of tensors must match except in dimension 1. Expected size 3 but got size 4 for tensor number 1 in the list.", 0),
			[]string{"z = torch.cat((a, b), dim=0)\n"}},
		{"torch.cat of 3-D tensors: nothing", input("z = torch.cat([a, b])\n", "RuntimeError", "Sizes of tensors must match except in dimension 0. Expected size 3 but got size 4 for tensor number 1 in the list.", 0,
			facts.Value{Name: "a", Exists: true, Kind: facts.KindTensor, Shape: []int{2, 3, 5}}), nil},

		// Names whose words are in another order.
		{"df_train for train_df", func() Input {
			in := shadowOnly("df_train.head()\n", "NameError", "name 'df_train' is not defined", 0, frame("train_df", "a"))
			return in
		}(), []string{"train_df.head()\n"}},
		{"trainDF for train_df", shadowOnly("trainDF.describe()\n", "NameError", "name 'trainDF' is not defined", 0, frame("train_df", "a")), []string{"train_df.describe()\n"}},
		{"X_Train for X_train (case only)", shadowOnly("model.fit(X_Train, y)\n", "NameError", "name 'X_Train' is not defined", 0, arr("X_train", 5, 2)), []string{"model.fit(X_train, y)\n"}},
		{"TestX for X_test, from the history", func() Input {
			in := shadowOnly("p = m.predict(TestX)\n", "NameError", "name 'TestX' is not defined", 0)
			in.Inspection.Namespace = append(in.Inspection.Namespace, "X_test")
			in.History = hist("X_train, X_test = split(X)")
			return in
		}(), []string{"p = m.predict(X_test)\n"}},
		{"a frame's words on a model: not the same kind", shadowOnly("df_train.head()\n", "NameError", "name 'df_train' is not defined", 0,
			facts.Value{Name: "train_df", Exists: true, Kind: facts.KindEstimator, Estimator: &facts.Estimator{}}), nil},
		{"df in the name asks for a frame", shadowOnly("print(len(df_test))\n", "NameError", "name 'df_test' is not defined", 0, arr("test_df", 5, 2)), nil},
		{"a transposed operand untransposed", input("h = X @ W.T\n", "RuntimeError", "mat1 and mat2 shapes cannot be multiplied (8x3 and 4x3)", 0), []string{"h = X @ W\n"}},
		{"one word has no order", shadowOnly("traindf.head()\n", "NameError", "name 'traindf' is not defined", 0, frame("df", "a")), nil},
		{"defined by a cell that has not run", func() Input {
			in := shadowOnly("df_train.head()\n", "NameError", "name 'df_train' is not defined", 0, frame("train_df", "a"))
			in.Unrun = map[string]bool{"df_train": true}
			return in
		}(), nil},

		// Families the rules also repair, from the shadow's message alone.
		{"column-vector y as a warning raised", shadowOnly("clf.fit(X_train, y_train)\n", "DataConversionWarning", "A column-vector y was passed when a 1d array was expected. Please change the shape of y to (n_samples, ), for example using ravel().", 0,
			arr("X_train", 10, 2), arr("y_train", 10, 1)), []string{"clf.fit(X_train, y_train.ravel())\n"}},
		{"y of two columns is not flattened", input("clf.fit(X, Y)\n", "ValueError", "y should be a 1d array, got an array of shape (10, 2) instead.", 0, arr("X", 10, 2), arr("Y", 10, 2)), nil},
		{"Series reshaped", shadowOnly("x = df.age.reshape(-1, 1)\n", "AttributeError", "'Series' object has no attribute 'reshape'", 0), []string{"x = df.age.to_numpy().reshape(-1, 1)\n"}},
		{"view of a transposed tensor", shadowOnly("flat = x.t().view(-1)\n", "RuntimeError", "view size is not compatible with input tensor's size and stride (at least one dimension spans across two contiguous subspaces). Use .reshape(...) instead.", 0),
			[]string{"flat = x.t().reshape(-1)\n"}},
		{"view message without a view call", shadowOnly("flat = f(x)\n", "RuntimeError", "view size is not compatible with input tensor's size and stride (at least one dimension spans across two contiguous subspaces). Use .reshape(...) instead.", 0), nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cs := Candidates(tc.in, nil)
			var got []string
			for _, c := range cs {
				got = append(got, applied(t, tc.in, c))
				if c.Keeps == "" || c.Family == "" || c.Fix.Title == "" {
					t.Errorf("candidate %+v lacks its family, title or intent", c)
				}
			}
			if len(tc.want) == 0 {
				if len(cs) > 0 {
					t.Fatalf("want no candidate, got %q: %q", cs[0].Fix.Title, got)
				}
				return
			}
			if len(cs) == 0 {
				t.Fatalf("no candidate, want %q", tc.want)
			}
			if got[0] != tc.want[0] {
				t.Errorf("first candidate %q gives\n%q\nwant\n%q\n(all: %q)", cs[0].Fix.Title, got[0], tc.want[0], got)
			}
			for _, w := range tc.want[1:] {
				found := false
				for _, g := range got {
					found = found || g == w
				}
				if !found {
					t.Errorf("no candidate gives %q (all: %q)", w, got)
				}
			}
		})
	}
}

func TestIdentWords(t *testing.T) {
	for id, want := range map[string]string{"train_df": "train df", "trainDF": "train df", "X_Train": "x train", "TestX": "test x", "HTTPServer": "http server", "x2Train": "x2 train", "__x": "x"} {
		if got := strings.Join(identWords(id), " "); got != want {
			t.Errorf("identWords(%q) = %q, want %q", id, got, want)
		}
	}
}
