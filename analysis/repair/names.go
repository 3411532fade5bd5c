package repair

import (
	"sort"
	"strings"
	"unicode"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/finding"
)

// nearest returns the names of pool that the wrong name most likely meant, best first:
// the same name in another case or spelling (case, "_", " " and "-" ignored), a merge
// suffix (_x, _y) added or dropped, then small edit distances. At most max names.
func nearest(wrong string, pool []string, max int) []string {
	type scored struct {
		name  string
		score int
	}
	var out []scored
	nw := normalize(wrong)
	for _, p := range pool {
		if p == wrong || p == "" {
			continue
		}
		np := normalize(p)
		switch {
		case np == nw:
			out = append(out, scored{p, 0})
		case p == wrong+"_x" || p == wrong+"_y" || strings.TrimSuffix(strings.TrimSuffix(wrong, "_x"), "_y") == p:
			out = append(out, scored{p, 1})
		default:
			d := distance(nw, np)
			// A typo is one or two keystrokes; three edits turn GarageArea into GarageCars,
			// another feature altogether.
			limit := 1
			if len(nw) >= 7 {
				limit = 2
			}
			if d <= limit {
				out = append(out, scored{p, 1 + d})
			} else if len(nw) >= 4 && len(np) >= 4 && (strings.HasPrefix(np, nw) || strings.HasPrefix(nw, np)) {
				// "Garage" for "GarageCars" is too loose; a stem one word long is not.
				if abs(len(np)-len(nw)) <= 3 {
					out = append(out, scored{p, 5})
				}
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].score < out[j].score })
	var names []string
	for _, s := range out {
		if len(names) == max {
			break
		}
		names = append(names, s.name)
	}
	return names
}

func normalize(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r == '_' || r == ' ' || r == '-' {
			continue
		}
		b.WriteRune(unicode.ToLower(r))
	}
	return b.String()
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// distance is the Damerau-Levenshtein (optimal string alignment) distance.
func distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}

// renames returns what the history renamed each column to (the last rename wins), from
// rename(columns={...}) and rename({...}, axis=1) calls, read on the syntax tree. A rename
// that got undone (a -> b -> a) maps a to itself and is dropped.
func renames(hist []Cell) map[string]string {
	m := map[string]string{}
	for _, c := range hist {
		f := c.Facts
		if f == nil {
			f = analysis.ParseCell(c.Text)
		}
		for _, call := range walkExprs(f.Statements, func(finding.Range) bool { return true }, func(e *analysis.Expr) bool {
			return e.Kind == analysis.ExprCall && e.Value != nil && e.Value.Kind == analysis.ExprAttribute && e.Value.Name == "rename"
		}) {
			var d *analysis.Expr
			if len(call.Args) > 0 && call.Args[0].Kind == analysis.ExprDict {
				d = call.Args[0]
			}
			for _, k := range call.Keywords {
				if k.Name == "columns" && k.Value != nil && k.Value.Kind == analysis.ExprDict {
					d = k.Value
				}
			}
			if d == nil {
				continue
			}
			for i := 0; i+1 < len(d.Args); i += 2 {
				old, ok1 := d.Args[i].Const.(string)
				nw, ok2 := d.Args[i+1].Const.(string)
				if !ok1 || !ok2 || d.Args[i].Kind != analysis.ExprConst || d.Args[i+1].Kind != analysis.ExprConst {
					continue
				}
				for k, v := range m {
					if v == old {
						m[k] = nw
					}
				}
				m[old] = nw
			}
		}
	}
	for k, v := range m {
		if k == v {
			delete(m, k)
		}
	}
	return m
}
