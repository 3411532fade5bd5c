package repair

import (
	"fmt"
	"strings"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/finding"
)

// Code written for a GPU run where there is none ("Torch not compiled with CUDA enabled",
// "Found no NVIDIA driver on your system", a checkpoint saved on a CUDA device): the device
// is chosen by what the machine has. x.cuda() becomes x.to(device) when the notebook
// defines a device, else x.to(<the choice>); a "cuda" device string (in .to, torch.device,
// device=, or where device was bound) becomes the choice; torch.load gets map_location.

func init() {
	register(family{name: "device-choice", gen: deviceChoiceGen})
}

// deviceChoice picks CUDA when the machine has it.
const deviceChoice = `"cuda" if torch.cuda.is_available() else "cpu"`

func deviceChoiceGen(in *Input) []Candidate {
	msg := in.message()
	if in.Facts == nil || !(strings.Contains(msg, "not compiled with CUDA") || strings.Contains(msg, "no NVIDIA driver") ||
		strings.Contains(msg, "CUDA driver") || strings.Contains(msg, "deserialize object on a CUDA device") || strings.Contains(msg, "cuda") && strings.Contains(msg, "is_available() is False")) {
		return nil
	}
	l := in.crashLine()
	var edits []finding.Edit
	for _, c := range in.exprsOnLine(l, func(e *analysis.Expr) bool { return e.Kind == analysis.ExprCall && e.Value != nil }) {
		switch {
		case c.Value.Kind == analysis.ExprAttribute && c.Value.Name == "cuda" && len(c.Args) == 0 && c.Value.Value != nil:
			dev := deviceChoice
			if in.inNamespace("device") {
				dev = "device"
			}
			edits = append(edits, finding.Edit{Range: finding.Range{Start: c.Value.NameRange.Start, End: c.Range.End}, NewText: "to(" + dev + ")"})
		case strings.HasSuffix(calleeText(c), "load") && c.Keyword("map_location") == nil && strings.Contains(msg, "deserialize"):
			end := c.Range.End
			p := finding.Position{Line: end.Line, Character: end.Character - 1}
			edits = append(edits, finding.Edit{Range: finding.Range{Start: p, End: p}, NewText: ", map_location=" + "torch.device(" + deviceChoice + ")"})
		}
	}
	for _, s := range in.exprsOnLine(l, func(e *analysis.Expr) bool { return e.Kind == analysis.ExprConst }) {
		if v, ok := s.Const.(string); ok && (v == "cuda" || strings.HasPrefix(v, "cuda:")) && s.Range.Start.Line == l {
			edits = append(edits, replaceAt(s.Range, deviceChoice))
		}
	}
	if len(edits) == 0 || !in.torchImported() {
		return nil
	}
	return []Candidate{{
		Fix:   finding.Fix{Title: fmt.Sprintf("Use the GPU only when there is one (%s)", deviceChoice), Edits: edits},
		Keeps: "the same computation, on CUDA where the machine has it and on the CPU here",
	}}
}

// calleeText is the dotted callee of a call, "" when it is not a plain chain.
func calleeText(c *analysis.Expr) string {
	s, _ := c.Value.Chain()
	return s
}

// torchImported reports whether the name torch is bound (imported) for the cell.
func (in *Input) torchImported() bool {
	return in.inNamespace("torch") || in.moduleOf("torch") != ""
}
