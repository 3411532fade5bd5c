package repair

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/finding"
)

// Class labels that do not start at 0. XGBoost's classifier wants the classes 0..k-1 and
// says which it expected and which it got ("Invalid classes inferred from unique values
// of `y`.  Expected: [0 1 2], got [1 2 3]"): wine quality 3..8, survey answers 1..5. When
// the labels it got are the expected ones shifted by a constant, the labels passed to the
// call are shifted back; the predictions then come out shifted too, which the title says.

func init() {
	register(family{name: "label-shift", gen: labelShiftGen})
}

func labelShiftGen(in *Input) []Candidate {
	if in.exception() != "ValueError" {
		return nil
	}
	msg := in.message()
	_, rest, ok := strings.Cut(msg, "Expected: [")
	if !ok {
		return nil
	}
	want, rest, ok := strings.Cut(rest, "]")
	if !ok {
		return nil
	}
	_, got, ok := strings.Cut(rest, "got [")
	if !ok {
		return nil
	}
	got, _, ok = strings.Cut(got, "]")
	if !ok {
		return nil
	}
	shift, ok := constantShift(strings.Fields(want), strings.Fields(got))
	if !ok || shift == 0 {
		return nil
	}
	var out []Candidate
	for _, c := range in.callsOnLine(in.crashLine()) {
		y := labelsArg(c.Expr)
		if y == nil {
			continue
		}
		text := y.Text
		if y.Kind != analysis.ExprName && y.Kind != analysis.ExprAttribute && y.Kind != analysis.ExprSubscript && y.Kind != analysis.ExprCall {
			text = "(" + text + ")"
		}
		op := "-"
		if shift < 0 {
			op = "+"
		}
		n := strconv.Itoa(abs(shift))
		out = append(out, Candidate{
			Fix: finding.Fix{Title: fmt.Sprintf("Number the labels from 0 (%s %s %s: the predictions count from 0 too)", y.Text, op, n),
				Edits: []finding.Edit{replaceAt(y.Range, text+" "+op+" "+n)}},
			Keeps: fmt.Sprintf("the same labels %s, numbered from 0 as the classifier counts classes", y.Text),
		})
	}
	return out
}

// constantShift returns k when every got[i] is want[i] + k.
func constantShift(want, got []string) (int, bool) {
	if len(want) == 0 || len(want) != len(got) {
		return 0, false
	}
	k := 0
	for i := range want {
		w, err1 := strconv.Atoi(want[i])
		g, err2 := strconv.Atoi(got[i])
		if err1 != nil || err2 != nil {
			return 0, false
		}
		if i == 0 {
			k = g - w
		} else if g-w != k {
			return 0, false
		}
	}
	return k, true
}

// labelsArg is the labels argument of a fit-like call: y= or the second positional one.
func labelsArg(call *analysis.Expr) *analysis.Expr {
	if call == nil || call.Value == nil || call.Value.Kind != analysis.ExprAttribute || !strings.HasPrefix(call.Value.Name, "fit") {
		return nil
	}
	for _, k := range call.Keywords {
		if k.Name == "y" {
			return k.Value
		}
	}
	if len(call.Args) >= 2 && !call.Args[1].Starred {
		return call.Args[1]
	}
	return nil
}
