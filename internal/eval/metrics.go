package eval

import (
	"math"
	"sort"
	"strings"
)

// outcome is what one setting predicted for one version of a case.
type outcome struct {
	Case, Version string
	// Crash is the prediction; Unknown verdicts count as no crash predicted.
	Crash   bool
	Unknown bool
	// Exception and Line (1-based in the target) of the top finding, when Crash.
	Exception string
	Line      int
	// Source is the layer of the top finding (static, rules, shadow, llm).
	Source string
	// PromptTokens of the LLM prompt sent for this instance (0: none was built).
	PromptTokens int
	// Kernel is true when the case ran in a real kernel (runtime facts available).
	Kernel bool
	// Note explains an unknown or degraded outcome.
	Note string
}

// scored adds the ground truth to an outcome.
type scored struct {
	outcome
	Group, RootCause string
	// DetectOK: the crash/no-crash prediction is right. DiagOK: for buggy versions also
	// the exception and the line; for fixed versions the same as DetectOK.
	DetectOK, DiagOK bool
	// LineUnverified is true when the recorded crash line matched no line of the target,
	// so only the exception was checked.
	LineUnverified bool
}

// score judges o against c's ground truth.
func score(c *evalCase, o outcome) scored {
	s := scored{outcome: o, Group: c.Group, RootCause: c.RootCause}
	if o.Version == versionFixed {
		s.DetectOK = !o.Crash
		s.DiagOK = s.DetectOK
		return s
	}
	s.DetectOK = o.Crash
	if !o.Crash {
		return s
	}
	excOK := strings.EqualFold(o.Exception, c.Ename)
	lines := crashLines(c.Versions[versionBuggy].Target.Code, c.CrashLine)
	lineOK := false
	if len(lines) == 0 {
		s.LineUnverified = true
		lineOK = true
	}
	for _, l := range lines {
		lineOK = lineOK || l == o.Line
	}
	s.DiagOK = excOK && lineOK
	return s
}

// metrics are the binary-classification numbers of one system on a set of instances; a
// crash is the positive class.
type metrics struct {
	N                     int
	TP, FP, TN, FN        int
	Accuracy, P, R, F1    float64
	DiagTP, DiagFN        int
	DiagAccuracy          float64
	DiagP, DiagR, DiagF1  float64
	TokensMean, TokensMed float64
	TokensN               int
	KernelN, UnknownN     int
	LineUnverifiedN       int
}

// computeMetrics summarises scored instances. Diagnosis follows CRANE-LLM: a buggy instance
// is a diagnosis TP only when detected with the right exception and line, otherwise an FN;
// fixed instances count as for detection.
func computeMetrics(ss []scored) metrics {
	var m metrics
	var tokens []int
	for _, s := range ss {
		m.N++
		buggy := s.Version == versionBuggy
		switch {
		case buggy && s.Crash:
			m.TP++
		case buggy:
			m.FN++
		case s.Crash:
			m.FP++
		default:
			m.TN++
		}
		if buggy {
			if s.DiagOK {
				m.DiagTP++
			} else {
				m.DiagFN++
			}
			if s.LineUnverified && s.Crash {
				m.LineUnverifiedN++
			}
		}
		if s.PromptTokens > 0 {
			tokens = append(tokens, s.PromptTokens)
		}
		if s.Kernel {
			m.KernelN++
		}
		if s.Unknown {
			m.UnknownN++
		}
	}
	if m.N == 0 {
		return m
	}
	m.Accuracy = float64(m.TP+m.TN) / float64(m.N)
	m.P, m.R, m.F1 = prf(m.TP, m.FP, m.FN)
	m.DiagAccuracy = float64(m.DiagTP+m.TN) / float64(m.N)
	m.DiagP, m.DiagR, m.DiagF1 = prf(m.DiagTP, m.FP, m.DiagFN)
	m.TokensN = len(tokens)
	m.TokensMean, m.TokensMed = meanMedian(tokens)
	return m
}

func prf(tp, fp, fn int) (p, r, f1 float64) {
	if tp+fp > 0 {
		p = float64(tp) / float64(tp+fp)
	}
	if tp+fn > 0 {
		r = float64(tp) / float64(tp+fn)
	}
	if p+r > 0 {
		f1 = 2 * p * r / (p + r)
	}
	return p, r, f1
}

func meanMedian(xs []int) (float64, float64) {
	if len(xs) == 0 {
		return math.NaN(), math.NaN()
	}
	s := append([]int(nil), xs...)
	sort.Ints(s)
	sum := 0
	for _, x := range s {
		sum += x
	}
	mid := len(s) / 2
	med := float64(s[mid])
	if len(s)%2 == 0 {
		med = float64(s[mid-1]+s[mid]) / 2
	}
	return float64(sum) / float64(len(s)), med
}

// craneOutcomes turns CRANE-LLM's labels for model (with runtime information when rt) into
// scored instances for the given cases: for the reproduced (buggy) instance C is a correct
// diagnosis, PC and RW a detected crash with a wrong diagnosis, W a missed crash; for the
// fixed instance C is a correct no-crash and W a false alarm. Cases without labels for the
// model are skipped.
func craneOutcomes(cases []*evalCase, model string, rt bool) []scored {
	var out []scored
	for _, c := range cases {
		l, ok := c.Crane[model]
		if !ok {
			continue
		}
		b, f := l.BuggyNoRT, l.FixedNoRT
		if rt {
			b, f = l.BuggyRT, l.FixedRT
		}
		if b == "" || f == "" {
			continue
		}
		buggy := scored{outcome: outcome{Case: c.ID, Version: versionBuggy, Crash: b != "W"}, Group: c.Group, RootCause: c.RootCause}
		buggy.DetectOK = buggy.Crash
		buggy.DiagOK = b == "C"
		fixed := scored{outcome: outcome{Case: c.ID, Version: versionFixed, Crash: f != "C"}, Group: c.Group, RootCause: c.RootCause}
		fixed.DetectOK = !fixed.Crash
		fixed.DiagOK = fixed.DetectOK
		out = append(out, buggy, fixed)
	}
	return out
}

// groupBy splits scored instances by key, keys sorted.
func groupBy(ss []scored, key func(scored) string) ([]string, map[string][]scored) {
	m := map[string][]scored{}
	for _, s := range ss {
		k := key(s)
		m[k] = append(m[k], s)
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys, m
}
