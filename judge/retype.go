package judge

import (
	"context"
	"fmt"
	"sort"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/facts"
	"github.com/premortem/premortem/kernelclient"
)

// The runtime half of the fix guard (repair.TypeChange): a candidate's clean run reports
// the types of the names its edited cells bind, and a candidate that left one unbound or
// of another kind is refused, not verified. The types before the fix come from what
// already ran: for an edited history cell the kernel holds what that cell bound (when no
// cell run after it rebinds the name), and for the crashing cell the failing run's crash
// facts hold what its lines above the crash bound.

// statusRetyped marks a candidate whose run was clean but which the guard refused.
const statusRetyped = "retyped"

// maxTypeNames bounds the names one candidate's run reports.
const maxTypeNames = 24

// typeWatch is what the guard knows before any candidate runs: the crash facts of the
// failing run, the crash line (0-based) they belong to, and the kernel's facts.
type typeWatch struct {
	crash     map[string]facts.Value
	crashLine int
	insp      *facts.Inspection
}

// boundBefore returns the names whose types before the fix c are known, with those types:
// the names each edited cell binds before and after the edit that nothing run after it in
// c's code rebinds. A name the edit stops binding is no longer the cell's (model renamed
// scaler where a later cell reused it): what it holds then is another cell's business.
func (w typeWatch) boundBefore(c *candidate) map[string]string {
	out := map[string]string{}
	if c.after == nil {
		return out
	}
	later := map[string]bool{} // names bound by what runs after the cell looked at
	add := func(text string) {
		for _, d := range analysis.ParseCell(text).Defs {
			later[d.Name] = true
		}
	}
	targetText := c.texts[c.target]
	if t, ok := c.after[c.target]; ok {
		targetText = t
		// The crashing cell: a name bound only above the crash line held, when the run
		// failed, what the fix must keep the kind of.
		last := map[string]int{}
		defs := analysis.ParseCell(c.texts[c.target]).Defs
		for _, d := range defs {
			if !loopOnly(defs, d.Name) {
				last[d.Name] = max(last[d.Name], d.Range.Start.Line)
			}
		}
		still := boundBy(t)
		for n, l := range last {
			if v, ok := w.crash[n]; ok && still[n] && l < w.crashLine && v.Exists && v.Type != "" {
				out[n] = v.Type
			}
		}
	}
	add(targetText)
	if c.first >= 0 {
		for i := len(c.hist) - 1; i >= c.first; i-- {
			h := c.hist[i]
			text := h.Text
			if t, ok := c.after[h.ID]; ok {
				still := boundBy(t)
				defs := analysis.ParseCell(h.Text).Defs
				for _, d := range defs {
					if later[d.Name] || d.Kind == analysis.DefDelete || !still[d.Name] || loopOnly(defs, d.Name) {
						continue
					}
					if _, done := out[d.Name]; done {
						continue
					}
					if v, ok := w.kernelValue(d.Name); ok {
						out[d.Name] = v.Type
					}
				}
				text = t
			}
			add(text)
		}
	}
	if len(out) > maxTypeNames {
		names := make([]string, 0, len(out))
		for n := range out {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names[maxTypeNames:] {
			delete(out, n)
		}
	}
	return out
}

// loopOnly reports whether every binding of name in defs is a for loop's target: its
// value is whichever item came last, and a fix that makes the loop walk other items (a
// dict's values, not its keys) changes it by design.
func loopOnly(defs []analysis.Def, name string) bool {
	for _, d := range defs {
		if d.Name == name && d.Kind != analysis.DefFor {
			return false
		}
	}
	return true
}

// boundBy returns the names text binds at its top level.
func boundBy(text string) map[string]bool {
	out := map[string]bool{}
	for _, d := range analysis.ParseCell(text).Defs {
		if d.Kind != analysis.DefDelete {
			out[d.Name] = true
		}
	}
	return out
}

// kernelValue is the kernel's fact of name, when taken and the name is bound.
func (w typeWatch) kernelValue(name string) (facts.Value, bool) {
	if w.insp == nil {
		return facts.Value{}, false
	}
	v, ok := w.insp.Values[name]
	return v, ok && v.Exists && v.Type != ""
}

// historyNames returns the names the edited history cells of cs bind that the kernel's
// facts in insp do not cover yet, sorted.
func historyNames(cs []*candidate, insp *facts.Inspection) []string {
	seen := map[string]bool{}
	for _, c := range cs {
		for id := range c.after {
			if id == c.target {
				continue
			}
			for _, h := range c.hist {
				if h.ID != id {
					continue
				}
				for _, d := range analysis.ParseCell(h.Text).Defs {
					if d.Kind == analysis.DefDelete || d.Kind == analysis.DefImport {
						continue
					}
					if insp != nil {
						if _, ok := insp.Values[d.Name]; ok {
							continue
						}
					}
					seen[d.Name] = true
				}
			}
		}
	}
	out := make([]string, 0, len(seen))
	for n := range seen {
		out = append(out, n)
	}
	sort.Strings(out)
	if len(out) > 120 {
		out = out[:120]
	}
	return out
}

// typeFacts inspects names in the kernel (their types are the guard's "before"); a kernel
// that cannot answer leaves the guard without those names, which is no refusal.
func (j *Judge) typeFacts(ctx context.Context, names []string) (*facts.Inspection, error) {
	if len(names) == 0 {
		return nil, nil
	}
	if j.Kernel.State() == kernelclient.StateBusy {
		return nil, fmt.Errorf("inspect for the fix guard: %w", kernelclient.ErrBusy)
	}
	insp, err := j.Kernel.Inspect(ctx, kernelclient.InspectRequest{Names: names, Budget: j.Options.inspectBudget()})
	if err != nil {
		return nil, fmt.Errorf("inspect for the fix guard: %w", err)
	}
	return insp, nil
}
