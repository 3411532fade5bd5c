package repair

import (
	"fmt"
	"regexp"

	"github.com/premortem/premortem/finding"
)

// Attributes of the wrong kind of object: a pandas Series or DataFrame has no reshape (its
// NumPy array has: .to_numpy().reshape), a NumPy array has no .values (it is the values
// already), and methods pandas removed have a successor of the same meaning (as_matrix is
// to_numpy, iteritems is items). The object and the call stay; only the access changes.

func init() {
	register(family{name: "attribute-kind", gen: attrKindGen})
}

var (
	pandasTypeRE = regexp.MustCompile(`^'(Series|DataFrame)' object has no attribute '(\w+)'`)
	ndarrayAttr  = regexp.MustCompile(`^'numpy\.ndarray' object has no attribute 'values'`)
)

// pandasRenamed maps a pandas method removed in a release to the one that replaced it.
var pandasRenamed = map[string]string{"as_matrix": "to_numpy", "get_values": "to_numpy", "iteritems": "items", "itervalues": "values"}

func attrKindGen(in *Input) []Candidate {
	if in.exception() != "AttributeError" || in.Facts == nil {
		return nil
	}
	msg := in.message()
	var attr string
	pandas := false
	if m := pandasTypeRE.FindStringSubmatch(msg); m != nil {
		attr, pandas = m[2], true
	} else if ndarrayAttr.MatchString(msg) {
		attr = "values"
	} else {
		return nil
	}
	for _, a := range in.Facts.Attrs {
		for i, p := range a.Parts {
			if p != attr || i == 0 || i >= len(a.PartRanges) || a.PartRanges[i].Start.Line != in.crashLine() {
				continue
			}
			r := a.PartRanges[i]
			base := joinParts(a.Parts[:i])
			switch {
			case pandas && attr == "reshape":
				return []Candidate{{
					Fix:   finding.Fix{Title: fmt.Sprintf("Reshape the NumPy array of %s: .to_numpy().reshape", base), Edits: []finding.Edit{{Range: finding.Range{Start: r.Start, End: r.Start}, NewText: "to_numpy()."}}},
					Keeps: fmt.Sprintf("%s is a pandas object, which has no reshape; its values as an array are reshaped the same way", base),
				}}
			case pandas && pandasRenamed[attr] != "":
				nw := pandasRenamed[attr]
				return []Candidate{{
					Fix:   finding.Fix{Title: fmt.Sprintf("Use .%s (pandas removed .%s)", nw, attr), Edits: []finding.Edit{replaceAt(r, nw)}},
					Keeps: fmt.Sprintf("pandas replaced %s by %s, which does the same", attr, nw),
				}}
			case !pandas && r.Start.Character > 0:
				dot := finding.Range{Start: finding.Position{Line: r.Start.Line, Character: r.Start.Character - 1}, End: r.Start}
				if textOf(in.Text, dot) != "." {
					continue
				}
				return []Candidate{{
					Fix:   finding.Fix{Title: fmt.Sprintf("Use %s itself: it is a NumPy array already (no .values)", base), Edits: []finding.Edit{replaceAt(dot, ""), replaceAt(r, "")}},
					Keeps: fmt.Sprintf("%s is already the array .values would give", base),
				}}
			}
		}
	}
	return nil
}

func joinParts(ps []string) string {
	s := ""
	for i, p := range ps {
		if i > 0 {
			s += "."
		}
		s += p
	}
	return s
}
