package rules

import (
	"strings"
	"unicode"
)

// suggest picks the candidate the user most likely meant by name: the same letters in
// another case, the same words with other spacing/underscores, or a unique near miss by edit
// distance. ok is false when nothing is close or two candidates tie.
func suggest(name string, candidates []string) (best string, ok bool) {
	try := func(f func(string) string) (string, bool) {
		want := f(name)
		var hits []string
		for _, c := range candidates {
			if c != name && f(c) == want {
				hits = append(hits, c)
			}
		}
		if len(hits) == 1 {
			return hits[0], true
		}
		return "", false
	}
	if s, ok := try(strings.ToLower); ok {
		return s, true
	}
	if s, ok := try(strings.TrimSpace); ok {
		return s, true
	}
	if s, ok := try(normaliseLabel); ok {
		return s, true
	}
	if len([]rune(name)) < 3 {
		return "", false // one or two letters: any edit is a different word
	}
	limit := len([]rune(name)) / 4
	if limit < 1 {
		limit = 1
	}
	if limit > 3 {
		limit = 3
	}
	bestD, count := limit+1, 0
	for _, c := range candidates {
		d := editDistance(strings.ToLower(name), strings.ToLower(c))
		switch {
		case d < bestD:
			bestD, best, count = d, c, 1
		case d == bestD:
			count++
		}
	}
	if bestD <= limit && count == 1 {
		return best, true
	}
	return "", false
}

// normaliseLabel lowers and drops spaces, underscores, hyphens and dots.
func normaliseLabel(s string) string {
	var b strings.Builder
	for _, r := range s {
		if unicode.IsSpace(r) || r == '_' || r == '-' || r == '.' {
			continue
		}
		b.WriteRune(unicode.ToLower(r))
	}
	return b.String()
}

// editDistance is the optimal-string-alignment distance over runes (Levenshtein plus
// adjacent transpositions, the commonest typo).
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1) // transposition
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}
