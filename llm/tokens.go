package llm

import (
	"sync"

	tiktoken "github.com/pkoukk/tiktoken-go"
	tiktoken_loader "github.com/pkoukk/tiktoken-go-loader"
)

// TokenizerName names the tokenizer CountTokens uses: OpenAI's o200k_base BPE (GPT-4o,
// GPT-5 family; the tokenizer CRANE-LLM measured its prompts with), run by
// github.com/pkoukk/tiktoken-go with the BPE ranks embedded by
// github.com/pkoukk/tiktoken-go-loader, so nothing is downloaded. Other models' tokenizers
// differ by a few percent; the count is an estimate for budgeting and comparison.
const TokenizerName = "o200k_base (tiktoken-go, offline ranks)"

var (
	encOnce sync.Once
	enc     *tiktoken.Tiktoken
	encErr  error
)

func encoder() (*tiktoken.Tiktoken, error) {
	encOnce.Do(func() {
		tiktoken.SetBpeLoader(tiktoken_loader.NewOfflineLoader())
		enc, encErr = tiktoken.GetEncoding("o200k_base")
	})
	return enc, encErr
}

// CountTokens returns the number of o200k_base tokens of s. If the tokenizer cannot load
// (it is embedded, so this should not happen) it falls back to ceil(len/4), the usual
// bytes-per-token rule of thumb for English and code.
func CountTokens(s string) int {
	if s == "" {
		return 0
	}
	// Cells are counted again on every prompt the editor triggers: remember recent counts.
	if len(s) >= 64 {
		if n, ok := tokenCache.get(s); ok {
			return n.(int)
		}
	}
	n := countTokens(s)
	if len(s) >= 64 {
		tokenCache.put(s, n)
	}
	return n
}

// tokenCache maps recently counted texts to their counts.
var tokenCache = newLRU(2048)

func countTokens(s string) int {
	e, err := encoder()
	if err != nil {
		return (len(s) + 3) / 4
	}
	return len(e.EncodeOrdinary(s))
}
