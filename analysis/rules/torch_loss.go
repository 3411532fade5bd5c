package rules

import (
	"fmt"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/facts"
	"github.com/premortem/premortem/finding"
)

// Loss functions: the target's batch size, shape and dtype against the input.

// checkLoss checks the target of classification losses.
func checkLoss(c *checker, k *callInfo, class string, input, target *val, tExpr *analysis.Expr) {
	if target == nil || tExpr == nil || target.Kind != facts.KindTensor {
		return
	}
	ev := []string{describe(target)}
	if input != nil {
		ev = append([]string{describe(input)}, ev...)
	}
	switch class {
	case "CrossEntropyLoss", "NLLLoss":
		if input != nil && input.Kind == facts.KindTensor && len(input.Shape) >= 1 && len(target.Shape) >= 1 &&
			input.Shape[0] >= 0 && target.Shape[0] >= 0 && input.Shape[0] != target.Shape[0] && len(input.Shape) >= 2 {
			c.report(tExpr.Range, finding.SeverityError, finding.LossTarget, "ValueError",
				fmt.Sprintf("the batch sizes differ: %s has %d rows but the target %s has %d (Expected input batch_size (%d) to match target batch_size (%d))",
					input.name, input.Shape[0], target.name, target.Shape[0], input.Shape[0], target.Shape[0]),
				0.95, ev, nil)
			return
		}
		if tdtype(target.Dtype) == "torch.int64" && input != nil && input.Kind == facts.KindTensor && len(input.Shape) == 2 && len(target.Shape) == 2 {
			var fixes []finding.Fix
			if target.Shape[1] == 1 {
				fixes = append(fixes, replaceFix("Drop the extra dimension with .squeeze(1)", tExpr.Range, tExpr.Text+".squeeze(1)", true))
			}
			c.report(tExpr.Range, finding.SeverityError, finding.LossTarget, "RuntimeError",
				fmt.Sprintf("%s takes one class index per sample (a 1-D target of shape (%d,)) for a 2-D input, but %s has shape %s (0D or 1D target tensor expected, multi-target not supported)",
					class, input.Shape[0], target.name, shapeTuple(target.Shape)),
				0.95, ev, fixes)
			return
		}
		if target.Dtype == "" || tdtype(target.Dtype) == "torch.int64" {
			return
		}
		probs := class == "CrossEntropyLoss" && isFloatT(target.Dtype) && input != nil && input.Shape != nil && equalInts(input.Shape, target.Shape)
		if probs {
			return // class probabilities are a valid float target
		}
		found := map[string]string{"torch.float32": "Float", "torch.float64": "Double", "torch.int32": "Int", "torch.float16": "Half", "torch.uint8": "Byte", "torch.int16": "Short", "torch.bool": "Bool"}[tdtype(target.Dtype)]
		if found == "" {
			return
		}
		c.report(tExpr.Range, finding.SeverityError, finding.LossTarget, "RuntimeError",
			fmt.Sprintf("%s needs class indices of dtype torch.int64 as target, but %s is %s (expected scalar type Long but found %s)", class, target.name, tdtype(target.Dtype), found),
			0.95, ev, []finding.Fix{replaceFix("Convert the target with .long()", tExpr.Range, tExpr.Text+".long()", true)})
	case "BCELoss", "BCEWithLogitsLoss":
		if target.Dtype != "" && !isFloatT(target.Dtype) {
			c.report(tExpr.Range, finding.SeverityError, finding.LossTarget, "RuntimeError",
				fmt.Sprintf("%s needs a float target, but %s is %s (Found dtype Long but expected Float)", class, target.name, tdtype(target.Dtype)),
				0.93, ev, []finding.Fix{replaceFix("Convert the target with .float()", tExpr.Range, tExpr.Text+".float()", true)})
			return
		}
		if input != nil && input.Kind == facts.KindTensor {
			if a, ok1 := input.shapeKnown(); ok1 {
				if b, ok2 := target.shapeKnown(); ok2 && !equalInts(a, b) {
					c.report(tExpr.Range, finding.SeverityError, finding.LossTarget, "ValueError",
						fmt.Sprintf("%s needs the target shape to equal the input shape, but %s is %s and %s is %s", class, input.name, shapeTuple(a), target.name, shapeTuple(b)),
						0.93, ev, nil)
				}
			}
		}
	}
}
