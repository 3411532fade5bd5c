package analysis

import (
	"fmt"
	"maps"
	"reflect"
	"slices"

	"github.com/premortem/premortem/finding"
	"github.com/premortem/premortem/notebook"
)

// Incremental passes. A keystroke changes one cell's text. Recomputing the executed
// history and re-judging every cell of a 2,000-cell notebook for it costs tens of
// milliseconds; instead a pass starts from the previous one:
//
//   - cells whose text is unchanged keep their facts, without a cache lookup;
//   - the sites of the names the changed cells bind, before or after the change, are
//     rebuilt (in a small overlay over the shared table, so earlier Flows stay valid);
//   - a cell is judged again when its own facts changed, when a name its last judgement
//     read the sites of changed (ignoring where in its cell a plain binding sits, which no
//     judgement reads), when the set of names typo suggestions come from changed and the
//     cell asked for one, or when something every judgement reads changed (star imports).
//
// Anything else (a cell added, removed, moved or run, another kernel namespace) is a full
// pass. Judgements are pure functions of a cell's facts and the sites they read, so the
// result equals a full pass's; TestIncrementalMatchesFull checks that on random edits.

// nameSites are the binding sites of one name.
type nameSites struct {
	executed []DefSite // executed cells, in execution order (source order within a cell)
	notRun   []DefSite // cells that have not run, in page order
}

// siteTable maps names to their sites: a base shared by the passes of a notebook (never
// modified once a Flow uses it) and an overlay holding this pass's changes (a nil value:
// the name has no sites any more).
type siteTable struct {
	base siteMap
	over siteMap
}

type siteMap map[string]*nameSites

// add returns name's entry in a map being built, creating it.
func (m siteMap) add(name string) *nameSites {
	ns := m[name]
	if ns == nil {
		ns = &nameSites{}
		m[name] = ns
	}
	return ns
}

func (t *siteTable) get(name string) *nameSites {
	if ns, ok := t.over[name]; ok {
		return ns
	}
	return t.base[name]
}

// names calls f with every name that has sites.
func (t *siteTable) names(f func(string)) {
	for n, ns := range t.base {
		if _, ok := t.over[n]; !ok && ns != nil {
			f(n)
		}
	}
	for n, ns := range t.over {
		if ns != nil {
			f(n)
		}
	}
}

// maxOverlay is the overlay size at which a pass folds it into a new base.
const maxOverlay = 512

// derive returns a table for the next pass: the same base, a copy of the overlay.
func (t *siteTable) derive() siteTable {
	if len(t.over) < maxOverlay {
		over := maps.Clone(t.over)
		if over == nil {
			over = siteMap{}
		}
		return siteTable{base: t.base, over: over}
	}
	base := maps.Clone(t.base)
	for n, ns := range t.over {
		if ns == nil {
			delete(base, n)
		} else {
			base[n] = ns
		}
	}
	return siteTable{base: base, over: siteMap{}}
}

// exec returns the executed sites of name, recording the read for the judgement under way.
func (fl *Flow) exec(name string) []DefSite {
	if fl.rec != nil {
		fl.rec[name] = true
	}
	if ns := fl.sites.get(name); ns != nil {
		return ns.executed
	}
	return nil
}

// pending returns the not-run sites of name, recording the read.
func (fl *Flow) pending(name string) []DefSite {
	if fl.rec != nil {
		fl.rec[name] = true
	}
	if ns := fl.sites.get(name); ns != nil {
		return ns.notRun
	}
	return nil
}

// typoIndex holds the names typo suggestions come from (the names executed cells leave
// defined, the kernel namespace, builtins; four letters or more), by length, and the
// suggestions made so far.
type typoIndex struct {
	byLen map[int]map[string]bool
	memo  map[string]string
}

func newTypoIndex(fl *Flow, opts Options) *typoIndex {
	t := &typoIndex{byLen: map[int]map[string]bool{}, memo: map[string]string{}}
	fl.sites.names(func(n string) {
		if _, ok := fl.LastDefinition(n); ok {
			t.set(n, true)
		}
	})
	for n := range opts.Namespace {
		t.set(n, true)
	}
	for n := range builtinNames {
		t.set(n, true)
	}
	return t
}

// set adds or removes a candidate; it reports whether the set changed.
func (t *typoIndex) set(n string, on bool) bool {
	if len(n) < 4 || t.byLen[len(n)][n] == on {
		return false
	}
	if on {
		if t.byLen[len(n)] == nil {
			t.byLen[len(n)] = map[string]bool{}
		}
		t.byLen[len(n)][n] = true
	} else {
		delete(t.byLen[len(n)], n)
	}
	return true
}

// maxTypoMemo bounds the typo suggestions remembered.
const maxTypoMemo = 4096

// closest returns the one candidate within one edit (two for names longer than five),
// or "" when there is none or several tie. The order candidates are tried in does not
// matter: a tie at the best distance is a tie whatever comes first.
func (t *typoIndex) closest(name string) string {
	if alt, ok := t.memo[name]; ok {
		return alt
	}
	limit := 1
	if len(name) > 5 {
		limit = 2
	}
	best, bestD, tie := "", limit+1, false
	for l := len(name) - limit; l <= len(name)+limit; l++ {
		for cand := range t.byLen[l] {
			if cand == name || cand[0] == '_' && name[0] != '_' {
				continue
			}
			d := editDistance(name, cand, limit)
			switch {
			case d < bestD:
				best, bestD, tie = cand, d, false
			case d == bestD && cand != best:
				tie = true
			}
		}
	}
	if tie || bestD > limit {
		best = ""
	}
	if len(t.memo) >= maxTypoMemo {
		clear(t.memo) // every name typed on the way is asked about once: keep the memo bounded
	}
	t.memo[name] = best
	return best
}

// cellKey is what a pass needs to know of one cell to tell whether it changed.
type cellKey struct {
	id     string
	kind   notebook.Kind
	lang   string
	order  int
	text   string
	python bool
	// over: the cell ends past MaxNotebookBytes of the notebook's code (not parsed).
	over bool
}

// passInput is a notebook's cells, collected for one pass.
type passInput struct {
	nb *notebook.Notebook
	// prev are the previous pass's keys when the notebook has as many cells (nil
	// otherwise), patch the keys that differ from them (all of them when prev is nil).
	prev  []cellKey
	patch []keyPatch
	// fresh holds the facts of the Python cells whose text differs from the previous
	// pass's (every Python cell on the first pass); the others keep theirs.
	fresh map[string]*CellFacts
	// changed lists the cells of fresh whose facts differ from the previous pass's.
	changed []string
}

type keyPatch struct {
	i int
	k cellKey
}

// passState is what a pass leaves for the next one. Its maps are shared with Results and
// never modified; deps, readers and typo belong to the analyzer and change in place.
type passState struct {
	keys     []cellKey
	nsSig    string
	flow     *Flow
	facts    map[string]*CellFacts
	findings map[string][]finding.Finding
	// deps are the names each cell's judgement read the sites of; readers inverts them.
	deps    map[string][]string
	readers map[string]map[string]bool
	// typoUsers are the cells whose judgement asked for a typo suggestion.
	typoUsers map[string]bool
	typo      *typoIndex
}

// collect gathers the cells' facts, re-using the previous pass's for unchanged text.
func (a *Analyzer) collect(ctx interface{ Err() error }, nb *notebook.Notebook, opts Options) (*passInput, error) {
	in := &passInput{nb: nb, fresh: map[string]*CellFacts{}}
	var prev []cellKey
	if a.last != nil && len(a.last.keys) == len(nb.Cells) {
		prev = a.last.keys
	}
	total, loggedOver := 0, false
	for i, c := range nb.Cells {
		if i%16 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, fmt.Errorf("analyze %s: %w", nb.URI, err)
			}
		}
		// A cell too large to parse costs nothing, so it does not count.
		python := isPythonCell(c)
		counted := python && len(c.Text) <= MaxCellBytes
		if counted {
			total += len(c.Text)
		}
		over := counted && total > MaxNotebookBytes
		if prev != nil {
			if p := &prev[i]; p.id == c.ID && p.text == c.Text && p.order == c.ExecutionOrder &&
				p.kind == c.Kind && p.lang == c.Language && p.over == over {
				continue
			}
		}
		k := cellKey{id: c.ID, kind: c.Kind, lang: c.Language, order: c.ExecutionOrder, text: c.Text, python: python, over: over}
		in.patch = append(in.patch, keyPatch{i, k})
		if !k.python {
			continue
		}
		if prev != nil && prev[i].id == k.id && prev[i].python && prev[i].text == k.text && prev[i].over == over {
			continue // run, not edited
		}
		var f *CellFacts
		if over {
			// Past the notebook's budget: neither parsed nor cached, so what the notebook
			// holds stays bounded.
			a.cache.Forget(c.ID)
			f = overBudgetFacts(c.Text, total)
		} else {
			f = a.cache.Facts(c.ID, c.Text)
		}
		in.fresh[k.id] = f
		if a.last == nil || a.last.facts[k.id] != f {
			in.changed = append(in.changed, k.id)
			if opts.Log != nil && !(over && loggedOver) {
				for _, l := range f.Limits {
					opts.Log(fmt.Sprintf("cell %d (%s): %s", i+1, c.ID, l.Message))
				}
				loggedOver = loggedOver || over
			}
		}
	}
	in.prev = prev
	return in, nil
}

// commitKeys returns this pass's keys: the previous pass's slice patched in place (that
// pass is over: nothing reads its keys any more) or, when there was none, a new one.
func (in *passInput) commitKeys() []cellKey {
	keys := in.prev
	if keys == nil {
		keys = make([]cellKey, len(in.nb.Cells))
	}
	for _, p := range in.patch {
		keys[p.i] = p.k
	}
	return keys
}

// sameShape reports whether the notebook has the previous pass's cells, in the same order,
// with the same kinds, languages and execution orders (texts may differ).
func (in *passInput) sameShape(prev *passState) bool {
	if in.prev == nil {
		return false
	}
	for _, pt := range in.patch {
		k, p := pt.k, prev.keys[pt.i]
		if k.id != p.id || k.kind != p.kind || k.lang != p.lang || k.order != p.order || k.python != p.python {
			return false
		}
	}
	return true
}

// fullPass computes the dataflow and judges every cell; prev (nil on the first pass)
// supplies the facts of cells that did not change.
func fullPass(in *passInput, prev *passState, opts Options) *passState {
	keys := in.commitKeys()
	facts := make(map[string]*CellFacts, len(keys))
	for _, k := range keys {
		if !k.python {
			continue
		}
		if f := in.fresh[k.id]; f != nil {
			facts[k.id] = f
		} else {
			facts[k.id] = prev.facts[k.id]
		}
	}
	st := &passState{
		keys: keys, nsSig: nsSignature(opts), facts: facts,
		findings: map[string][]finding.Finding{}, deps: map[string][]string{},
		readers: map[string]map[string]bool{}, typoUsers: map[string]bool{},
	}
	st.flow = newFlow(in.nb, facts)
	st.typo = newTypoIndex(st.flow, opts)
	for _, c := range in.nb.Cells {
		if f := facts[c.ID]; f != nil {
			st.judge(c, f, opts)
		}
	}
	return st
}

// judge computes cell c's findings into st, recording what they depend on.
func (st *passState) judge(c *notebook.Cell, f *CellFacts, opts Options) {
	fl := st.flow
	fl.rec, fl.usedTypo, fl.typo = map[string]bool{}, false, st.typo
	fs := fl.cellFindings(c, f, opts)
	if len(fs) > 0 {
		st.findings[c.ID] = fs
	} else {
		delete(st.findings, c.ID)
	}
	for _, n := range st.deps[c.ID] {
		delete(st.readers[n], c.ID)
	}
	deps := make([]string, 0, len(fl.rec))
	for n := range fl.rec {
		deps = append(deps, n)
		r := st.readers[n]
		if r == nil {
			r = map[string]bool{}
			st.readers[n] = r
		}
		r[c.ID] = true
	}
	st.deps[c.ID] = deps
	if fl.usedTypo {
		st.typoUsers[c.ID] = true
	} else {
		delete(st.typoUsers, c.ID)
	}
	fl.rec, fl.usedTypo = nil, false
}

// update is an incremental pass: in has prev's shape and only the cells in in.changed
// have new text.
func (prev *passState) update(in *passInput, opts Options) *passState {
	keys := in.commitKeys()
	if len(in.changed) == 0 {
		prev.keys = keys
		return prev
	}
	old := prev.flow
	facts := maps.Clone(prev.facts)
	fl := &Flow{
		history: old.history, cells: old.cells, facts: facts, sites: old.sites.derive(),
		star: old.star, notRunStar: old.notRunStar,
	}
	dirty := map[string]bool{}
	touched := map[string]bool{} // names whose sites were rebuilt
	starChanged := false
	for _, id := range in.changed {
		fc := old.cells[id]
		of, nf := prev.facts[id], in.fresh[id]
		facts[id] = nf
		was, is := fc.sitesByName(of), fc.sitesByName(nf)
		for n := range is {
			if _, ok := was[n]; !ok {
				was[n] = nil
			}
		}
		for n, sites := range was {
			if slices.Equal(sites, is[n]) {
				continue // the cell binds n as before, at the same places
			}
			touched[n] = true
			if fl.rebuildSites(fc, is[n], n) {
				dirty[n] = true
			}
		}
		if fc.hpos >= 0 && !reflect.DeepEqual(of.Functions, nf.Functions) {
			for _, fn := range of.Functions {
				dirty[fn.Name] = true
			}
			for _, fn := range nf.Functions {
				dirty[fn.Name] = true
			}
		}
		if (len(of.StarImports) > 0) != (len(nf.StarImports) > 0) {
			starChanged = true
		}
	}
	st := &passState{
		keys: keys, nsSig: prev.nsSig, flow: fl, facts: facts,
		findings: maps.Clone(prev.findings), deps: prev.deps, readers: prev.readers,
		typoUsers: prev.typoUsers, typo: prev.typo,
	}
	if starChanged {
		fl.star, fl.notRunStar = false, -1
		for i, k := range keys {
			fc, f := fl.cells[k.id], facts[k.id]
			if fc == nil || f == nil || len(f.StarImports) == 0 {
				continue
			}
			if fc.hpos >= 0 {
				fl.star = true
			} else if fl.notRunStar < 0 {
				fl.notRunStar = i
			}
		}
	}
	all := fl.star != old.star || fl.notRunStar != old.notRunStar
	rejudge := map[string]bool{}
	for _, id := range in.changed {
		rejudge[id] = true
	}
	typoChanged := false
	for n := range touched {
		_, was := old.LastDefinition(n)
		_, is := fl.LastDefinition(n)
		if was != is && !opts.Namespace[n] && !IsBuiltin(n) && st.typo.set(n, is) {
			typoChanged = true
		}
	}
	if typoChanged {
		clear(st.typo.memo)
		for id := range st.typoUsers {
			rejudge[id] = true
		}
	}
	for n := range dirty {
		for id := range st.readers[n] {
			rejudge[id] = true
		}
	}
	for _, c := range in.nb.Cells {
		if f := facts[c.ID]; f != nil && (all || rejudge[c.ID]) {
			st.judge(c, f, opts)
		}
	}
	return st
}

// rebuildSites replaces cell fc's sites of name with mine, those of its new facts. It reports
// whether a judgement could see the difference: anything but where in the cell a plain
// binding sits (function definitions keep their range: a call is matched to its def by it).
func (fl *Flow) rebuildSites(fc *flowCell, mine []DefSite, name string) bool {
	old := fl.sites.get(name)
	var was nameSites
	if old != nil {
		was = *old
	}
	now := was
	if fc.hpos >= 0 {
		now.executed = spliceSites(was.executed, fc.id, mine, func(s DefSite) bool { return fl.cells[s.CellID].hpos > fc.hpos })
	} else {
		now.notRun = spliceSites(was.notRun, fc.id, mine, func(s DefSite) bool { return s.Index > fc.index })
	}
	if len(now.executed) == 0 && len(now.notRun) == 0 {
		if old == nil {
			return false
		}
		fl.sites.over[name] = nil
		return true
	}
	fl.sites.over[name] = &now
	return !sitesAlike(was.executed, now.executed) || !sitesAlike(was.notRun, now.notRun)
}

// sitesByName returns the sites the cell's facts f give each name, as the flow lists them.
func (fc *flowCell) sitesByName(f *CellFacts) map[string][]DefSite {
	out := map[string][]DefSite{}
	for _, d := range f.Defs {
		if fc.hpos >= 0 || d.Kind != DefDelete {
			out[d.Name] = append(out[d.Name], fc.site(d))
		} else if _, ok := out[d.Name]; !ok {
			out[d.Name] = nil // a not-run del: no site, but the name is the cell's
		}
	}
	return out
}

// spliceSites returns sites without cell id's, with mine inserted before the first site
// after returns true for.
func spliceSites(sites []DefSite, id string, mine []DefSite, after func(DefSite) bool) []DefSite {
	out := make([]DefSite, 0, len(sites)+len(mine))
	placed := false
	for _, s := range sites {
		if s.CellID == id {
			continue
		}
		if !placed && after(s) {
			out = append(out, mine...)
			placed = true
		}
		out = append(out, s)
	}
	if !placed {
		out = append(out, mine...)
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// sitesAlike compares site lists as judgements see them.
func sitesAlike(a, b []DefSite) bool {
	return slices.EqualFunc(a, b, func(x, y DefSite) bool {
		if x.Kind != DefFunction {
			x.Range, y.Range = finding.Range{}, finding.Range{}
		}
		return x == y
	})
}
