// Package facts is the schema of what premortem learns from a live kernel: the runtime facts
// of named values (CRANE-LLM's structural, type and value categories) and the outcome of a
// shadow run. It is a leaf package so that the producer (kernelclient, whose embedded Python
// inspector emits exactly this JSON) and the consumers (analysis/rules, llm, lsp)
// share one definition without depending on each other.
//
// Every field is optional: the inspector fills what it could learn within its budget, and an
// absent field means "unknown", never "zero". Rules must treat nil pointers and empty slices
// as unknown.
package facts

// Value is what the inspector knows about one name (or attribute chain) in the kernel.
type Value struct {
	// Name is the expression inspected, as asked: "df", "model.predict", "df.Age".
	Name string `json:"name"`
	// Exists is false when the name is not bound in the user namespace (or the attribute
	// does not exist on the resolved object). Then only Name, Exists and Error are set.
	Exists bool `json:"exists"`
	// Error says why facts are missing or partial (the object's __len__ raised, budget ran
	// out, ...). A fact-gathering error never means the name is missing.
	Error string `json:"error,omitempty"`

	// Type is the fully qualified type, e.g. "pandas.core.frame.DataFrame".
	Type string `json:"type,omitempty"`
	// Kind is a coarse family the rules switch on: one of the Kind* constants.
	Kind string `json:"kind,omitempty"`

	// --- structural ---
	Shape []int `json:"shape,omitempty"`
	Ndim  *int  `json:"ndim,omitempty"`
	Len   *int  `json:"len,omitempty"`
	Size  *int  `json:"size,omitempty"`

	// --- type / representation ---
	Dtype        string   `json:"dtype,omitempty"`
	Columns      []Column `json:"columns,omitempty"`
	Index        *Index   `json:"index,omitempty"`
	Device       string   `json:"device,omitempty"`
	RequiresGrad *bool    `json:"requires_grad,omitempty"`
	Contiguous   *bool    `json:"contiguous,omitempty"`
	Layout       string   `json:"layout,omitempty"`
	// Module describes a torch nn.Module (or Keras model): class, parameters, layers.
	Module *Module `json:"module,omitempty"`
	// Estimator describes a scikit-learn estimator or Pipeline.
	Estimator *Estimator `json:"estimator,omitempty"`
	// Loader describes a torch DataLoader or Dataset.
	Loader *Loader `json:"loader,omitempty"`
	// ElementTypes lists the distinct element types of a list/tuple/set sample.
	ElementTypes []string `json:"element_types,omitempty"`
	// Keys is a sample of a dict's keys (JSON-safe reprs for non-string keys), KeysComplete
	// says whether it is all of them (so a missing constant key is certain).
	Keys         []any `json:"keys,omitempty"`
	KeysComplete bool  `json:"keys_complete,omitempty"`
	// Signature of a callable, e.g. "(x, y=1)".
	Signature string `json:"signature,omitempty"`
	// Attributes lists attribute names known on the object when the set is small and
	// complete (plain classes, modules); AttributesComplete tells if it is all of them.
	Attributes         []string `json:"attributes,omitempty"`
	AttributesComplete bool     `json:"attributes_complete,omitempty"`
	// Dynamic is true when the object's type provides attributes at run time (its own or a
	// library base class's __getattr__/__getattribute__, a lazy module): an attribute absent
	// from every static lookup may still exist, so absence proves nothing ("cannot tell").
	Dynamic bool `json:"dynamic,omitempty"`
	// Callable is true when the value can be called.
	Callable *bool `json:"callable,omitempty"`

	// --- value semantics (withheld when the caller asks for no values) ---
	Min     *float64 `json:"min,omitempty"`
	Max     *float64 `json:"max,omitempty"`
	HasNaN  *bool    `json:"has_nan,omitempty"`
	HasInf  *bool    `json:"has_inf,omitempty"`
	NUnique *int     `json:"n_unique,omitempty"`
	// Sample holds a few JSON-safe sample values; Repr a short, truncated repr.
	Sample []any  `json:"sample,omitempty"`
	Repr   string `json:"repr,omitempty"`
	// Sampled is true when value facts were computed on a sample, not the whole object.
	Sampled bool `json:"sampled,omitempty"`
}

// Kinds of values the rules distinguish.
const (
	KindNone        = "none"
	KindBool        = "bool"
	KindInt         = "int"
	KindFloat       = "float"
	KindStr         = "str"
	KindList        = "list"
	KindTuple       = "tuple"
	KindDict        = "dict"
	KindSet         = "set"
	KindNDArray     = "ndarray"
	KindNumpyScalar = "numpy_scalar"
	KindDataFrame   = "dataframe"
	KindSeries      = "series"
	KindIndex       = "index"
	KindGroupBy     = "groupby"
	KindTensor      = "tensor"
	KindModule      = "nn_module"
	KindDataLoader  = "dataloader"
	KindDataset     = "dataset"
	KindEstimator   = "estimator"
	KindSparse      = "sparse"
	KindTFTensor    = "tf_tensor"
	KindKerasModel  = "keras_model"
	KindImage       = "image"
	KindCallable    = "callable"
	KindClass       = "class"
	KindPyModule    = "module"
	KindOther       = "other"
)

// Column is one DataFrame column (or the Series itself).
type Column struct {
	// Name is the column label as JSON: a string for string labels, a number otherwise.
	Name  any    `json:"name"`
	Dtype string `json:"dtype"`
	// Nulls is the number of missing values (on the sample when Value.Sampled).
	Nulls *int `json:"nulls,omitempty"`
	// NonNumericSample holds a few values of an object column that do not parse as numbers
	// ("$36,945"), so rules can say why a numeric op fails. Withheld with values off.
	NonNumericSample []string `json:"non_numeric_sample,omitempty"`
	// ElementTypes lists the Python types seen in an object column's sample.
	ElementTypes []string `json:"element_types,omitempty"`
	Min          *float64 `json:"min,omitempty"`
	Max          *float64 `json:"max,omitempty"`
	NUnique      *int     `json:"n_unique,omitempty"`
}

// Index describes a pandas index.
type Index struct {
	Type  string `json:"type"`
	Dtype string `json:"dtype,omitempty"`
	Name  any    `json:"name,omitempty"`
	// Sample of labels (first few); Complete when all labels are listed.
	Sample   []any `json:"sample,omitempty"`
	Complete bool  `json:"complete,omitempty"`
}

// Module describes a torch nn.Module.
type Module struct {
	Class      string  `json:"class"`
	Parameters int     `json:"parameters"`
	Training   *bool   `json:"training,omitempty"`
	Dtype      string  `json:"dtype,omitempty"`
	Layers     []Layer `json:"layers,omitempty"`
	// First and Last name the first and last leaf layers in registration order.
	First *Layer `json:"first,omitempty"`
	Last  *Layer `json:"last,omitempty"`
}

// Layer is one leaf layer of a module.
type Layer struct {
	Name         string `json:"name"`
	Class        string `json:"class"`
	InFeatures   *int   `json:"in_features,omitempty"`
	OutFeatures  *int   `json:"out_features,omitempty"`
	InChannels   *int   `json:"in_channels,omitempty"`
	OutChannels  *int   `json:"out_channels,omitempty"`
	NumEmbedding *int   `json:"num_embeddings,omitempty"`
	EmbeddingDim *int   `json:"embedding_dim,omitempty"`
	Device       string `json:"device,omitempty"`
	Dtype        string `json:"dtype,omitempty"`
}

// Estimator describes a scikit-learn estimator or Pipeline.
type Estimator struct {
	Class  string         `json:"class"`
	Params map[string]any `json:"params,omitempty"`
	// Fitted is whether sklearn's check_is_fitted would pass.
	Fitted bool `json:"fitted"`
	// FittedUnknown is true when the estimator's own __sklearn_is_fitted__ would decide
	// (inspection does not run it): Fitted is then true and proves nothing.
	FittedUnknown  bool     `json:"fitted_unknown,omitempty"`
	NFeaturesIn    *int     `json:"n_features_in,omitempty"`
	FeatureNamesIn []string `json:"feature_names_in,omitempty"`
	Classes        []any    `json:"classes,omitempty"`
	// Methods lists the public prediction/transform methods the estimator really has
	// (predict, predict_proba, transform, decision_function, ...), honouring
	// available_if.
	Methods []string `json:"methods,omitempty"`
	// Steps of a Pipeline, in order, each described the same way.
	Steps []EstimatorStep `json:"steps,omitempty"`
	// AllowsNaN is true for estimators known to accept NaN (HistGradientBoosting...).
	AllowsNaN *bool `json:"allows_nan,omitempty"`
}

// EstimatorStep is one named Pipeline step.
type EstimatorStep struct {
	Name      string    `json:"name"`
	Estimator Estimator `json:"estimator"`
}

// Loader describes a torch DataLoader or Dataset.
type Loader struct {
	Len          *int     `json:"len,omitempty"`
	BatchSize    *int     `json:"batch_size,omitempty"`
	DatasetLen   *int     `json:"dataset_len,omitempty"`
	SampleShapes [][]int  `json:"sample_shapes,omitempty"`
	SampleDtypes []string `json:"sample_dtypes,omitempty"`
	SampleTypes  []string `json:"sample_types,omitempty"`
}

// Inspection is the inspector's answer for one request.
type Inspection struct {
	// Values by the name asked for.
	Values map[string]Value `json:"values"`
	// ExecutionCount is the kernel's execution count when the facts were taken: facts are
	// "as of run N".
	ExecutionCount int `json:"execution_count"`
	// Namespace lists every user-visible global name (no leading underscore) when the
	// caller asked for it, so rules know a name is certainly undefined.
	Namespace []string `json:"namespace,omitempty"`
	// Imported lists the top-level modules imported in the kernel (sys.modules roots the
	// user imported), so rules know which libraries are loaded.
	Imported []string `json:"imported,omitempty"`
	// ElapsedMS is the time the inspector spent in the kernel.
	ElapsedMS float64 `json:"elapsed_ms"`
	// BudgetExceeded is true when the budget ran out and some values are partial.
	BudgetExceeded bool `json:"budget_exceeded,omitempty"`
	// InspectorVersion is the version of the injected module.
	InspectorVersion string `json:"inspector_version"`
}
