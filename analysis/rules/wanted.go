package rules

import (
	"strings"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/finding"
)

// Limits keep one inspector round trip small.
const (
	maxWantedNames  = 32
	maxWantedChains = 16
)

// Wanted returns the names and attribute chains the rules need the inspector to look at
// for this cell, in first-use order: the free names the cell reads (not builtins, not names
// the cell binds before reading them: propagation derives those), then two-part chains
// rooted at free names ("df.Age", "model.predict_classes"), which tell the rules whether an
// attribute exists on the kernel object itself.
func Wanted(cf *analysis.CellFacts) []string {
	if cf == nil {
		return nil
	}
	var names []string
	free := map[string]bool{}
	for _, u := range cf.Uses {
		if free[u.Name] || builtins[u.Name] || analysis.IsBuiltin(u.Name) {
			continue
		}
		free[u.Name] = true
		if len(names) < maxWantedNames {
			names = append(names, u.Name)
		}
	}
	firstDef := map[string]finding.Position{}
	for _, d := range cf.Defs {
		if _, ok := firstDef[d.Name]; !ok {
			firstDef[d.Name] = d.Range.Start
		}
	}
	seen := map[string]bool{}
	var chains []string
	for _, a := range cf.Attrs {
		if len(a.Parts) < 2 || !free[a.Parts[0]] || skipChainRoot[a.Parts[0]] || strings.HasPrefix(a.Parts[1], "__") {
			continue
		}
		if at, ok := firstDef[a.Parts[0]]; ok && at.Line < a.Range.Start.Line {
			continue // rebound on an earlier line: kernel facts of the chain do not apply (df = df.x() reads
			// the kernel's df)
		}
		ch := a.Parts[0] + "." + a.Parts[1]
		if seen[ch] {
			continue
		}
		seen[ch] = true
		if len(chains) < maxWantedChains {
			chains = append(chains, ch)
		}
	}
	// seaborn changed its positional parameters in 0.12: the version decides.
	for _, call := range cf.Calls {
		root, fn, ok := strings.Cut(call.Callee, ".")
		if ok && free[root] && (seabornDataFirst[fn] || oneAxis[fn]) && !seen[root+".__version__"] {
			seen[root+".__version__"] = true
			chains = append(chains, root+".__version__")
		}
	}
	// A builtin the notebook rebound to data (list = [...]) makes the call fail: ask about
	// the builtins the cell calls by name that notebooks commonly shadow.
	for _, call := range cf.Calls {
		if shadowable[call.Callee] && !free[call.Callee] && !defined(cf, call.Callee) && len(names) < maxWantedNames {
			free[call.Callee] = true
			names = append(names, call.Callee)
		}
	}
	// An estimator used before fit: the fix fits it on the notebook's training set, when the
	// kernel holds one.
	for _, call := range cf.Calls {
		if _, m, ok := cutLast(call.Callee); !ok || !predictMethods[m] {
			continue
		}
		for _, p := range trainingPairs {
			for _, n := range p {
				if !free[n] && !defined(cf, n) && len(names) < maxWantedNames {
					free[n] = true
					names = append(names, n)
				}
			}
		}
		break
	}
	return append(names, chains...)
}

// predictMethods are the estimator methods that need a fitted estimator.
var predictMethods = set("predict", "predict_proba", "predict_log_proba", "decision_function", "transform", "score")

// cutLast splits "a.b.c" into "a.b" and "c".
func cutLast(s string) (string, string, bool) {
	i := strings.LastIndexByte(s, '.')
	if i < 0 {
		return "", "", false
	}
	return s[:i], s[i+1:], true
}

// defined reports whether the cell binds name.
func defined(cf *analysis.CellFacts, name string) bool {
	for _, d := range cf.Defs {
		if d.Name == name {
			return true
		}
	}
	return false
}

// skipChainRoot are conventional module aliases: their attributes are functions the rules
// know by name, not facts worth a round trip.
var skipChainRoot = set("np", "pd", "plt", "sns", "torch", "nn", "F", "tf", "os", "sys", "math", "re",
	"json", "random", "sklearn", "scipy", "sm", "keras", "optim", "time", "datetime", "pickle", "warnings")

// shadowable are builtins notebooks often rebind to data (list = [...], sum = 0, max = ...);
// the ubiquitous len, print and range are left out to keep the round trip small.
var shadowable = set("list", "dict", "str", "sum", "max", "min", "type", "input", "id", "set", "tuple")
