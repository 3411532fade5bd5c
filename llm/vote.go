package llm

import "strings"

// vote combines k answers: crash is the strict majority of the usable answers (a tie means
// no crash, as CRANE-LLM's "if not certain, no crash"); the exception and line are the most
// common pair among the majority, whose first answer supplies the explanation and fix; the
// confidence is the mean over the majority.
func vote(answers []*Verdict) *Verdict {
	var valid []*Verdict
	reason := "no answer"
	for _, a := range answers {
		if a == nil {
			continue
		}
		if a.Unknown {
			reason = a.Reason
			continue
		}
		valid = append(valid, a)
	}
	if len(valid) == 0 {
		return &Verdict{Unknown: true, Reason: reason}
	}
	crashes := 0
	for _, a := range valid {
		if a.Crash {
			crashes++
		}
	}
	crash := crashes*2 > len(valid)
	var majority []*Verdict
	for _, a := range valid {
		if a.Crash == crash {
			majority = append(majority, a)
		}
	}
	type pair struct {
		exc  string
		line int
	}
	counts := map[pair]int{}
	best, bestN := pair{}, 0
	for _, a := range majority {
		p := pair{strings.ToLower(a.Exception), a.Line}
		counts[p]++
		if counts[p] > bestN {
			best, bestN = p, counts[p]
		}
	}
	var rep *Verdict
	sum := 0.0
	for _, a := range majority {
		sum += a.Confidence
		if rep == nil && strings.ToLower(a.Exception) == best.exc && a.Line == best.line {
			rep = a
		}
	}
	out := *rep
	out.Confidence = sum / float64(len(majority))
	out.Samples = len(valid)
	out.Votes = len(majority)
	return &out
}
