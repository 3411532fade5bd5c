// Package lsp is premortem's language server: LSP 3.17 over stdio with notebook document
// sync (VS Code's jupyter-notebook and interactive notebooks) and percent-format .py files.
// It keeps each notebook's model (package notebook), runs the static layer on every change
// and the kernel-backed layers (runtime rules, shadow runs, LLM; package judge) after a
// pause in typing, and publishes diagnostics per cell URI, with hover (where a name was
// defined, its runtime facts), quick fixes, inlay hints from shadow-run traces and the
// premortem.* commands. Handlers are thin: the analysis lives in analysis, judge and
// kernelclient. Serve is the entry point; Settings documents the configuration.
package lsp
