package repair

import (
	"fmt"
	"strings"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/finding"
)

// One split where its counterpart was meant: predictions made on X_train compared with
// y_test, a model fitted on X_train and y_test, a frame of the test rows given the
// training labels. Whatever library raised, the exception says that two sizes differ
// (sklearn's "inconsistent numbers of samples: [300, 100]", NumPy's broadcast, torch's
// "size of tensor a (300) must match", pandas' "Length of values"); the names say which
// split each operand is. At the crash line and where its operands were bound, a name of one
// split (a word train, test, val or valid in it, or a token tr or te) becomes its
// counterpart when the kernel holds that. The direction keeps what the line does: the
// arguments of a fit are made the training split's, everything else (predictions, scores,
// metrics, plots) the held-out split's, since a model is fitted on the training rows and
// judged on the others.

func init() {
	register(family{name: "split-counterpart", gen: splitSwapGen})
}

// splitWords pairs each training word with the held-out words it may stand for; the
// held-out words map back to the training word. Tokens (tr, te) are swapped only as a
// whole word of the name (X_tr), the others inside it too (Xtrain, train_df).
var splitWords = []splitWord{
	{"train", "test", false}, {"train", "valid", false}, {"train", "val", false},
	{"Train", "Test", false}, {"Train", "Val", false},
	{"TRAIN", "TEST", false}, {"TRAIN", "VAL", false},
	{"tr", "te", true}, {"trn", "tst", true},
}

// splitWord is a training split's word and a held-out split's.
type splitWord struct {
	train, heldOut string
	token          bool
}

// swap returns name with w's held-out word made the training one (toTrain) or the other
// way; false when name does not hold the word, or holds words of both splits.
func (w splitWord) swap(name string, toTrain bool) (string, bool) {
	from, to := w.train, w.heldOut
	if toTrain {
		from, to = to, from
	}
	if !w.token {
		// A name with words of both splits (train_val_X) is no one split's.
		low := strings.ToLower(name)
		if !strings.Contains(name, from) || strings.Contains(low, "train") && (strings.Contains(low, "test") || strings.Contains(low, "val")) {
			return "", false
		}
		return strings.Replace(name, from, to, 1), true
	}
	parts := strings.Split(name, "_")
	for i, p := range parts {
		if p == from {
			parts[i] = to
			return strings.Join(parts, "_"), true
		}
	}
	return "", false
}

func splitSwapGen(in *Input) []Candidate {
	switch in.exception() {
	case "ValueError", "IndexError", "RuntimeError":
	default:
		return nil
	}
	if !sizesDiffer(in.message()) {
		return nil
	}
	line := in.crashLine()
	bound := map[string]bool{}
	if in.Facts != nil {
		for _, d := range in.Facts.Defs {
			if d.Range.Start.Line == line {
				bound[rangeKey(d.Range)] = true
			}
		}
	}
	var fitArgs []finding.Range
	for _, c := range in.exprsOnLine(line, func(e *analysis.Expr) bool {
		return e.Kind == analysis.ExprCall && e.Value != nil && e.Value.Kind == analysis.ExprAttribute && fitMethods[e.Value.Name]
	}) {
		for _, a := range c.Args {
			fitArgs = append(fitArgs, a.Range)
		}
		for _, k := range c.Keywords {
			if k.Value != nil {
				fitArgs = append(fitArgs, k.Value.Range)
			}
		}
	}
	names := in.exprsOnLine(line, func(e *analysis.Expr) bool { return e.Kind == analysis.ExprName })
	read := map[string]bool{}
	for _, e := range names {
		read[e.Name] = true
	}
	var out []Candidate
	for _, e := range names {
		if bound[rangeKey(e.Range)] {
			continue
		}
		toTrain := false
		for _, r := range fitArgs {
			toTrain = toTrain || within(r, e.Range)
		}
		for _, c := range counterparts(e.Name, toTrain) {
			// A line that reads both splits combines them on purpose (np.hstack([X_tr, X_te])).
			if read[c] || !in.inNamespace(c) && !assignedIn(in, c) {
				continue
			}
			why := fmt.Sprintf("%s is judged on the held-out rows, as the other operands are", c)
			if toTrain {
				why = fmt.Sprintf("the model is fitted on the training split; %s is its part of it", c)
			}
			out = append(out, Candidate{
				Fix:   finding.Fix{Title: fmt.Sprintf("Use %s, the counterpart of %s in the other split", c, e.Name), Edits: []finding.Edit{replaceAt(e.Range, c)}},
				Keeps: why,
			})
			break
		}
	}
	return out
}

// counterparts returns the names name would have in the training split (toTrain) or in
// the held-out ones, in splitWords' order.
func counterparts(name string, toTrain bool) []string {
	var out []string
	for _, w := range splitWords {
		if c, ok := w.swap(name, toTrain); ok {
			out = append(out, c)
		}
	}
	return out
}

// sizesDiffer reports whether msg names two different counts of at least 2: the sizes a
// mismatch is about.
func sizesDiffer(msg string) bool {
	first := -1
	for i := 0; i < len(msg); {
		if msg[i] < '0' || msg[i] > '9' || i > 0 && isIdentByte(msg[i-1]) {
			i++
			continue
		}
		n, j := 0, i
		for ; j < len(msg) && msg[j] >= '0' && msg[j] <= '9' && n < 1<<40; j++ {
			n = n*10 + int(msg[j]-'0')
		}
		i = j
		switch {
		case n < 2 || j < len(msg) && msg[j] == '.': // a fraction, not a count
		case first < 0:
			first = n
		case n != first:
			return true
		}
	}
	return false
}

// within reports whether r holds inner.
func within(r, inner finding.Range) bool {
	return !inner.Start.Before(r.Start) && !r.End.Before(inner.End)
}
