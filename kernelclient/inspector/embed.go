// Package inspector holds the Python runtime inspector and shadow runner that kernelclient
// injects into a live kernel as the private module _premortem_inspector.
//
// The module is plain Python kept in several files named NN_part.py (common helpers, name
// resolution, describing values, the inspect call, the shadow runner's parent and child
// sides). They are one module: Source joins them in file-name order, and kernelclient execs
// Source in a fresh types.ModuleType registered in sys.modules, then calls inspect, whoami,
// shadow, shadow_result and shadow_cancel through user_expressions of silent executes; each
// returns an object whose repr is the JSON of a facts type.
package inspector

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"io/fs"
	"sort"
	"strings"
)

//go:embed [0-9][0-9]_*.py
var parts embed.FS

// versionPlaceholder is the right-hand side of the VERSION line in 00_common.py; Source
// carries the hash there instead.
const versionPlaceholder = `"@VERSION@"`

// Source is the Python source of the inspector module: the parts in order, with VERSION
// set to Version.
var Source string

// Version identifies the module's source: a hash of the parts, so any edit to them makes
// kernelclient re-inject into kernels that hold an older copy (no hand-bumped number to
// forget).
var Version string

func init() {
	var err error
	Source, Version, err = assemble(parts)
	if err != nil {
		panic(err) // the embedded files are fixed at build time: a test catches this
	}
}

// assemble joins the NN_*.py files of fsys in name order and stamps the VERSION line with
// the hash of the result.
func assemble(fsys fs.FS) (src, version string, err error) {
	names, err := fs.Glob(fsys, "[0-9][0-9]_*.py")
	if err != nil {
		return "", "", fmt.Errorf("list inspector parts: %w", err)
	}
	if len(names) == 0 {
		return "", "", fmt.Errorf("no inspector parts (NN_*.py) embedded")
	}
	sort.Strings(names)
	var b strings.Builder
	for _, n := range names {
		data, err := fs.ReadFile(fsys, n)
		if err != nil {
			return "", "", fmt.Errorf("read inspector part %s: %w", n, err)
		}
		fmt.Fprintf(&b, "# ==== %s ====\n", n)
		b.Write(data)
		if len(data) > 0 && data[len(data)-1] != '\n' {
			b.WriteByte('\n')
		}
	}
	joined := b.String()
	line := "\nVERSION = " + versionPlaceholder
	if strings.Count(joined, line) != 1 {
		return "", "", fmt.Errorf("inspector parts must hold exactly one line VERSION = %s", versionPlaceholder)
	}
	sum := sha256.Sum256([]byte(joined))
	version = hex.EncodeToString(sum[:8])
	return strings.Replace(joined, line, "\nVERSION = \""+version+"\"", 1), version, nil
}
