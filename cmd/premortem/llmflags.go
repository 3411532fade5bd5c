package main

import (
	"errors"
	"flag"
	"os"
	"time"

	"github.com/premortem/premortem/llm"
)

// llmFlags are the LLM endpoint flags shared by check and eval.
type llmFlags struct {
	enabled                bool
	baseURL, model, keyEnv string
	samples                int
	sendValues             bool
	timeout                time.Duration
}

func (f *llmFlags) register(fs *flag.FlagSet) {
	fs.BoolVar(&f.enabled, "llm", false, "ask the configured LLM endpoint too (sends code and runtime facts to it)")
	fs.StringVar(&f.baseURL, "llm-base-url", os.Getenv("PREMORTEM_LLM_BASE_URL"), "OpenAI-compatible base URL (env PREMORTEM_LLM_BASE_URL)")
	fs.StringVar(&f.model, "llm-model", os.Getenv("PREMORTEM_LLM_MODEL"), "model name (env PREMORTEM_LLM_MODEL)")
	fs.StringVar(&f.keyEnv, "llm-api-key-env", "OPENAI_API_KEY", "name of the environment variable holding the API key")
	fs.IntVar(&f.samples, "llm-samples", 1, "answers per cell, majority vote")
	fs.BoolVar(&f.sendValues, "llm-send-values", false, "send sample values and value ranges to the LLM")
	fs.DurationVar(&f.timeout, "llm-timeout", 60*time.Second, "time limit of one LLM request")
}

func (f *llmFlags) config() llm.Config {
	on := true
	return llm.Config{Enabled: &on, BaseURL: f.baseURL, Model: f.model, APIKeyEnv: f.keyEnv,
		Samples: f.samples, SendValues: f.sendValues, Timeout: f.timeout}
}

func (f *llmFlags) client() (*llm.Client, error) {
	if f.baseURL == "" || f.model == "" {
		return nil, errors.New("set --llm-base-url and --llm-model (or PREMORTEM_LLM_BASE_URL and PREMORTEM_LLM_MODEL)")
	}
	return llm.New(f.config())
}
