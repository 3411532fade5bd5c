// Package repair proposes candidate fixes for a predicted crash: edits to the cell (or to
// the earlier cell where the root cause is) that keep what the cell means to do and make it
// run. It is pure: it reads the crash finding, the cell's text and static facts, the
// runtime facts the kernel inspector gave and the executed history, and returns candidates.
// It never runs anything; package judge shadow-runs each candidate in a forked copy of the
// kernel and offers only those that run clean as verified.
//
// The library is data-driven, one file per family, as the rules are: missing names
// (missing.go: columns, keys, attributes, names, by spelling, case, merge suffixes and
// renames in the history), imports (imports.go: a table of conventional aliases), not
// fitted (notfitted.go), shapes and feature counts (shape.go; fitcolumns.go: a split
// one-hot encoded alone, a selection with fewer of the fit columns), dtypes and devices
// (dtype.go), text or NaN into an estimator (estimator.go), solver and penalty
// combinations (params.go), drops already made (removal.go) and call shapes (callshape.go:
// keywords renamed between library versions, inplace misuse); the families that read what
// a call needed from the exception message alone, so a crash only the shadow run found is
// repaired too: a 1-D X as one sample or one feature by the model's n_features_in_ against
// the array's length (samples.go), a tensor detached (and copied to the CPU) before NumPy
// (detach.go), a product's operand transposed by the shapes the message names
// (product.go), the axis a concatenation (np.concatenate, hstack, vstack, torch.cat) can
// join along (concat.go), .view made .reshape on a tensor that is not contiguous (view.go)
// and a name whose words an existing name has in another order (wordnames.go); and the
// families that read the repair off the exception's own words, tried first at the crash
// line and ranked above guesses when verified: a value the message lists in place of the
// literal it quotes (options.go: solver='libliner' is 'liblinear') and the spelling it
// says to use for an expression it quotes (saysuse.go: NumPy's np.float is float or
// np.float64); the general operators, which the exception kind and the state choose and
// which edit the syntax tree: text numbers converted (numberops.go), / made // where an
// integer is needed (intoperand.go), a global declaration (globaldecl.go), a helper's
// missing return (noreturn.go), loops over dicts and past the end (loopshape.go), a
// method called on its class (classcall.go), syntax slips (syntaxedit.go), dimensions
// inferred or shifted (dims.go), the .str and .dt accessors (accessor.go), axis=1
// (axiskw.go), a column by the frame's own spelling (datacolumn.go), labels for
// probabilities (predictlabels.go), a subplot grid read flat (axesgrid.go), element-wise
// masks (masks.go), the device chosen by the machine (device.go) and rows by position
// (position.go); the
// notebook-order families: an undefined name whose binding is copied from the cell that
// binds it and has not run (define.go, a backward slice down to what the kernel holds),
// one a function or method of the history returns (returned.go), a model's undefined
// predictions (predictions.go), a variable a later cell reused for another object
// (overwritten.go) and a deletion run twice (deltwice.go). Diff turns a composed fix into
// line edits. A family registers itself with register in its file's init; Candidates asks
// every family and drops any candidate that would not keep the cell's intent (see
// IntentKept, which reads code on the syntax tree: guard.go); after a candidate's clean run, TypeChange refuses one that changed the kind
// of what a name the edited cell binds holds.
package repair
