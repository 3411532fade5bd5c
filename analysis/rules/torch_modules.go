package rules

import (
	"fmt"
	"strings"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/facts"
	"github.com/premortem/premortem/finding"
)

// Calling an nn.Module on an input: the first layer that fixes a size, dtype or device
// against the input, through Sequential stacks, and the fixes that change the layer.

// moduleCall checks model(x) and criterion(out, target).
func moduleCall(c *checker, k *callInfo, m *val) *val {
	class := m.Module.Class
	switch class {
	case "CrossEntropyLoss", "NLLLoss", "BCELoss", "BCEWithLogitsLoss":
		checkLoss(c, k, class, k.arg(0, "input"), k.arg(1, "target"), k.argExpr(1, "target"))
		return nil
	}
	x, xExpr := k.arg(0, "input"), k.argExpr(0, "input")
	if x == nil || x.Kind != facts.KindTensor || xExpr == nil {
		return nil
	}
	layers := m.Module.Layers
	if len(layers) == 0 && m.Module.First != nil {
		layers = []facts.Layer{*m.Module.First}
	}
	if len(layers) == 0 {
		return nil
	}
	exact := (class == "Sequential" && flatLayers(layers)) || (len(layers) == 1 && layers[0].Class == class)
	first := layers[0]
	// device: parameters on one device, input on another
	if dev := firstDevice(m); dev != "" && x.Device != "" && deviceKind(dev) != deviceKind(x.Device) && hasWeights(first.Class) {
		fix := replaceFix("Move the input to the model's device", xExpr.Range, xExpr.Text+".to("+deviceExpr(c, dev)+")", true)
		reportModule(c, exact, xExpr.Range, 0.93, finding.DeviceMismatch, "RuntimeError",
			fmt.Sprintf("%s is on %s but %s's parameters are on %s (Expected all tensors to be on the same device)", x.name, x.Device, m.name, dev),
			[]string{describe(x), describe(m)}, []finding.Fix{fix})
		return nil
	}
	// dtype: float64 (or integer) input into float32 weights
	mdt := m.Module.Dtype
	if first.Dtype != "" {
		mdt = first.Dtype
	}
	if mdt != "" && x.Dtype != "" && tdtype(mdt) != tdtype(x.Dtype) && (first.Class == "Linear" || strings.HasPrefix(first.Class, "Conv")) {
		conv := map[string]string{"torch.float32": ".float()", "torch.float64": ".double()", "torch.float16": ".half()"}[tdtype(mdt)]
		var fixes []finding.Fix
		if conv != "" {
			fixes = append(fixes, replaceFix("Convert the input with "+conv, xExpr.Range, xExpr.Text+conv, true))
		}
		detail := "mat1 and mat2 must have the same dtype"
		if strings.HasPrefix(first.Class, "Conv") {
			detail = "Input type and bias type should be the same"
		}
		reportModule(c, exact, xExpr.Range, 0.95, finding.DtypeMismatch, "RuntimeError",
			fmt.Sprintf("%s has dtype %s but %s's weights are %s (%s)", x.name, tdtype(x.Dtype), m.name, tdtype(mdt), detail),
			[]string{describe(x), describe(m)}, fixes)
		return nil
	}
	if first.Class == "Embedding" && x.Dtype != "" && isFloatT(x.Dtype) {
		reportModule(c, exact, xExpr.Range, 0.9, finding.DtypeMismatch, "RuntimeError",
			fmt.Sprintf("%s has dtype %s, but an Embedding takes integer indices (Long or Int)", x.name, tdtype(x.Dtype)),
			[]string{describe(x), describe(m)}, []finding.Fix{replaceFix("Convert indices with .long()", xExpr.Range, xExpr.Text+".long()", true)})
		return nil
	}
	shape := append([]int(nil), x.Shape...)
	if shape == nil {
		return nil
	}
	limit := len(layers)
	if !exact {
		limit = 1
	}
	for i := 0; i < limit && shape != nil; i++ {
		l := layers[i]
		switch {
		case l.Class == "Linear":
			if len(shape) == 0 {
				return nil
			}
			last := shape[len(shape)-1]
			if l.InFeatures != nil && last >= 0 && last != *l.InFeatures {
				if !exact && mayReshapeTo(x.Shape, *l.InFeatures) {
					return nil // forward probably flattens or views the input first
				}
				rows := 1
				for _, d := range shape[:len(shape)-1] {
					rows *= d
				}
				out := "?"
				if l.OutFeatures != nil {
					out = itoa(*l.OutFeatures)
				}
				where := "its first layer"
				got := fmt.Sprintf("%s has %d (shape %s)", x.name, last, shapeTuple(x.Shape))
				if i > 0 {
					where = fmt.Sprintf("layer %d (%s)", i, l.Class)
					got = fmt.Sprintf("the layers before it produce %d (input %s of shape %s)", last, x.name, shapeTuple(x.Shape))
				}
				reportModule(c, exact, xExpr.Range, 0.96, finding.LinearInFeatures, "RuntimeError",
					fmt.Sprintf("%s expects %d input features at %s, but %s: mat1 and mat2 shapes cannot be multiplied (%dx%d and %dx%s)",
						m.name, *l.InFeatures, where, got, rows, last, *l.InFeatures, out),
					[]string{describe(x), describe(m)}, layerArgFix(m, i, 0, "in_features", last))
				return nil
			}
			if l.OutFeatures == nil {
				return nil
			}
			shape[len(shape)-1] = *l.OutFeatures
		case strings.HasPrefix(l.Class, "Conv") && len(l.Class) == 6:
			spatial := int(l.Class[4] - '0')
			var ch int
			switch len(shape) {
			case spatial + 2:
				ch = shape[1]
			case spatial + 1:
				ch = shape[0]
			default:
				return nil
			}
			if l.InChannels != nil && ch >= 0 && ch != *l.InChannels {
				if !exact && containsInt(shape, *l.InChannels) {
					return nil // forward probably permutes the channels into place first
				}
				hint := ""
				fixes := layerArgFix(m, i, 0, "in_channels", ch)
				if len(shape) == spatial+2 && shape[len(shape)-1] == *l.InChannels && i == 0 {
					perm := channelsFirst(spatial)
					hint = "; the channels look last: move them to dimension 1 with " + perm
					fixes = []finding.Fix{replaceFix("Move the channels first with "+perm, xExpr.Range, xExpr.Text+perm, true)}
				}
				reportModule(c, exact, xExpr.Range, 0.95, finding.ConvInChannels, "RuntimeError",
					fmt.Sprintf("%s's %s expects %d input channels, but %s has %d at dimension %d (shape %s)%s",
						m.name, l.Class, *l.InChannels, x.name, ch, len(shape)-spatial-1, shapeTuple(x.Shape), hint),
					[]string{describe(x), describe(m)}, fixes)
				return nil
			}
			if l.OutChannels == nil || len(shape) != spatial+2 {
				return nil
			}
			shape = append([]int{shape[0], *l.OutChannels}, minusOnes(spatial)...)
		case l.Class == "LSTM" || l.Class == "GRU" || l.Class == "RNN":
			if len(shape) == 0 {
				return nil
			}
			last := shape[len(shape)-1]
			if l.InFeatures != nil && last >= 0 && last != *l.InFeatures && (exact || !mayReshapeTo(x.Shape, *l.InFeatures)) {
				reportModule(c, exact, xExpr.Range, 0.95, finding.LinearInFeatures, "RuntimeError",
					fmt.Sprintf("%s's %s has input_size %d, but %s's last dimension is %d (input.size(-1) must be equal to input_size. Expected %d, got %d)",
						m.name, l.Class, *l.InFeatures, x.name, last, *l.InFeatures, last),
					[]string{describe(x), describe(m)}, layerArgFix(m, i, 0, "input_size", last))
			}
			return nil
		case l.Class == "Embedding":
			if i == 0 && l.NumEmbedding != nil && x.Max != nil && *x.Max >= float64(*l.NumEmbedding) {
				reportModule(c, exact, xExpr.Range, 0.95, finding.IndexOutOfRange, "IndexError",
					fmt.Sprintf("%s holds index %g, but %s's Embedding has only %d rows (index out of range in self); raise num_embeddings or re-encode the indices", x.name, *x.Max, m.name, *l.NumEmbedding),
					[]string{describe(x) + fmt.Sprintf(", max %g", *x.Max), describe(m)}, nil)
				return nil
			}
			if l.EmbeddingDim == nil {
				return nil
			}
			shape = append(shape, *l.EmbeddingDim)
		case (l.Class == "BatchNorm1d" || l.Class == "BatchNorm2d") && l.InFeatures != nil && len(shape) >= 2:
			if shape[1] >= 0 && shape[1] != *l.InFeatures {
				reportModule(c, exact, xExpr.Range, 0.93, finding.LinearInFeatures, "RuntimeError",
					fmt.Sprintf("%s's %s at layer %d normalises %d features, but it receives %d (running_mean should contain %d elements not %d)",
						m.name, l.Class, i, *l.InFeatures, shape[1], shape[1], *l.InFeatures),
					[]string{describe(x), describe(m)}, layerArgFix(m, i, 0, "num_features", shape[1]))
				return nil
			}
		case passThrough[l.Class]:
		case l.Class == "Flatten":
			if len(shape) < 2 {
				return nil
			}
			p := 1
			for _, d := range shape[1:] {
				if d < 0 {
					p = -1
					break
				}
				p *= d
			}
			shape = []int{shape[0], p}
		default:
			return nil
		}
	}
	if !exact {
		return nil
	}
	out := newTensor(k.e.Text, shape, x.Dtype, x.Device)
	out.origin = fmt.Sprintf("line %d", k.e.Range.Start.Line+1)
	return out
}

// reportModule reports what calling a module with its input will raise. Only a Sequential
// of known layers or a bare layer runs its registered layers in order on the input: a custom
// nn.Module's forward may view, flatten, permute, convert or move the input before its first
// registered layer, so there the finding is only an information hint that predicts no crash.
func reportModule(c *checker, exact bool, r finding.Range, conf float64, code, exc, msg string, evidence []string, fixes []finding.Fix) {
	if exact {
		c.report(r, finding.SeverityError, code, exc, msg, conf, evidence, fixes)
		return
	}
	c.report(r, finding.SeverityInfo, code, "",
		"if forward() passes the input to its first registered layer unchanged: "+msg+" (this module has its own forward, which may reshape the input first)",
		0.4, evidence, fixes)
}

// mayReshapeTo reports whether some view of shape could end in a dimension of n: n is the
// product of a run of its trailing dimensions (x.view(-1, 32*32*3), x.flatten(1)), or a
// dimension is unknown.
func mayReshapeTo(shape []int, n int) bool {
	p := 1
	for i := len(shape) - 1; i >= 0; i-- {
		if shape[i] < 0 {
			return true
		}
		p *= shape[i]
		if p == n {
			return true
		}
	}
	return false
}

// channelsFirst is the permute call that moves the last dimension of a batch with spatial
// dimensions to dimension 1: .permute(0, 3, 1, 2) for images.
func channelsFirst(spatial int) string {
	dims := []string{"0", itoa(spatial + 1)}
	for d := 1; d <= spatial; d++ {
		dims = append(dims, itoa(d))
	}
	return ".permute(" + strings.Join(dims, ", ") + ")"
}

// containsInt reports whether xs holds n.
func containsInt(xs []int, n int) bool {
	for _, x := range xs {
		if x == n {
			return true
		}
	}
	return false
}

// layerArgFix rewrites argument pos (or keyword kw) of layer i's constructor to n, when the
// layer was built in this cell and the argument is an integer literal.
func layerArgFix(m *val, i, pos int, kw string, n int) []finding.Fix {
	if i < 0 || i >= len(m.layerCtors) || m.layerCtors[i] == nil || n < 0 {
		return nil
	}
	ctor := m.layerCtors[i]
	a := ctor.Keyword(kw)
	if a == nil && pos < len(ctor.Args) && !ctor.Args[pos].Starred {
		a = ctor.Args[pos]
	}
	if a == nil || a.Kind != analysis.ExprConst {
		return nil
	}
	if _, isInt := a.Const.(int64); !isInt {
		return nil
	}
	return []finding.Fix{replaceFix(fmt.Sprintf("Set %s to %d", kw, n), a.Range, itoa(n), true)}
}

var passThrough = set("ReLU", "Sigmoid", "Tanh", "Dropout", "LeakyReLU", "GELU", "Softmax", "LogSoftmax",
	"Identity", "ELU", "SiLU", "BatchNorm1d", "BatchNorm2d", "LayerNorm", "Dropout2d", "ReLU6", "Softplus", "Mish", "PReLU")

func minusOnes(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = -1
	}
	return out
}

// hasWeights reports layer classes whose parameters take part in the first operation.
func hasWeights(class string) bool {
	return class == "Linear" || strings.HasPrefix(class, "Conv") || class == "Embedding" || strings.HasPrefix(class, "LSTM") || strings.HasPrefix(class, "GRU") || class == "RNN"
}

// flatLayers reports whether a Sequential's leaves are its direct children ("0", "1", ...):
// leaves of nested blocks ("0.conv1", "0.downsample.0") run in an order only their forward
// knows.
func flatLayers(ls []facts.Layer) bool {
	for _, l := range ls {
		if strings.Contains(l.Name, ".") || l.Class == "?" {
			return false
		}
	}
	return true
}
