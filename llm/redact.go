package llm

import (
	"regexp"
	"strings"
)

// Redacted replaces every secret removed from a prompt.
const Redacted = "<redacted>"

// secretName matches variable, key and keyword-argument names that hold credentials:
// api_key, OPENAI_API_KEY, secret, client_secret, password, passwd, pwd, token,
// access_token, hf_token, auth_token, credentials, private_key, kaggle_key. It leaves
// tokenizer, token_pattern, max_tokens and plain key= alone.
const secretName = `(?i:[a-z0-9_]*(?:api_?key|apikey|access_?key|secret|passw(?:or)?d|\bpwd|private_?key|credentials?|auth_?token|_key\b|(?:^|_|\b)tokens?\b)[a-z0-9_]*)`

var (
	// NAME = 'literal', NAME: 'literal', 'NAME': 'literal', os.environ['NAME'] = 'literal',
	// f(NAME='literal').
	secretAssign = regexp.MustCompile(`((?:` + secretName + `|['"]` + secretName + `['"])\s*\]?\s*(?::|=)\s*)[rbuRBU]?(['"])([^'"\n]+)(['"])`)
	// Authorization / X-Api-Key headers written as dict entries or strings.
	authHeader = regexp.MustCompile(`(?i)((?:authorization|x-api-key|api-key)['"]?\s*[:=]\s*['"])([^'"\n]+)(['"])`)
	// Bearer tokens anywhere.
	bearer = regexp.MustCompile(`(?i)\b(bearer|token|basic)\s+([A-Za-z0-9._~+/=-]{12,})`)
	// Credentials in URLs: scheme://user:password@host.
	urlCreds = regexp.MustCompile(`([a-z][a-z0-9+.-]*://[^:/@\s'"]+:)([^@/\s'"]+)(@)`)
	// Well-known token shapes.
	knownTokens = regexp.MustCompile(`\b(?:sk-(?:proj-|ant-)?[A-Za-z0-9_-]{16,}|gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|AKIA[0-9A-Z]{16}|ASIA[0-9A-Z]{16}|AIza[0-9A-Za-z_-]{30,}|xox[abposr]-[A-Za-z0-9-]{10,}|hf_[A-Za-z0-9]{20,}|glpat-[A-Za-z0-9_-]{20,}|eyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,})`)
	// Long hex strings (32+), e.g. md5-like API keys and Kaggle keys.
	longHex = regexp.MustCompile(`\b[0-9a-fA-F]{32,}\b`)
	// Candidate base64/url-safe tokens of 40+ characters; checked further in looksRandom.
	longB64 = regexp.MustCompile(`[A-Za-z0-9+/_=-]{40,}`)
)

// RedactSecrets replaces credentials in text with Redacted and returns the new text and the
// number of replacements. Lines keep their count, so line numbers stay valid.
func RedactSecrets(text string) (string, int) {
	n := 0
	text = secretAssign.ReplaceAllStringFunc(text, func(m string) string {
		sub := secretAssign.FindStringSubmatch(m)
		if sub[3] == Redacted || strings.TrimSpace(sub[3]) == "" {
			return m
		}
		n++
		return sub[1] + sub[2] + Redacted + sub[4]
	})
	text = authHeader.ReplaceAllStringFunc(text, func(m string) string {
		sub := authHeader.FindStringSubmatch(m)
		if sub[2] == Redacted {
			return m
		}
		n++
		return sub[1] + Redacted + sub[3]
	})
	text = bearer.ReplaceAllStringFunc(text, func(m string) string {
		sub := bearer.FindStringSubmatch(m)
		if !hasDigitAndLetter(sub[2]) {
			return m
		}
		n++
		return sub[1] + " " + Redacted
	})
	text = urlCreds.ReplaceAllStringFunc(text, func(m string) string {
		sub := urlCreds.FindStringSubmatch(m)
		n++
		return sub[1] + Redacted + sub[3]
	})
	text = knownTokens.ReplaceAllStringFunc(text, func(string) string { n++; return Redacted })
	text = longHex.ReplaceAllStringFunc(text, func(string) string { n++; return Redacted })
	text = longB64.ReplaceAllStringFunc(text, func(m string) string {
		if !looksRandom(m) {
			return m
		}
		n++
		return Redacted
	})
	return text, n
}

// looksRandom tells a key-like string (mixed case and digits, few separators) from a long
// identifier or path.
func looksRandom(s string) bool {
	var upper, lower, digit, sep int
	for _, r := range s {
		switch {
		case r >= 'A' && r <= 'Z':
			upper++
		case r >= 'a' && r <= 'z':
			lower++
		case r >= '0' && r <= '9':
			digit++
		default:
			sep++
		}
	}
	if upper == 0 || lower == 0 || digit < 3 {
		return false
	}
	// Paths and snake_case identifiers have many separators; keys have few.
	return sep*8 <= len(s)
}

func hasDigitAndLetter(s string) bool {
	return strings.ContainsAny(s, "0123456789") && strings.IndexFunc(s, func(r rune) bool {
		return (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z')
	}) >= 0
}
