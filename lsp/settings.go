package lsp

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/premortem/premortem/facts"
	"github.com/premortem/premortem/kernelclient"
)

// Settings are the server's options, read from initializationOptions and from
// workspace/didChangeConfiguration. Both arrive either as {"settings": {"premortem": {...}}},
// as {"premortem": {...}}, or as the bare object; dotted keys ("shadow.mode") are accepted
// too. Absent fields keep their defaults. The VS Code extension mirrors these names under
// "premortem." in its package.json.
type Settings struct {
	Static StaticSettings `json:"static"`
	Rules  RulesSettings  `json:"rules"`
	Shadow ShadowSettings `json:"shadow"`
	Kernel KernelSettings `json:"kernel"`
	// Debounce is how long the user must pause typing before kernel, shadow and LLM work
	// starts (milliseconds, or a duration string like "300ms"). Static findings never wait.
	Debounce Duration    `json:"debounce"`
	LLM      LLMSettings `json:"llm"`
}

// StaticSettings configure the static (tree-sitter) layer.
type StaticSettings struct {
	// Enabled turns the static layer on (default true).
	Enabled bool `json:"enabled"`
}

// RulesSettings configure the runtime rules layer.
type RulesSettings struct {
	// Enabled turns runtime rules on when a kernel is attached (default true).
	Enabled bool `json:"enabled"`
}

// ShadowSettings configure shadow runs in a forked kernel.
type ShadowSettings struct {
	// Mode is "off", "safe" (default: only cells whose static screen finds no side effect)
	// or "always".
	Mode string `json:"mode"`
	// Timeout kills the child after this long (default 3 s).
	Timeout Duration `json:"timeout"`
	// FastDevRun is how many iterations each loop keeps in the fast dev run that answers
	// for a cell with loops within Timeout (default 3; 0 turns it off).
	FastDevRun int `json:"fastDevRun"`
	// FullTimeout bounds the full shadow run that goes on in the background after Timeout
	// (default 60 s); its answer replaces the fast one.
	FullTimeout Duration `json:"fullTimeout"`
	// Sandbox is "auto" (default: namespaces where the machine allows them, else the
	// fallback) or "fallback" (never namespaces: file writes emulated in a private view,
	// network and processes refused, parallelism sequential), for machines whose namespaces
	// misbehave.
	Sandbox string `json:"sandbox"`
	// Tensors is "auto" (default: meta tensors for a kernel that has initialised CUDA, real
	// ones otherwise), "meta" (every tensor shape-only) or "real" (a CUDA kernel is then not
	// shadow-run).
	Tensors string `json:"tensors"`
}

// KernelSettings configure how the server finds the notebook's kernel.
type KernelSettings struct {
	// ConnectionFile is a kernel connection file to attach to, overriding discovery.
	ConnectionFile string `json:"connectionFile"`
	// AutoAttach discovers and attaches to the notebook's running kernel on open (default
	// true).
	AutoAttach bool `json:"autoAttach"`
}

// LLMSettings configure the LLM layer (any OpenAI-compatible endpoint).
type LLMSettings struct {
	// Enabled turns the layer on; unset means on when BaseURL or Model is set and the key
	// variable is present.
	Enabled *bool `json:"enabled,omitempty"`
	// BaseURL of the endpoint, e.g. "http://localhost:11434/v1".
	BaseURL string `json:"baseURL"`
	Model   string `json:"model"`
	// APIKeyEnv is the NAME of the environment variable holding the key (default
	// OPENAI_API_KEY); keys never live in settings.
	APIKeyEnv       string   `json:"apiKeyEnv"`
	Timeout         Duration `json:"timeout"`
	MaxPromptTokens int      `json:"maxPromptTokens"`
	// Samples is how many answers to ask for (majority vote).
	Samples     int     `json:"samples"`
	Temperature float64 `json:"temperature"`
	// SendValues allows sample values and value ranges in prompts (default false).
	SendValues bool `json:"sendValues"`
}

// Shadow modes.
const (
	ShadowOff    = "off"
	ShadowSafe   = "safe"
	ShadowAlways = "always"
)

// DefaultSettings returns the settings used when the client sends none.
func DefaultSettings() Settings {
	return Settings{
		Static:   StaticSettings{Enabled: true},
		Rules:    RulesSettings{Enabled: true},
		Shadow:   ShadowSettings{Mode: ShadowSafe, Timeout: Duration(3 * time.Second), FastDevRun: 3, FullTimeout: Duration(60 * time.Second)},
		Kernel:   KernelSettings{AutoAttach: true},
		Debounce: Duration(300 * time.Millisecond),
		LLM: LLMSettings{
			APIKeyEnv:       "OPENAI_API_KEY",
			Timeout:         Duration(60 * time.Second),
			MaxPromptTokens: 8000,
			Samples:         1,
		},
	}
}

// SettingNames lists every setting key as the VS Code extension names it.
var SettingNames = []string{
	"premortem.static.enabled",
	"premortem.rules.enabled",
	"premortem.shadow.mode",
	"premortem.shadow.timeout",
	"premortem.shadow.fastDevRun",
	"premortem.shadow.fullTimeout",
	"premortem.shadow.sandbox",
	"premortem.shadow.tensors",
	"premortem.kernel.connectionFile",
	"premortem.kernel.autoAttach",
	"premortem.debounce",
	"premortem.llm.enabled",
	"premortem.llm.baseURL",
	"premortem.llm.model",
	"premortem.llm.apiKeyEnv",
	"premortem.llm.timeout",
	"premortem.llm.maxPromptTokens",
	"premortem.llm.samples",
	"premortem.llm.temperature",
	"premortem.llm.sendValues",
}

// ParseSettings reads settings in any of the accepted shapes over the defaults. A null or
// empty input gives the defaults.
func ParseSettings(raw json.RawMessage) (Settings, error) {
	s := DefaultSettings()
	if len(raw) == 0 || string(raw) == "null" {
		return s, nil
	}
	var obj map[string]any
	if err := json.Unmarshal(raw, &obj); err != nil {
		return s, fmt.Errorf("settings are not a JSON object: %w", err)
	}
	if inner, ok := obj["settings"].(map[string]any); ok {
		obj = inner
	}
	obj = expandDotted(obj)
	if inner, ok := obj["premortem"].(map[string]any); ok {
		obj = inner
	}
	data, err := json.Marshal(obj)
	if err != nil {
		return s, fmt.Errorf("settings: %w", err)
	}
	if err := json.Unmarshal(data, &s); err != nil {
		return DefaultSettings(), fmt.Errorf("settings: %w", err)
	}
	if err := s.validate(); err != nil {
		return DefaultSettings(), err
	}
	return s, nil
}

func (s *Settings) validate() error {
	switch s.Shadow.Mode {
	case ShadowOff, ShadowSafe, ShadowAlways:
	case "":
		s.Shadow.Mode = ShadowSafe
	default:
		return fmt.Errorf("premortem.shadow.mode is %q; use off, safe or always", s.Shadow.Mode)
	}
	switch s.Shadow.Sandbox {
	case "", kernelclient.SandboxAuto, kernelclient.SandboxForceFallback:
	default:
		return fmt.Errorf("premortem.shadow.sandbox is %q; use auto or fallback", s.Shadow.Sandbox)
	}
	switch s.Shadow.Tensors {
	case "", facts.TensorsAuto, facts.TensorsMeta, facts.TensorsReal:
	default:
		return fmt.Errorf("premortem.shadow.tensors is %q; use auto, meta or real", s.Shadow.Tensors)
	}
	if s.Debounce < 0 || s.Shadow.Timeout < 0 || s.Shadow.FullTimeout < 0 || s.LLM.Timeout < 0 || s.Shadow.FastDevRun < 0 {
		return fmt.Errorf("premortem durations and premortem.shadow.fastDevRun must not be negative")
	}
	if s.LLM.Samples < 1 {
		s.LLM.Samples = 1
	}
	return nil
}

// expandDotted turns {"premortem.shadow.mode": "off"} into nested objects, merging with
// objects already present.
func expandDotted(obj map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range obj {
		if m, ok := v.(map[string]any); ok {
			v = expandDotted(m)
		}
		parts := strings.Split(k, ".")
		cur := out
		for _, p := range parts[:len(parts)-1] {
			next, ok := cur[p].(map[string]any)
			if !ok {
				next = map[string]any{}
				cur[p] = next
			}
			cur = next
		}
		last := parts[len(parts)-1]
		if m, ok := v.(map[string]any); ok {
			if old, ok := cur[last].(map[string]any); ok {
				for mk, mv := range m {
					old[mk] = mv
				}
				continue
			}
		}
		cur[last] = v
	}
	return out
}

// Duration is a time.Duration that reads from JSON as milliseconds (a number) or a Go
// duration string ("300ms", "3s"), and writes as milliseconds.
type Duration time.Duration

// D returns the value as a time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

// MarshalJSON writes milliseconds.
func (d Duration) MarshalJSON() ([]byte, error) {
	return []byte(strconv.FormatInt(time.Duration(d).Milliseconds(), 10)), nil
}

// UnmarshalJSON accepts milliseconds or a duration string.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	switch v := v.(type) {
	case float64:
		*d = Duration(time.Duration(v * float64(time.Millisecond)))
	case string:
		p, err := time.ParseDuration(v)
		if err != nil {
			return fmt.Errorf("duration %q: %w (use milliseconds or e.g. \"300ms\")", v, err)
		}
		*d = Duration(p)
	case nil:
	default:
		return fmt.Errorf("duration must be milliseconds or a string, not %s", b)
	}
	return nil
}
