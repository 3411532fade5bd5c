// Package analysis understands notebook cells without running them: per-cell facts from
// tree-sitter Python (definitions, free names, attribute chains, constant subscripts, calls,
// magics, side effects), dataflow across cells in execution order, and the findings model
// every layer reports in. It does no I/O and knows nothing of LSP or kernels; runtime facts
// arrive as package facts values.
package analysis
