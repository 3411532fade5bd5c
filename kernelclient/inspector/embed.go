// Package inspector holds the Python runtime inspector and shadow runner that kernelclient
// injects into a live kernel as the private module _premortem_inspector.
//
// The module (inspector.py) is plain Python: kernelclient execs Source in a fresh
// types.ModuleType and registers it in sys.modules, then calls inspect, whoami, shadow,
// shadow_result and shadow_cancel through user_expressions of silent executes; each returns
// an object whose repr is the JSON of a facts type.
package inspector

import (
	_ "embed"
	"regexp"
)

// Source is the Python source of the inspector module.
//
//go:embed inspector.py
var Source string

// Version is the module's VERSION, read from Source so the two cannot drift: a mismatch
// with the module found in a kernel makes kernelclient re-inject.
var Version = versionOf(Source)

var versionLine = regexp.MustCompile(`(?m)^VERSION = "([^"]+)"$`)

// versionOf extracts VERSION = "..." from the module source ("" when absent).
func versionOf(src string) string {
	m := versionLine.FindStringSubmatch(src)
	if m == nil {
		return ""
	}
	return m[1]
}
