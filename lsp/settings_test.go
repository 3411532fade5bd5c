package lsp

import (
	"encoding/json"
	"testing"
	"time"
)

func TestParseSettings(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		check   func(Settings) bool
		wantErr bool
	}{
		{"null gives defaults", `null`, func(s Settings) bool {
			return s.Static.Enabled && s.Rules.Enabled && s.Shadow.Mode == ShadowSafe && s.Debounce.D() == 300*time.Millisecond && s.Kernel.AutoAttach
		}, false},
		{"vscode shape", `{"settings":{"premortem":{"shadow":{"mode":"off","timeout":1500},"debounce":50}}}`, func(s Settings) bool {
			return s.Shadow.Mode == ShadowOff && s.Shadow.Timeout.D() == 1500*time.Millisecond && s.Debounce.D() == 50*time.Millisecond && s.Static.Enabled
		}, false},
		{"bare object", `{"static":{"enabled":false},"kernel":{"connectionFile":"/tmp/k.json"}}`, func(s Settings) bool {
			return !s.Static.Enabled && s.Kernel.ConnectionFile == "/tmp/k.json"
		}, false},
		{"premortem key", `{"premortem":{"rules":{"enabled":false}}}`, func(s Settings) bool { return !s.Rules.Enabled }, false},
		{"dotted keys", `{"premortem.llm.baseURL":"http://localhost:11434/v1","premortem.llm.sendValues":true,"premortem.debounce":"1s"}`, func(s Settings) bool {
			return s.LLM.BaseURL == "http://localhost:11434/v1" && s.LLM.SendValues && s.Debounce.D() == time.Second
		}, false},
		{"bad mode", `{"shadow":{"mode":"sometimes"}}`, nil, true},
		{"fallback sandbox", `{"premortem.shadow.sandbox":"fallback"}`, func(s Settings) bool { return s.Shadow.Sandbox == "fallback" }, false},
		{"bad sandbox", `{"shadow":{"sandbox":"docker"}}`, nil, true},
		{"bad duration", `{"debounce":"soon"}`, nil, true},
		{"not an object", `[1,2]`, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := ParseSettings(json.RawMessage(tt.in))
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, want error %v", err, tt.wantErr)
			}
			if tt.wantErr {
				if s.Shadow.Mode != ShadowSafe {
					t.Errorf("on error the defaults must be returned, got %+v", s)
				}
				return
			}
			if !tt.check(s) {
				t.Errorf("settings %+v do not match", s)
			}
		})
	}
}

// TestSettingNamesMatchStruct keeps SettingNames (what the VS Code extension mirrors)
// in step with the Settings struct: every name must set a field.
func TestSettingNamesMatchStruct(t *testing.T) {
	for _, name := range SettingNames {
		val := any(true)
		switch name {
		case "premortem.static.enabled", "premortem.rules.enabled", "premortem.kernel.autoAttach":
			val = false
		case "premortem.shadow.mode":
			val = "always"
		case "premortem.shadow.sandbox":
			val = "fallback"
		case "premortem.shadow.tensors":
			val = "meta"
		case "premortem.shadow.timeout", "premortem.shadow.fastDevRun", "premortem.shadow.fullTimeout", "premortem.debounce", "premortem.llm.timeout", "premortem.llm.maxPromptTokens", "premortem.llm.samples", "premortem.llm.temperature":
			val = 7
		case "premortem.kernel.connectionFile", "premortem.llm.baseURL", "premortem.llm.model", "premortem.llm.apiKeyEnv":
			val = "x"
		}
		raw, _ := json.Marshal(map[string]any{name: val})
		s, err := ParseSettings(raw)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		def := DefaultSettings()
		a, _ := json.Marshal(s)
		b, _ := json.Marshal(def)
		if string(a) == string(b) {
			t.Errorf("setting %s changed nothing in Settings", name)
		}
	}
}
