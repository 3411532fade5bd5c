// Package analysis understands notebook cells without running them: per-cell facts from
// tree-sitter Python (definitions, free names, attribute chains, constant subscripts, calls,
// magics, side effects), dataflow across cells in execution order, and the static findings.
// The findings model every layer reports in lives in the leaf package finding, with the
// registry of finding codes; analysis re-exports its types as aliases (Finding, Range...)
// for the callers that predate it. It does no I/O and knows nothing of LSP or kernels;
// runtime facts arrive as package facts values.
//
// # Cells
//
// ParseCell (or a Cache, which re-parses incrementally) turns one cell's text into
// CellFacts. IPython syntax is masked first, byte for byte, so offsets stay exact: line
// magics (%matplotlib), shell lines (!pip, x = !ls), help (obj?, ?obj) and the first line
// of cell magics. %%time, %%timeit, %%capture and friends keep a Python body; %%bash,
// %%html, %%writefile and unknown cell magics mask the whole cell. `%time stmt` keeps stmt.
// LineIndex is the one place byte offsets become LSP positions (UTF-16 columns).
//
// Free names are computed top to bottom at module level. A function's body is resolved
// when the cell calls it (against what the cell bound by then); class bodies run at
// definition; comprehension targets stay local; lambda bodies are read as if called.
// Attrs, Subscripts and Calls are recorded for module-level code only: inside a function,
// df is whatever the function is called with.
//
// # Notebooks
//
// Analyzer.Analyze runs the dataflow over a notebook in execution order (see Options and
// the comment at the top of dataflow.go for how cells that have not run are judged) and
// produces the static findings: undefined-name (error, NameError), not-run-definition
// (warning: defined only by a cell above that has not run), stale-definition (warning:
// page order and execution order disagree) and syntax-error. Calls of functions that
// executed cells defined are checked too: the globals those bodies read (CellFacts
// Functions) must exist when the call runs. Flow answers where a name comes from and which
// executed cells a cell depends on.
//
// A pass starts from the previous one (incremental.go): only edited cells are re-parsed,
// only the sites of the names they bind are rebuilt, and only cells whose judgement read
// something that changed are judged again; the result equals a pass from scratch.
//
// # Bounds
//
// One cell cannot exhaust the server (limits.go): a cell over MaxCellBytes is not parsed
// (it counts as defining anything, like a star import), more than 200 nested brackets is
// Python's own "too many nested parentheses" SyntaxError, and syntax trees are walked
// 1,000 levels deep, a deeper subtree being opaque. Each bound leaves a Limit in the
// cell's facts, an info finding (not-analysed) naming the line, and a line for
// Options.Log naming the cell.
//
// # Scenario tests
//
// Files testdata/scenarios/static/*.txtar (from the repository root) are notebooks with
// their expected findings. The txtar comment is prose. Each section is a cell, in page
// order:
//
//	-- cell run=3 --     a code cell whose last run had execution count 3
//	-- cell --           a code cell that has not run (a word such as "2" may be added)
//	-- cell lang=r --    a code cell in another language (skipped)
//	-- markdown --       a markdown cell (skipped, but counted in cell numbers)
//	-- namespace --      whitespace-separated names of the kernel namespace (Options.Namespace)
//
// Cells get IDs cell-0, cell-1, ... A finding is expected with a marker line under the
// line it is about:
//
//	print(tf_idf)
//	#     ^^^^^^ undefined-name error "name 'tf_idf' is not defined"
//
// The carets give the range on the line above (their byte columns in the ASCII marker line
// are the UTF-16 columns of the range; a marker starting with ^ marks column 0), then the
// code, the severity and a substring of the message. Marker lines are removed from the cell
// before analysis (internal/testkit/markers parses them, for the rules scenarios too). The
// findings of the notebook must match its markers exactly, every finding must carry a
// source, a message and evidence, and its code must be registered for the static layer.
// Every static code is expected by some scenario NAME.txtar whose twin NAME_ok.txtar, the
// nearby correct notebook, does not produce it (TestEveryStaticCodeHasScenarios).
package analysis
