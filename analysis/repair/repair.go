package repair

import (
	"sort"
	"strings"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/facts"
	"github.com/premortem/premortem/finding"
)

// Input is everything a family may look at. Nothing in it is changed.
type Input struct {
	// Finding is the predicted (or shadow-confirmed) crash.
	Finding finding.Finding
	// Message is the exception's own message when a run raised it ("X has 3 features, but
	// ..."); empty when only a prediction exists (the finding's message is used then).
	Message string
	// Text and Facts are the crashing cell's text and static facts.
	Text  string
	Facts *analysis.CellFacts
	// Inspection holds the runtime facts of the names the cell uses and of the names
	// Wanted asked for; nil without a kernel.
	Inspection *facts.Inspection
	// History is the executed cells in execution order, without the crashing cell.
	History []Cell
	// Unrun are the names bound by code cells that have not run (other than this one): a
	// NameError on one of them is repaired by running its cell, never by a rename.
	Unrun map[string]bool
	// Unran are those code cells (other than this one), in notebook order: where a
	// definition the cell lacks may be copied from.
	Unran []Cell
	// CrashKeys are the keys of the objects the crash line reads, as the cell's shadow run
	// saw them when it failed (facts.ShadowResult.CrashKeys); nil without such a run. They
	// know the columns of a frame the crashing cell built itself.
	CrashKeys []facts.CrashKeys
	// CrashFacts are the runtime facts of the names the crash line reads (and of what the
	// cell's bindings of those read) as the cell's shadow run held them when it failed
	// (facts.ShadowResult.CrashFacts); nil without such a run. For a name the cell binds
	// before the crash line, or one no inspection knows, they replace the kernel's facts
	// (see value): the kernel holds the name's stale value or none.
	CrashFacts map[string]facts.Value
	// Site, when the code that raised was written in an executed cell of the history (a
	// forward or helper it defines), is that cell and line (see FrameSite): the families run
	// there too.
	Site *Site
	// Suggestions are the existing names nearest to a missing name or attribute, as the
	// failing run saw them (facts.ShadowResult.Suggestions); nil without such a run.
	Suggestions *facts.Suggestions
	// SiteFacts are the crash facts of Site's frame (facts.ShadowResult.SiteFacts): at the
	// site they take the place of CrashFacts.
	SiteFacts map[string]facts.Value

	// atSite is set on the input seen from Site (see at): its crash facts are the site
	// frame's, which hold the function's locals, so they win over the kernel's globals.
	atSite bool
}

// Cell is one cell of the notebook: an executed cell of the history, or one of Unran.
type Cell struct {
	// ID is notebook.Cell.ID, Index its 0-based position in the notebook.
	ID    string
	Index int
	Text  string
	Facts *analysis.CellFacts
}

// Candidate is one proposed repair.
type Candidate struct {
	Fix finding.Fix
	// Family names the library file that proposed it ("missing-name", "not-fitted"...).
	Family string
	// Keeps says in words why the edit keeps the cell's intent ("reads the column the
	// history renamed sqft to"); shown to the user as evidence when the fix is verified.
	Keeps string
	// Told is true when the exception's own words gave the edit (a told family): among
	// verified fixes it ranks above the guesses.
	Told bool
}

// family is one file's repairs: it returns nothing when the crash is not its kind.
type family struct {
	name string
	gen  func(in *Input) []Candidate
	// wanted lists extra names whose runtime facts the family needs (may be nil).
	wanted func(in *Input) []string
	// told marks a family that reads the repair off the exception's own words (the values
	// it lists, the spelling it says to use): the library that raised knows better than a
	// guess by spelling, so at each site its candidates are tried first.
	told bool
	// broad marks a family that tries values the exception does not name (the neighbouring
	// dimensions of a dim argument): at each site it comes after every other family, so a
	// repair the evidence points to is tried, and ranked, first.
	broad bool
	// atCall marks a family that repairs the operand the raising call got (a frame's text
	// columns encoded): it runs at the crash line and at the frame that raised, not where
	// the operand's ingredients were bound, whose other readers would change with it.
	atCall bool
}

var families []family

// register adds a family; called from the init function of the family's file. The
// families the exception tells come first and the broad ones last, each group in the order
// of registration.
func register(f family) {
	families = append(families, f)
	rank := func(f family) int {
		switch {
		case f.told:
			return 0
		case f.broad:
			return 2
		}
		return 1
	}
	sort.SliceStable(families, func(a, b int) bool { return rank(families[a]) < rank(families[b]) })
}

// maxCandidates bounds the candidates of one finding: each costs a shadow run, and the
// verifier's time budget (judge) usually ends the search before this many have run.
const maxCandidates = 40

// Guard is the one gate every candidate fix of one finding passes, whoever proposed it
// (the library's families, a rule, the LLM, a chained composite): a fix with no edit, one
// already admitted (by Key), and one that does not keep the cell's intent (IntentKept) are
// refused. The zero Guard is not usable: make one with NewGuard.
type Guard struct {
	in   Input
	seen map[string]bool
}

// NewGuard returns the guard for the candidates of in.Finding.
func NewGuard(in Input) *Guard { return &Guard{in: in, seen: map[string]bool{}} }

// Admit reports whether fix may be tried, and marks it seen. at is the input the fix was
// made for (the site's, when a family ran at the frame that raised); nil is the guard's.
func (g *Guard) Admit(at *Input, fix finding.Fix) bool {
	if at == nil {
		at = &g.in
	}
	return len(fix.Edits) > 0 && IntentKept(*at, fix) && g.first(fix)
}

// first reports whether fix was not admitted before, and marks it seen.
func (g *Guard) first(fix finding.Fix) bool {
	k := fixKey(fix)
	if g.seen[k] {
		return false
	}
	g.seen[k] = true
	return true
}

// Candidates returns the repairs for in.Finding, best first, at most maxCandidates: the
// repairs the exception's own words give (told families, at the crash line), the finding's
// own fixes (own: a rule's or the LLM's, in their order), then the library's at each site.
// Every one has passed g (NewGuard(in) when nil), so a caller that composes more
// candidates later (chained repair) passes them through the same guard. A family that
// panics on odd input costs its candidates only.
func Candidates(in Input, g *Guard, own ...finding.Fix) []Candidate {
	if in.Finding.Exception == "" {
		return nil
	}
	if g == nil {
		g = NewGuard(in)
	}
	var out []Candidate
	// What the exception itself says to write comes before a rule's or the LLM's guess.
	for _, f := range families {
		if !f.told {
			continue
		}
		for _, c := range safeGen(f, &in) {
			if len(c.Fix.Edits) > 0 && IntentKept(in, c.Fix) && g.first(c.Fix) {
				c.Family, c.Told = f.name, true
				out = append(out, c)
			}
		}
	}
	for _, f := range own {
		f.Title = strings.TrimSpace(f.Title)
		f.Verified, f.Preferred = false, false
		if g.Admit(nil, f) {
			out = append(out, Candidate{Fix: f, Family: "finding"})
		}
	}
	// The sites, the crash's first: the crashing cell, then the cell whose code raised,
	// then where the values the crash line reads were bound, nearest first.
	type site struct {
		in   *Input
		move *Site // the history cell the edits go to; nil for the crashing cell
		// also is the crash's own input, whose intent an edit of the crashing cell at
		// another line must keep as well.
		also *Input
		// binding is true at a binding site (see bindingSites).
		binding bool
	}
	sites := []site{{in: &in}}
	if in.Site != nil {
		sites = append(sites, site{in: in.at(*in.Site), move: in.Site})
	}
	for _, b := range in.bindingSites() {
		s := site{in: in.atBinding(b), binding: true}
		if b.inCell {
			s.also = &in
		} else {
			s.move = &b.Site
		}
		sites = append(sites, s)
	}
	for _, st := range sites {
		at := st.in
		for _, f := range families {
			if f.atCall && st.binding {
				continue
			}
			var kept []Candidate
			for _, c := range safeGen(f, at) {
				if len(c.Fix.Edits) > 0 && IntentKept(*at, c.Fix) && (st.also == nil || IntentKept(*st.also, c.Fix)) {
					kept = append(kept, c)
				}
			}
			if st.move != nil {
				kept = moveTo(kept, *st.move) // keyed where it edits
			}
			for _, c := range kept {
				if g.first(c.Fix) {
					c.Family, c.Told = f.name, f.told
					out = append(out, c)
				}
			}
		}
	}
	if len(out) > maxCandidates {
		out = out[:maxCandidates]
	}
	return out
}

func safeGen(f family, in *Input) (cs []Candidate) {
	defer func() {
		if recover() != nil {
			cs = nil
		}
	}()
	return f.gen(in)
}

// Wanted returns the names whose runtime facts would help the families: the estimators
// fitted in the history and the data they were fitted on, training-set-looking names,
// callees of the crash line. The caller inspects them along with the cell's own names.
func Wanted(in Input) []string {
	seen := map[string]bool{}
	var out []string
	add := func(n string) {
		if n != "" && !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	for _, f := range families {
		if f.wanted == nil {
			continue
		}
		func() {
			defer func() { _ = recover() }()
			for _, n := range f.wanted(&in) {
				add(n)
			}
		}()
	}
	return out
}

// fixKey identifies a fix by what it does, so two families proposing the same edit count
// once.
func fixKey(f finding.Fix) string {
	var b strings.Builder
	es := append([]finding.Edit(nil), f.Edits...)
	sort.Slice(es, func(i, j int) bool { return es[i].Range.Start.Before(es[j].Range.Start) })
	for _, e := range es {
		b.WriteString(e.Cell)
		b.WriteByte('|')
		b.WriteString(rangeKey(e.Range))
		b.WriteByte('|')
		b.WriteString(e.NewText)
		b.WriteByte(';')
	}
	return b.String()
}

func rangeKey(r finding.Range) string {
	return itoa(r.Start.Line) + ":" + itoa(r.Start.Character) + "-" + itoa(r.End.Line) + ":" + itoa(r.End.Character)
}

// value returns the runtime facts of name: the crash frame's when the cell binds name before
// the crash line or the inspection lacks it, else the inspection's.
func (in *Input) value(name string) (facts.Value, bool) {
	if v, ok := in.CrashFacts[name]; ok && v.Exists && in.atSite {
		return v, true
	}
	if v, ok := in.CrashFacts[name]; ok && v.Exists {
		if _, fresh := in.crashValue(name); fresh {
			return v, true
		}
	}
	if in.Inspection == nil {
		return facts.Value{}, false
	}
	v, ok := in.Inspection.Values[name]
	return v, ok && v.Exists
}

// knownNames lists, sorted, the names value knows: the inspection's and the crash frame's.
func (in *Input) knownNames() []string {
	seen := map[string]bool{}
	var out []string
	if in.Inspection != nil {
		for n := range in.Inspection.Values {
			seen[n] = true
			out = append(out, n)
		}
	}
	for n := range in.CrashFacts {
		if !seen[n] {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

// crashValue returns the crash frame's facts of name and whether they are the ones to
// believe over the kernel's: the cell binds name before the crash line (the kernel's
// value is stale or absent) or no inspection knows name.
func (in *Input) crashValue(name string) (facts.Value, bool) {
	v, ok := in.CrashFacts[name]
	if !ok || !v.Exists {
		return facts.Value{}, false
	}
	if in.Facts != nil {
		for _, d := range in.Facts.Defs {
			if d.Name == name && d.Range.Start.Line <= in.crashLine() {
				return v, true
			}
		}
	}
	if in.Inspection != nil {
		if k, ok := in.Inspection.Values[name]; ok && k.Exists {
			return v, false
		}
	}
	return v, true
}

// message is the exception message to parse: the run's, else the finding's. A shadow
// finding's message wraps the run's ("ValueError: <message> (raised at line 3 when run in a
// copy of the kernel)"): the wrapping is taken off, so patterns anchored at the message's
// start match a shadow-only finding as they match the run's own message.
func (in *Input) message() string {
	if in.Message != "" {
		return in.Message
	}
	m := in.Finding.Message
	if e := in.Finding.Exception; e != "" {
		m = strings.TrimPrefix(m, e+": ")
	}
	for _, wrap := range []string{" (raised at line ", " (raised in cell "} {
		if i := strings.LastIndex(m, wrap); i >= 0 && strings.HasSuffix(m, ")") {
			m = m[:i]
			break
		}
	}
	return m
}

// exception is the exception class without its module ("NotFittedError").
func (in *Input) exception() string {
	e := in.Finding.Exception
	if i := strings.LastIndexByte(e, '.'); i >= 0 {
		e = e[i+1:]
	}
	return e
}

// crashLine is the 0-based line of the crash in the cell.
func (in *Input) crashLine() int { return in.Finding.Range.Start.Line }

// inNamespace reports whether the kernel holds name (false when unknown).
func (in *Input) inNamespace(name string) bool {
	if in.Inspection == nil {
		return false
	}
	for _, n := range in.Inspection.Namespace {
		if n == name {
			return true
		}
	}
	return false
}

// callsOnLine returns the cell's calls whose range covers line l, outermost first: the
// named calls the static facts list and, from the statements' expression trees, calls on
// other callees (LinearRegression().fit(X, y)).
func (in *Input) callsOnLine(l int) []analysis.Call {
	if in.Facts == nil {
		return nil
	}
	var out []analysis.Call
	seen := map[string]bool{}
	add := func(c analysis.Call) {
		k := rangeKey(c.Range)
		if c.Range.Start.Line <= l && c.Range.End.Line >= l && !seen[k] {
			seen[k] = true
			out = append(out, c)
		}
	}
	for _, e := range in.exprsOnLine(l, func(e *analysis.Expr) bool { return e.Kind == analysis.ExprCall }) {
		callee := ""
		if e.Value != nil {
			callee, _ = e.Value.Chain()
		}
		add(analysis.Call{Callee: callee, Expr: e, Range: e.Range})
	}
	for _, c := range in.Facts.Calls {
		add(c)
	}
	return out
}

// exprsOnLine returns every expression of the cell's statements (function bodies
// included) whose range covers line l and for which keep is true, outermost first.
func (in *Input) exprsOnLine(l int, keep func(e *analysis.Expr) bool) []*analysis.Expr {
	if in.Facts == nil {
		return nil
	}
	return walkExprs(in.Facts.Statements, func(r finding.Range) bool { return r.Start.Line <= l && r.End.Line >= l }, keep)
}

// walkExprs returns the expressions of the statements (nested ones included, and those
// inside comprehensions) that keep accepts, outermost first, entering only statements and expressions whose range within
// accepts.
func walkExprs(ss []*analysis.Statement, within func(finding.Range) bool, keep func(e *analysis.Expr) bool) []*analysis.Expr {
	var out []*analysis.Expr
	var walk func(e *analysis.Expr)
	walk = func(e *analysis.Expr) {
		if e == nil || !within(e.Range) {
			return
		}
		if keep(e) {
			out = append(out, e)
		}
		walk(e.Value)
		walk(e.Index)
		for _, a := range e.Args {
			walk(a)
		}
		for _, k := range e.Keywords {
			walk(k.Value)
		}
		for _, p := range e.Parts {
			walk(p)
		}
	}
	var stmts func(ss []*analysis.Statement)
	stmts = func(ss []*analysis.Statement) {
		for _, st := range ss {
			if st == nil || !within(st.Range) {
				continue
			}
			for _, t := range st.Targets {
				walk(t)
			}
			walk(st.Value)
			stmts(st.Body)
		}
	}
	stmts(ss)
	return out
}

// Key identifies a fix by its edits: two fixes with the same key do the same thing.
func Key(f finding.Fix) string { return fixKey(f) }

// EditSize measures how much a fix changes, in characters changed (a common prefix and
// suffix of the replaced and the new text do not count, nor does the old text a wrap keeps
// whole), so the smallest repair ranks first.
func EditSize(texts map[string]string, target string, f finding.Fix) int {
	n := 0
	for _, e := range f.Edits {
		id := e.Cell
		if id == "" {
			id = target
		}
		old := textOf(texts[id], e.Range)
		nw := e.NewText
		p := 0
		for p < len(old) && p < len(nw) && old[p] == nw[p] {
			p++
		}
		s := 0
		for s < len(old)-p && s < len(nw)-p && old[len(old)-1-s] == nw[len(nw)-1-s] {
			s++
		}
		om, nm := old[p:len(old)-s], nw[p:len(nw)-s]
		if om != "" && strings.Contains(nm, om) {
			n += len(nm) - len(om) // a wrap (pd.get_dummies(...) around the old text) changes only what it adds
		} else {
			n += len(om) + len(nm)
		}
		if e.Cell != "" && e.Cell != target {
			n += 20 // another cell to re-run costs the user more than a few characters
		}
	}
	return n
}
