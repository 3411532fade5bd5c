package rules

import (
	"fmt"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/finding"
)

// Device mismatches between a module or tensor and its input.

// firstDevice is where the module's first layer lives.
func firstDevice(m *val) string {
	if m.Module.First != nil && m.Module.First.Device != "" {
		return m.Module.First.Device
	}
	if len(m.Module.Layers) > 0 && m.Module.Layers[0].Device != "" {
		return m.Module.Layers[0].Device
	}
	return m.Device
}

// deviceExpr names a device in a fix: the user's `device` variable when it exists.
func deviceExpr(c *checker, dev string) string {
	if c.nameExists("device") {
		return "device"
	}
	return "'" + deviceKind(dev) + "'"
}

// reportDevice reports an operation between tensors on different devices.
func reportDevice(c *checker, r finding.Range, a, b *val, bExpr *analysis.Expr) {
	var fixes []finding.Fix
	if bExpr != nil {
		fixes = append(fixes, replaceFix("Move "+b.name+" to "+a.Device, bExpr.Range, bExpr.Text+".to("+deviceExpr(c, a.Device)+")", true))
	}
	c.report(r, finding.SeverityError, finding.DeviceMismatch, "RuntimeError",
		fmt.Sprintf("%s is on %s and %s is on %s (Expected all tensors to be on the same device)", a.name, a.Device, b.name, b.Device),
		0.93, []string{describe(a), describe(b)}, fixes)
}
