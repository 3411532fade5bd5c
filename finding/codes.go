package finding

// The registry of finding codes. Every code a layer emits is a constant here and an entry
// of Registry, with the exceptions it predicts, the layers that emit it, a summary and a
// paragraph for docs/rules.md. A finding's Code stays a plain string (the JSON and LSP
// contract); the constants are untyped so that any layer can use them as such.
//
// Adding a code: a constant below, an entry in Registry, then `go generate ./finding` to
// rewrite docs/rules.md, and for a static or rules code a scenario that shows it and its
// `_ok` twin (testdata/scenarios/static, testdata/scenarios/rules). The tests of this
// package, analysis and analysis/rules fail until all of that is done.

// Codes of the static layer.
const (
	UndefinedName    = "undefined-name"
	NotRunDefinition = "not-run-definition"
	StaleDefinition  = "stale-definition"
	SyntaxError      = "syntax-error"
	NotAnalysed      = "not-analysed"
)

// Codes of the rules layer (analysis/rules), in alphabetical order.
const (
	Input1D              = "1d-input"
	AxisOutOfRange       = "axis-out-of-range"
	BroadcastShape       = "broadcast-shape"
	ConcatShape          = "concat-shape"
	ContinuousTarget     = "continuous-target"
	ConvInChannels       = "conv-in-channels"
	DeviceMismatch       = "device-mismatch"
	DropInLoop           = "drop-in-loop"
	DtypeMismatch        = "dtype-mismatch"
	EmptyInput           = "empty-input"
	FeatureCountMismatch = "feature-count-mismatch"
	FeatureNamesMismatch = "feature-names-mismatch"
	ImageShape           = "image-shape"
	IndexOutOfRange      = "index-out-of-range"
	InvalidIndex         = "invalid-index"
	InvalidParam         = "invalid-param"
	LenOfScalar          = "len-of-scalar"
	LengthMismatch       = "length-mismatch"
	LinearInFeatures     = "linear-in-features"
	LossTarget           = "loss-target"
	MatmulShape          = "matmul-shape"
	MissingAttribute     = "missing-attribute"
	MissingColumn        = "missing-column"
	MissingKey           = "missing-key"
	NaNInput             = "nan-input"
	NaNToInt             = "nan-to-int"
	NdimMismatch         = "ndim-mismatch"
	NoPredictProba       = "no-predict-proba"
	NonScalar            = "non-scalar"
	NoneAttribute        = "none-attribute"
	NoneCall             = "none-call"
	NoneSubscript        = "none-subscript"
	NotCallable          = "not-callable"
	NotFitted            = "not-fitted"
	NotIterable          = "not-iterable"
	NotSubscriptable     = "not-subscriptable"
	ObjectColumnArith    = "object-column-arith"
	OverwrittenName      = "overwritten-name"
	PlotOrientation      = "plot-orientation"
	PositionalArgs       = "positional-args"
	ReshapeSize          = "reshape-size"
	ScalarConversion     = "scalar-conversion"
	StaleState           = "stale-state"
	StrAccessor          = "str-accessor"
	StrConcat            = "str-concat"
	StringInput          = "string-input"
	TargetTypeMismatch   = "target-type-mismatch"
	UnseenLabel          = "unseen-label"
	ViewNonContiguous    = "view-non-contiguous"
)

// Codes only the shadow and LLM layers emit. A shadow run's crash is coded after its
// exception instead (see ShadowCodes).
const (
	OutcomeUnknown    = "outcome-unknown"
	LLMPredictedCrash = "llm-predicted-crash"
)

// ShadowCodes says how a shadow run's crash is coded; docs/rules.md prints it.
const ShadowCodes = "A crash a shadow run observed is coded after its exception, in kebab case " +
	"(`KeyError` is `key-error`, `ValueError` is `value-error`), except `NameError`, coded " +
	"`undefined-name`, and `NotFittedError`, coded `not-fitted`, so that the same crash has " +
	"the same code whichever layer saw it."

// Rule documents one finding code.
type Rule struct {
	// Code is the stable identifier findings carry.
	Code string
	// Layers are the layers that emit the code, cheapest first.
	Layers []Source
	// Exceptions are the Python exceptions a finding of this code predicts. A finding
	// may carry none of them when it predicts no crash of its own (a warning, a hint).
	Exceptions []string
	// Summary is one line: what the code says.
	Summary string
	// Doc is a paragraph for docs/rules.md: when the code is reported, what it rests on,
	// and how to fix the cell.
	Doc string
	// NoScenario, set only for codes no static or rules scenario can show, says why.
	NoScenario string
}

// Lookup returns the rule registered for code.
func Lookup(code string) (Rule, bool) {
	for _, r := range Registry {
		if r.Code == code {
			return r, true
		}
	}
	return Rule{}, false
}

// Has reports whether the rule is emitted by layer.
func (r Rule) Has(layer Source) bool {
	for _, l := range r.Layers {
		if l == layer {
			return true
		}
	}
	return false
}

var (
	static      = []Source{SourceStatic}
	rulesLayer  = []Source{SourceRules}
	withShadow  = []Source{SourceRules, SourceShadow}
	shadowLayer = []Source{SourceShadow}
	llmLayer    = []Source{SourceLLM}
)

// Registry lists every finding code, static codes first, then the rules' in alphabetical
// order, then the codes of the shadow and LLM layers.
var Registry = []Rule{
	{
		Code: UndefinedName, Layers: []Source{SourceStatic, SourceRules, SourceShadow}, Exceptions: []string{"NameError"},
		Summary: "a name the cell reads is defined nowhere it could come from",
		Doc: "The static layer reports a name that no executed cell, no cell above and no binding " +
			"earlier in the cell defines (including globals read by a function the cell calls). " +
			"The rules layer reports a name the kernel does not hold, or one the cell deleted " +
			"with `del` before reading it. The fix is the defining cell run first, the name " +
			"spelled as the kernel has it (a did-you-mean fix), or the usual import.",
	},
	{
		Code: NotRunDefinition, Layers: static, Exceptions: []string{"NameError"},
		Summary: "the name is defined only by a cell above that has not run",
		Doc: "A warning: the cell reads a name that only a cell that has not run yet defines. " +
			"Run that cell first; run in page order the notebook works.",
	},
	{
		Code: StaleDefinition, Layers: static,
		Summary: "page order and execution order disagree about where a name comes from",
		Doc: "A warning that predicts no crash of its own: the kernel's value of the name comes " +
			"from another cell than the one nearest above that defines it (the notebook ran out " +
			"of page order), or a cell above re-bound the name after this cell read it, so what " +
			"this cell showed is stale. A notebook run top to bottom never triggers it.",
	},
	{
		Code: SyntaxError, Layers: static, Exceptions: []string{"SyntaxError"},
		Summary: "the cell does not parse",
		Doc: "tree-sitter found a syntax error (or more than 200 nested brackets, which is " +
			"Python's own \"too many nested parentheses\"). The range is the first error.",
	},
	{
		Code: NotAnalysed, Layers: static,
		Summary: "a cell, or part of one, is beyond an analysis bound",
		Doc: "Information: the cell is over the size bound and was not parsed, the cell ends past " +
			"the notebook's bound (the first 512 KB of its code, in page order, are analysed) and " +
			"was not parsed, or a subtree is deeper than the walk's depth bound and was read as " +
			"opaque. Nothing is predicted about what was skipped.",
	},
	{
		Code: Input1D, Layers: rulesLayer, Exceptions: []string{"ValueError"},
		Summary: "a 1-D array or Series is passed where an estimator expects 2-D X",
		Doc: "scikit-learn estimators take X as samples × features; a single column (`df['Age']`) " +
			"raises \"Expected 2D array, got 1D array instead\". Select the column as a frame " +
			"(`df[['Age']]`) or reshape with `.reshape(-1, 1)`.",
	},
	{
		Code: AxisOutOfRange, Layers: rulesLayer, Exceptions: []string{"AxisError", "IndexError"},
		Summary: "an axis or dim argument is beyond the array's number of dimensions",
		Doc: "`arr.sum(axis=2)` on a 2-D array raises numpy's AxisError; a tensor's `dim` out of " +
			"range raises IndexError. The array's shape comes from the kernel.",
	},
	{
		Code: BroadcastShape, Layers: rulesLayer, Exceptions: []string{"ValueError", "RuntimeError"},
		Summary: "two operands' shapes do not broadcast",
		Doc: "An elementwise operation between arrays (ValueError) or tensors (RuntimeError) whose " +
			"shapes differ in a dimension where neither is 1. Shapes are propagated through the " +
			"cell's reductions, reshapes and transposes.",
	},
	{
		Code: ConcatShape, Layers: rulesLayer, Exceptions: []string{"ValueError"},
		Summary: "arrays joined by concatenate/stack disagree in shape, or one is a scalar",
		Doc: "`np.concatenate` needs arrays with the same number of dimensions and equal sizes " +
			"off the joined axis; zero-dimensional values cannot be concatenated at all.",
	},
	{
		Code: ContinuousTarget, Layers: rulesLayer, Exceptions: []string{"ValueError"},
		Summary: "continuous values are given where class labels are needed",
		Doc: "A classifier fitted on a float target (\"Unknown label type: 'continuous'\"), or a " +
			"classification metric given continuous predictions. Use a regressor, bin the " +
			"target, or threshold the predictions.",
	},
	{
		Code: ConvInChannels, Layers: rulesLayer, Exceptions: []string{"RuntimeError"},
		Summary: "a Conv layer's in_channels differs from the input's channel dimension",
		Doc: "The module's first convolution expects `in_channels` channels at dimension 1 of the " +
			"input (N, C, H, W); images loaded channels-last put them at the end. Permute the " +
			"input or change the layer. Inside a custom module with its own forward() the " +
			"finding is an information hint, since forward may reshape the input first.",
	},
	{
		Code: DeviceMismatch, Layers: rulesLayer, Exceptions: []string{"RuntimeError", "TypeError"},
		Summary: "tensors or a model and its input are on different devices",
		Doc: "A model on cuda called on a CPU batch, two tensors on different devices in one " +
			"operation (RuntimeError), or `.numpy()` on a cuda tensor (TypeError). The fix " +
			"moves the input with `.to(device)` or the tensor with `.cpu()`.",
	},
	{
		Code: DropInLoop, Layers: rulesLayer, Exceptions: []string{"KeyError"},
		Summary: "a constant column is dropped inside a loop that runs more than once",
		Doc: "The first iteration removes the column and the second raises KeyError (not found " +
			"in axis). An error when the kernel says how often the loop runs, a warning " +
			"otherwise. Move the drop out of the loop.",
	},
	{
		Code: DtypeMismatch, Layers: rulesLayer, Exceptions: []string{"RuntimeError", "TypeError"},
		Summary: "a tensor's dtype differs from what the layer or operation needs",
		Doc: "Typically a float64 tensor (from numpy) fed to float32 weights (\"mat1 and mat2 must " +
			"have the same dtype\"), or an integer tensor where floats are needed. Convert with " +
			"`.float()` or build the tensor with `dtype=torch.float32`.",
	},
	{
		Code: EmptyInput, Layers: rulesLayer, Exceptions: []string{"ValueError"},
		Summary: "an estimator or train_test_split gets no rows",
		Doc: "The frame or array the kernel holds (or the cell's filtering leaves) has zero rows: " +
			"\"Found array with 0 sample(s)\".",
	},
	{
		Code: FeatureCountMismatch, Layers: rulesLayer, Exceptions: []string{"ValueError"},
		Summary: "a fitted estimator gets X with a different number of features",
		Doc: "The estimator was fitted on `n_features_in_` columns and predict/transform/score " +
			"gets another number, often after one-hot encoding train and test separately. " +
			"Align the columns (`reindex(columns=...)`) or encode both together.",
	},
	{
		Code: FeatureNamesMismatch, Layers: rulesLayer, Exceptions: []string{"ValueError"},
		Summary: "a fitted estimator gets columns with other names or in another order",
		Doc: "scikit-learn compares `feature_names_in_` with the frame's columns; the same names " +
			"in another order, or different names, raise. The fix reorders the frame to the " +
			"fitted columns.",
	},
	{
		Code: ImageShape, Layers: rulesLayer, Exceptions: []string{"TypeError"},
		Summary: "imshow gets an array that is not an image",
		Doc: "matplotlib's imshow takes (H, W) or (H, W, 3|4). A channels-first image (3, H, W) " +
			"gets a fix that moves the channels last.",
	},
	{
		Code: IndexOutOfRange, Layers: rulesLayer, Exceptions: []string{"IndexError"},
		Summary: "a constant index is past the end of a list, array, tensor, frame or Embedding",
		Doc: "The index is compared with the length the kernel reports: a list, a numpy or torch " +
			"dimension, `iloc` rows or columns, or an Embedding's `num_embeddings`.",
	},
	{
		Code: InvalidIndex, Layers: rulesLayer, Exceptions: []string{"IndexError"},
		Summary: "a numpy array is indexed with a string",
		Doc: "Only integers, slices, ellipsis, newaxis and integer or boolean arrays index a numpy " +
			"array; a column name does not (the value is an array, not a DataFrame, often after " +
			"a scaler's fit_transform).",
	},
	{
		Code: InvalidParam, Layers: rulesLayer, Exceptions: []string{"ValueError"},
		Summary: "a library call gets a parameter value it rejects",
		Doc: "A parameter combination the library refuses at fit or call time: a " +
			"LogisticRegression penalty its solver does not support, statsmodels' qqplot " +
			"`line` given a number. The message names a value that works; qqplot's line gets " +
			"the quoted value as a fix.",
	},
	{
		Code: LenOfScalar, Layers: rulesLayer, Exceptions: []string{"TypeError"},
		Summary: "len() of an int, float or other value without a length",
		Doc:     "`len(n)` where the kernel holds a number raises \"object of type 'int' has no len()\".",
	},
	{
		Code: LengthMismatch, Layers: rulesLayer, Exceptions: []string{"ValueError"},
		Summary: "two sequences that must be as long as each other are not",
		Doc: "A column assigned from a list of another length (\"Length of values does not match " +
			"length of index\"), or X and y with different numbers of samples in fit or a " +
			"metric (\"Found input variables with inconsistent numbers of samples\").",
	},
	{
		Code: LinearInFeatures, Layers: rulesLayer, Exceptions: []string{"RuntimeError"},
		Summary: "a Linear (or BatchNorm, LSTM) layer's input size differs from the data's",
		Doc: "The first layer that fixes a feature size (`in_features`, `num_features`, " +
			"`input_size`) does not match the last dimension of the input, or a later layer of " +
			"a Sequential does not match the one before. When the cell builds the layer with a " +
			"constant size, the fix sets it to the data's. Inside a custom module with its own " +
			"forward() the finding is an information hint.",
	},
	{
		Code: LossTarget, Layers: rulesLayer, Exceptions: []string{"RuntimeError", "ValueError"},
		Summary: "a loss gets a target of the wrong shape, dtype or batch size",
		Doc: "CrossEntropyLoss and NLLLoss want int64 class indices, one per sample (a 1-D " +
			"target for a 2-D input); BCE losses want float targets of the input's shape; every " +
			"loss wants the same batch size as the input.",
	},
	{
		Code: MatmulShape, Layers: rulesLayer, Exceptions: []string{"ValueError", "RuntimeError"},
		Summary: "the inner dimensions of a matrix product differ",
		Doc: "`a @ b`, `np.dot` or `torch.matmul` where the last dimension of `a` differs from " +
			"the first (or second to last) of `b`.",
	},
	{
		Code: MissingAttribute, Layers: rulesLayer, Exceptions: []string{"AttributeError"},
		Summary: "an attribute the object does not have",
		Doc: "The inspector found the attribute chain missing (`df.sort`, removed from pandas; " +
			"`model.predict_classes` on a scikit-learn model), or the attribute is not among the " +
			"object's attributes as the kernel lists them or as the tables of known pandas, " +
			"numpy and torch attributes have them. A close name is offered as a fix.",
	},
	{
		Code: MissingColumn, Layers: rulesLayer, Exceptions: []string{"KeyError", "AttributeError"},
		Summary: "a column the frame does not have",
		Doc: "A column read by subscript, `.loc`, `df.name`, `drop`, `groupby`, `sort_values`, " +
			"`merge(on=...)` and friends is not among the frame's columns, as the kernel reports " +
			"them and as the cell changes them line by line (drop, rename, get_dummies, " +
			"assignment). A close name (case, spaces, a typo) is offered as a fix.",
	},
	{
		Code: MissingKey, Layers: rulesLayer, Exceptions: []string{"KeyError"},
		Summary: "a dict key or index label that is not there",
		Doc: "A constant key missing from a dict the kernel holds, or a row label missing from a " +
			"frame's index (`drop(index=...)`, `drop` of a label on axis 0).",
	},
	{
		Code: NaNInput, Layers: rulesLayer, Exceptions: []string{"ValueError"},
		Summary: "an estimator that rejects missing values gets NaN",
		Doc: "X or y holds NaN (the kernel counts nulls per column) and the estimator does not " +
			"accept missing values: \"Input X contains NaN\". Impute or drop them first.",
	},
	{
		Code: NaNToInt, Layers: rulesLayer, Exceptions: []string{"IntCastingNaNError"},
		Summary: "astype(int) of a column with missing values",
		Doc: "pandas cannot convert NaN to an integer: fill the missing values first, or use the " +
			"nullable `Int64` dtype.",
	},
	{
		Code: NdimMismatch, Layers: rulesLayer, Exceptions: []string{"ValueError"},
		Summary: "an array has a number of dimensions the call does not take",
		Doc: "A 3-D or higher array given to an estimator (which wants samples × features), or " +
			"to `np.savetxt` (which writes 1-D or 2-D arrays).",
	},
	{
		Code: NoPredictProba, Layers: rulesLayer, Exceptions: []string{"AttributeError"},
		Summary: "predict_proba on an estimator that does not have it",
		Doc: "The estimator's methods, as the kernel lists them, lack predict_proba or " +
			"predict_log_proba (SVC without `probability=True`, a regressor). `predict` is " +
			"offered.",
	},
	{
		Code: NonScalar, Layers: rulesLayer, Exceptions: []string{"RuntimeError", "ValueError"},
		Summary: "backward() or item() on a tensor with more than one element",
		Doc: "`backward()` without a gradient needs a scalar output (reduce it first, e.g. " +
			"`.mean()`); `.item()` needs exactly one element.",
	},
	{
		Code: NoneAttribute, Layers: rulesLayer, Exceptions: []string{"AttributeError"},
		Summary: "an attribute of a value that is None",
		Doc: "The value is None in the kernel, or the cell made it None (an in-place pandas " +
			"method's result assigned back: `df = df.drop(..., inplace=True)`).",
	},
	{
		Code: NoneCall, Layers: rulesLayer, Exceptions: []string{"TypeError"},
		Summary: "a call of a value that is None",
		Doc: "\"'NoneType' object is not callable\": the name holds None, often the result of an " +
			"in-place method or a function without a return.",
	},
	{
		Code: NoneSubscript, Layers: rulesLayer, Exceptions: []string{"TypeError"},
		Summary: "a subscript of a value that is None",
		Doc: "\"'NoneType' object is not subscriptable\", typically `df = df.dropna(inplace=True)` " +
			"followed by `df['col']`.",
	},
	{
		Code: NotCallable, Layers: rulesLayer, Exceptions: []string{"TypeError"},
		Summary: "a call of a value that is not callable",
		Doc: "A DataFrame, an attribute such as `df.shape`, or a builtin's name rebound to a " +
			"value (`list = [...]`, then `list(x)`) called like a function.",
	},
	{
		Code: NotFitted, Layers: withShadow, Exceptions: []string{"NotFittedError", "AttributeError"},
		Summary: "an estimator is used before it is fitted",
		Doc: "predict, transform or score on an estimator the kernel reports unfitted (and the cell " +
			"does not fit first) raises NotFittedError; reading a fitted attribute such as " +
			"`coef_` raises AttributeError. When the notebook's training data is known (X_train " +
			"and y_train, or X and y, of one length), the fix fits the estimator first.",
	},
	{
		Code: NotIterable, Layers: rulesLayer, Exceptions: []string{"TypeError"},
		Summary: "a for loop over a value that is not iterable",
		Doc:     "`for i in n:` where n is an int or float; `range(n)` is usually meant.",
	},
	{
		Code: NotSubscriptable, Layers: rulesLayer, Exceptions: []string{"TypeError"},
		Summary: "a subscript of a number or other value without items",
		Doc: "\"'int' object is not subscriptable\": the name holds a scalar, not the sequence the " +
			"cell expects.",
	},
	{
		Code: ObjectColumnArith, Layers: rulesLayer, Exceptions: []string{"TypeError", "ValueError"},
		Summary: "arithmetic, a numeric reduction or a cast on text values",
		Doc: "A column or array of strings (dtype object) used in arithmetic, `mean`, `astype(int)` " +
			"or `astype(float)`, which raises when the strings are not numbers. Convert with " +
			"`pd.to_numeric` or encode the column first.",
	},
	{
		Code: OverwrittenName, Layers: rulesLayer,
		Summary: "a name now holds what a cell below gave it",
		Doc: "A warning that accompanies another finding: the name the crash rests on was last " +
			"bound by a cell below this one (the notebook ran out of page order), so it no " +
			"longer holds what this cell was written against. It predicts no crash of its own.",
	},
	{
		Code: PlotOrientation, Layers: rulesLayer, Exceptions: []string{"TypeError"},
		Summary: "a seaborn categorical plot gets only a categorical axis",
		Doc: "boxplot, violinplot, barplot and friends need a numeric variable on one axis; with " +
			"only a text column they raise. Pass the numeric column as the other axis, or use " +
			"countplot.",
	},
	{
		Code: PositionalArgs, Layers: rulesLayer, Exceptions: []string{"TypeError"},
		Summary: "a seaborn function gets x and y positionally",
		Doc:     "seaborn 0.12 takes only `data` positionally: pass `x=...`, `y=...` by keyword.",
	},
	{
		Code: ReshapeSize, Layers: rulesLayer, Exceptions: []string{"ValueError", "RuntimeError"},
		Summary: "reshape or view to a shape with another number of elements",
		Doc: "The array's (or tensor's) size, from the kernel and propagated through the cell, " +
			"cannot be arranged as the requested shape.",
	},
	{
		Code: ScalarConversion, Layers: rulesLayer, Exceptions: []string{"TypeError"},
		Summary: "float() or int() of a Series with more than one value",
		Doc: "\"cannot convert the series to <class 'float'>\": select one value first " +
			"(`.iloc[0]`, `.item()`) or reduce the Series.",
	},
	{
		Code: StaleState, Layers: rulesLayer, Exceptions: []string{"KeyError"},
		Summary: "a column an earlier run of the cell already removed",
		Doc: "Like missing-column, but the column is gone because the cell (which rebinds the " +
			"frame) already ran once: re-running it fails. Re-create the frame first or make " +
			"the cell safe to re-run (`drop(..., errors='ignore')`).",
	},
	{
		Code: StrAccessor, Layers: rulesLayer, Exceptions: []string{"AttributeError"},
		Summary: ".str on a column that does not hold strings",
		Doc: "\"Can only use .str accessor with string values\": the column is numeric, or " +
			"`.str` is applied to the result of a `.str` method that is not text.",
	},
	{
		Code: StrConcat, Layers: rulesLayer, Exceptions: []string{"TypeError"},
		Summary: "a string concatenated with a number",
		Doc:     "`'n = ' + n` with n a number: convert it with `str()` or use an f-string.",
	},
	{
		Code: StringInput, Layers: rulesLayer, Exceptions: []string{"ValueError"},
		Summary: "an estimator gets text where it needs numbers",
		Doc: "X holds strings (\"could not convert string to float\"): encode them first " +
			"(get_dummies, OneHotEncoder, LabelEncoder). A warning when the array is of dtype " +
			"object without a known sample.",
	},
	{
		Code: TargetTypeMismatch, Layers: rulesLayer, Exceptions: []string{"ValueError"},
		Summary: "a classification metric gets targets of different kinds",
		Doc: "One argument is 1-D labels and the other 2-D (probabilities from predict_proba, " +
			"one-hot labels): \"Classification metrics can't handle a mix of ... targets\".",
	},
	{
		Code: UnseenLabel, Layers: rulesLayer, Exceptions: []string{"ValueError"},
		Summary: "a LabelEncoder transforms labels it was not fitted on",
		Doc: "The values the kernel reports include labels missing from the encoder's " +
			"`classes_`: \"y contains previously unseen labels\".",
	},
	{
		Code: ViewNonContiguous, Layers: rulesLayer, Exceptions: []string{"RuntimeError"},
		Summary: ".view() of a tensor that is not contiguous",
		Doc: "After a transpose or permute a tensor's memory is not contiguous and `.view()` " +
			"fails; use `.reshape()` or call `.contiguous()` first.",
	},
	{
		Code: OutcomeUnknown, Layers: shadowLayer,
		Summary: "a shadow run could not tell whether the cell crashes",
		Doc: "Information: the shadow run timed out, was refused by the sandbox, needed the " +
			"network, or was cut short; the message gives the reason. It predicts nothing.",
		NoScenario: "emitted by the editor (lsp) from a shadow run's outcome, never from a " +
			"cell's text and facts; lsp's shadow tests cover it",
	},
	{
		Code: LLMPredictedCrash, Layers: llmLayer,
		Summary: "the configured LLM predicts a crash",
		Doc: "A warning from the LLM layer (CRANE-LLM), with the model's explanation and, when " +
			"it gave one, a fix; only sent when an endpoint is configured.",
		NoScenario: "emitted only from a model's answer (llm.Verdict.Findings), which llm's " +
			"tests cover with fixed answers",
	},
}
