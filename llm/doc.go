// Package llm is premortem's fourth layer, after the CRANE-LLM approach (arXiv 2602.18537):
// it asks an OpenAI-compatible chat endpoint whether a notebook cell will crash, given the
// executed cells the target depends on, the runtime facts of the names it uses, the target
// cell with line numbers and the evidence the cheaper layers found. The model answers with
// step-by-step reasoning and a JSON verdict (crash, line, exception, explanation, fix) that
// becomes analysis findings with Source llm.
//
// Nothing leaves the machine unless an endpoint is configured; API keys are read from an
// environment variable named in the configuration, never stored in settings or logs; secrets
// in cell text are redacted and value samples withheld (Config.SendValues) before sending.
// Fixes are text edits for the user to apply: nothing the model says is ever executed.
package llm
