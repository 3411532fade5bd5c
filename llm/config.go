package llm

import (
	"os"
	"strings"
	"time"
)

// DefaultAPIKeyEnv is the environment variable read for the API key when Config.APIKeyEnv is
// empty.
const DefaultAPIKeyEnv = "OPENAI_API_KEY"

// Defaults applied by Config.withDefaults.
const (
	DefaultTimeout         = 60 * time.Second
	DefaultMaxPromptTokens = 6000
	DefaultTemperature     = 0.01 // CRANE-LLM decoded at 0.01 for Gemini and Qwen
	DefaultMaxInFlight     = 2
	DefaultCacheSize       = 256
	defaultMaxRetries      = 3
	defaultMaxRetryWait    = 20 * time.Second
)

// JSON modes for Config.JSONMode.
const (
	JSONModeAuto   = ""       // try json_schema, fall back to json_object, then to plain text
	JSONModeSchema = "schema" // response_format json_schema (strict schema of the answer)
	JSONModeObject = "object" // response_format json_object
	JSONModeOff    = "off"    // no response_format: the prompt alone asks for JSON
)

// Config configures the LLM layer. The zero value is inactive. It mirrors the LSP settings
// premortem.llm.* and the CLI flags --llm-*.
type Config struct {
	// Enabled turns the layer on or off explicitly; nil means on once BaseURL is set and the
	// key variable is non-empty (see Active).
	Enabled *bool
	// BaseURL of an OpenAI-compatible API, e.g. "https://api.openai.com/v1" or
	// "http://localhost:11434/v1" (Ollama).
	BaseURL string
	// Model name as the endpoint knows it.
	Model string
	// APIKeyEnv is the NAME of the environment variable holding the key (default
	// OPENAI_API_KEY). The key itself never appears in settings or logs.
	APIKeyEnv string
	// Timeout bounds one Predict or Explain call, retries included (default 60s).
	Timeout time.Duration
	// MaxPromptTokens caps the estimated prompt size (default 6000): the least relevant
	// executed cells are dropped first, then facts truncated.
	MaxPromptTokens int
	// Samples is k, the number of answers asked for; the verdict is their majority vote
	// (CRANE-LLM used 5). 0 or 1: one answer.
	Samples int
	// Temperature for sampling; 0 means DefaultTemperature, a negative value leaves it to
	// the endpoint. Reasoning models (o1/o3/o4/gpt-5) never get one: they reject it.
	Temperature float32
	// SendValues lets value facts (min/max, samples, reprs, dict keys, index labels,
	// non-numeric samples, estimator classes) into the prompt. Default false: only
	// structure and types leave the machine.
	SendValues bool
	// WholeCells sends each dependency cell whole instead of only the statements the
	// target depends on (display statements such as df.head() and unrelated assignments
	// are left out by default, the cell marked "(excerpt)").
	WholeCells bool
	// JSONMode selects response_format: JSONModeSchema, JSONModeObject, JSONModeOff, or
	// JSONModeAuto (schema, falling back per client when the endpoint rejects it).
	JSONMode string
	// MaxInFlight bounds concurrent requests of one Client (default 2).
	MaxInFlight int
	// Stream asks the endpoint to stream the answer (server-sent events); the answer is
	// assembled before parsing. Some proxies only serve streams.
	Stream bool
	// CacheSize bounds the answer cache (entries; default 256, negative disables it).
	CacheSize int
	// MaxRetries bounds retries on 429/5xx/network errors (default 3, negative: none).
	MaxRetries int
}

// Active reports whether the layer should run: explicitly enabled, or (Enabled nil) an
// endpoint and a key are configured. An explicitly enabled layer still needs a BaseURL; a
// key is optional then (local servers such as Ollama need none).
func (c Config) Active() bool {
	if c.Enabled != nil {
		return *c.Enabled && c.BaseURL != ""
	}
	return c.BaseURL != "" && c.APIKey() != ""
}

// KeyEnv returns the name of the variable holding the API key.
func (c Config) KeyEnv() string {
	if c.APIKeyEnv == "" {
		return DefaultAPIKeyEnv
	}
	return c.APIKeyEnv
}

// APIKey reads the key from the environment. Callers must never log it.
func (c Config) APIKey() string {
	return strings.TrimSpace(os.Getenv(c.KeyEnv()))
}

// withDefaults fills zero fields.
func (c Config) withDefaults() Config {
	if c.Timeout <= 0 {
		c.Timeout = DefaultTimeout
	}
	if c.MaxPromptTokens <= 0 {
		c.MaxPromptTokens = DefaultMaxPromptTokens
	}
	if c.Samples < 1 {
		c.Samples = 1
	}
	if c.Temperature == 0 {
		c.Temperature = DefaultTemperature
	}
	if c.MaxInFlight <= 0 {
		c.MaxInFlight = DefaultMaxInFlight
	}
	if c.CacheSize == 0 {
		c.CacheSize = DefaultCacheSize
	}
	if c.MaxRetries == 0 {
		c.MaxRetries = defaultMaxRetries
	}
	if c.MaxRetries < 0 {
		c.MaxRetries = 0
	}
	return c
}

// String describes the configuration without the key, for logs.
func (c Config) String() string {
	return "llm{baseURL=" + c.BaseURL + " model=" + c.Model + " keyEnv=" + c.KeyEnv() + "}"
}
