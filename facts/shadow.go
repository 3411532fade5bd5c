package facts

// Shadow outcomes.
const (
	// ShadowRunning: the child has not finished yet; ask again.
	ShadowRunning = "running"
	// ShadowOK: the cell ran to the end in the child without an exception.
	ShadowOK = "ok"
	// ShadowError: the cell raised; Exception, Message, Line and Frames say where.
	ShadowError = "error"
	// ShadowRefused: the child refused a side effect (file write, socket, subprocess...);
	// the outcome is unknown, never a crash. Refused says which.
	ShadowRefused = "refused"
	// ShadowTimeout: the child was killed after the time limit.
	ShadowTimeout = "timeout"
	// ShadowSkipped: not run (CUDA in use, not enough memory, platform without fork, static
	// screen found a side effect in safe mode). Reason says why.
	ShadowSkipped = "skipped"
	// ShadowDied: the child died without reporting (signal, memory cap).
	ShadowDied = "died"
)

// ShadowResult is the outcome of running a cell in a forked copy of the kernel.
type ShadowResult struct {
	Token  string `json:"token"`
	Status string `json:"status"`
	// Reason explains skipped, refused, died and timeout outcomes for the user.
	Reason string `json:"reason,omitempty"`
	// Refused names the side effect the child refused ("open('out.csv', 'w')").
	Refused string `json:"refused,omitempty"`
	// Exception is the exception class name (e.g. "KeyError"), Message its str().
	Exception string `json:"exception,omitempty"`
	Message   string `json:"message,omitempty"`
	// Line is the 1-based line in the cell where the exception surfaced from the cell's own
	// code (the innermost frame that belongs to the cell), 0 when unknown.
	Line int `json:"line,omitempty"`
	// Frames are the traceback frames, outermost first; InCell marks frames in the cell.
	Frames []Frame `json:"frames,omitempty"`
	// CrashKeys, for a KeyError, an AttributeError or a "not in index" / "not found in axis"
	// error, are the keys of the objects the crash line subscripts or reads attributes of,
	// as the child's cell frame held them at the crash (kernelclient/inspector/
	// 34_crashkeys.py): a frame built by the crashing cell itself is in no inspection. At
	// most 4 objects, frames and dicts first.
	CrashKeys []CrashKeys `json:"crash_keys,omitempty"`
	// CrashFacts, for any exception, are the runtime facts (as an inspection gives them) of
	// the names the crash line reads and of the names the cell's statements binding those
	// read, as the innermost cell frame held them at the crash (kernelclient/inspector/
	// 35_crashfacts.py): a frame or array the crashing cell built is in no inspection, and
	// a name it rebinds is stale there. At most 8 names, 64 KiB; modules, classes,
	// functions and opaque user objects are left out.
	CrashFacts map[string]Value `json:"crash_facts,omitempty"`
	// Suggestions, for a NameError or AttributeError, are the existing names spelled
	// nearest to the missing one, from dir() of the object or the crash frame's namespace
	// (kernelclient/inspector/35_crashfacts.py); nil when none is near.
	Suggestions *Suggestions `json:"suggestions,omitempty"`
	// SiteFacts are crash facts as CrashFacts are, of the innermost frame that runs code an
	// earlier cell defined (a forward, a helper: the line repair.FrameSite finds), as that
	// frame held them: its parameters and locals exist nowhere else.
	SiteFacts map[string]Value `json:"site_facts,omitempty"`
	// Types are, after a clean full run asked for them (kernelclient.ShadowOptions.Types),
	// the qualified type of each name asked for ("pandas.core.frame.DataFrame"), "" for one
	// the run left unbound.
	Types map[string]string `json:"types,omitempty"`
	// Trace is the per-line state recorded with trace on, in execution order.
	Trace []LineState `json:"trace,omitempty"`
	// TraceTruncated is true when the trace hit its size bound.
	TraceTruncated bool `json:"trace_truncated,omitempty"`
	// Stdout and Stderr captured in the child (truncated).
	Stdout string `json:"stdout,omitempty"`
	Stderr string `json:"stderr,omitempty"`
	// ElapsedMS is the child's wall time; ForkMS the time the kernel was busy forking.
	ElapsedMS float64 `json:"elapsed_ms,omitempty"`
	ForkMS    float64 `json:"fork_ms,omitempty"`
	// ExecutionCount of the parent kernel when the fork happened.
	ExecutionCount int `json:"execution_count,omitempty"`
	// Sandbox is the sandbox the child ran in: SandboxNamespaces or SandboxFallback ("" when
	// the run never started and the kernel had not been probed).
	Sandbox string `json:"sandbox,omitempty"`
	// SandboxReason says why that sandbox is in force ("unprivileged user namespaces are not
	// allowed here (unshare: Operation not permitted); fallback: file writes emulated in a private
	// view; network and subprocesses refused ...").
	SandboxReason string `json:"sandbox_reason,omitempty"`
	// ChildPhasesMS is the child's time per setup step, in milliseconds: "sandbox" (namespaces
	// and overlay, or the fallback's scratch), its parts "sandbox_*", "guards", "run", ...
	ChildPhasesMS map[string]float64 `json:"child_phases_ms,omitempty"`

	// Fast dev run (kernelclient/inspector/25_devrun.py, judge/fastdev.go).
	// DevRunToken, on the "running" answer of a start with a fast dev run, is the token of
	// the child running the cell with its loops capped.
	DevRunToken string `json:"devrun_token,omitempty"`
	// DevRun, on the capped child's outcome, says which loops ran and which were cut short.
	DevRun *DevRun `json:"devrun,omitempty"`
	// Meta, when the child ran the cell on meta tensors (shapes, dtypes, strides and devices,
	// no values: kernelclient/inspector/36_meta.py), says what it converted and what values
	// it did not have. A clean meta run proves nothing about values, so it is never "ok".
	Meta *MetaRun `json:"meta,omitempty"`
	// CUDACalls counts the CUDA entry points the child's guard stopped in a run on real
	// tensors (a meta run counts them in Meta.CUDACalls).
	CUDACalls int `json:"cuda_calls,omitempty"`
	// Notes are what the judge learned running the layer (the fast dev run's answer, the
	// background full run's end), for the user; the inspector never sets them.
	Notes []string `json:"notes,omitempty"`
}

// CrashKeys are the labels one object on a crash line had when the cell failed.
type CrashKeys struct {
	// Expr is the name chain as the line writes it ("df", "data.sub" for a column).
	Expr string `json:"expr"`
	// Kind is "dataframe" (Keys are its columns), "series" (its index labels) or "dict".
	Kind string `json:"kind"`
	// Keys are the first 200 labels that are strings, numbers or booleans; Total counts
	// them all.
	Keys  []any `json:"keys"`
	Total int   `json:"total"`
}

// Sandboxes a shadow child runs in.
const (
	// SandboxNamespaces: new user, mount, network and PID namespaces with a throwaway
	// overlay over every writable mount; writes, processes and sockets are contained.
	SandboxNamespaces = "namespaces"
	// SandboxFallback: no namespaces; file writes happen in a private view emulated in the
	// child (SandboxInfo.Emulated), sockets and processes are refused, native code is held
	// by a syscall allow-list, parallelism runs sequentially.
	SandboxFallback = "fallback"
)

// SandboxInfo is what the kernel's sandbox probe found: the sandbox a shadow run would get.
type SandboxInfo struct {
	Sandbox string `json:"sandbox"`
	Reason  string `json:"sandbox_reason"`
	// Emulated lists the side effects the sandbox emulates privately instead of refusing
	// (EmulatedFiles: the fallback's private view of file writes).
	Emulated []string `json:"emulated,omitempty"`
}

// EmulatedFiles in SandboxInfo.Emulated: file writes, deletes, renames and mkdir happen in a
// private copy-on-write view of the child (the fallback without namespaces).
const EmulatedFiles = "files"

// Emulates reports whether the sandbox emulates the side effect kind e (an Emulated entry).
func (s SandboxInfo) Emulates(e string) bool {
	for _, x := range s.Emulated {
		if x == e {
			return true
		}
	}
	return false
}

// DevRun is the outcome of a fast dev run: the cell ran with every loop in its own code
// (functions and classes it defines included) capped at Cap iterations.
type DevRun struct {
	Cap int `json:"cap"`
	// Loops are the loops that started, in source order.
	Loops []DevLoop `json:"loops,omitempty"`
	// Shortened is true when the cap cut at least one loop short: a clean run then proves
	// nothing about the full run.
	Shortened bool `json:"shortened,omitempty"`
	// CrashLine is the innermost line of the cell in the traceback (crashes only).
	CrashLine int `json:"crash_line,omitempty"`
	// Likely is true when the crash line reads state a shortened loop produced (Reads
	// names it): the crash may be the shortening's, only the full run can confirm it.
	Likely bool     `json:"likely,omitempty"`
	Reads  []string `json:"reads,omitempty"`
	// Error is set when the child could not report the loops (then Likely is set too).
	Error string `json:"error,omitempty"`
	// Library lists the library calls whose work was shortened ("GridSearchCV.fit: 1 of 24
	// candidates, cv=2"); any makes Shortened true (kernelclient/inspector/23_devlib.py).
	Library []string `json:"library,omitempty"`
	// LibraryUnsure says why a clean run with that shortening does not stand for the full
	// run (a search with error_score='raise' skipped candidates, warnings raised as errors,
	// a loop of the cell started after the shortened work); empty when it does.
	LibraryUnsure []string `json:"library_unsure,omitempty"`
	// LoopsStand, on a clean run that cut loops short, says the capped child found that the
	// run stands for the full one: every cut loop goes over items of one make (a range, an
	// array, a DataLoader) and ran its last item, every statement of their bodies ran, and
	// every line after them that reads what they made runs clean with it at its full size.
	// LoopsUnsure says why not, otherwise.
	LoopsStand  bool     `json:"loops_stand,omitempty"`
	LoopsUnsure []string `json:"loops_unsure,omitempty"`
	// FullSize, on a likely crash, is the crash line run again with the loops' products at
	// the sizes extrapolated to the full run (kernelclient/inspector/22_devsize.py).
	FullSize *DevFullSize `json:"full_size,omitempty"`
	// LastItem is set when the crash came in the last item of a loop, run after the cap.
	// Not Likely, it is the full run's crash: the crash statement reads only the item and
	// what the loop does not change.
	LastItem *DevLastItem `json:"last_item,omitempty"`
}

// LibraryOnly reports whether the run shortened only the library's work, through the
// table whose entries keep the structure of what they produce (fitted features, classes,
// output shapes, columns, dtypes), with no loop of the cell cut short and nothing that
// makes the full work riskier than the shortened one. A clean run of that kind stands for
// the full run as far as structure goes; loops cut short never do (a later iteration may
// meet the bad row or the partial last batch).
func (d *DevRun) LibraryOnly() bool {
	if d == nil || !d.Shortened || len(d.Library) == 0 || len(d.LibraryUnsure) > 0 || d.Error != "" {
		return false
	}
	for _, l := range d.Loops {
		if l.Shortened {
			return false
		}
	}
	return true
}

// Stands reports whether a clean run of this fast dev run stands for the full run as far
// as structure goes: it shortened only library work through the table (LibraryOnly), or the
// loops it cut were found to stand (LoopsStand) and the library work it shortened, if any,
// raises no doubt. The values the full run computes (a score, a loss) are not the
// shortened run's, so this is weaker than a whole run.
func (d *DevRun) Stands() bool {
	if d == nil || !d.Shortened || d.Error != "" || len(d.LibraryUnsure) > 0 {
		return false
	}
	return d.LibraryOnly() || d.LoopsStand
}

// Verdicts of DevFullSize: the crash happens again at full sizes, the line runs clean at
// full sizes, or nothing could be extrapolated.
const (
	FullSizeCrash   = "crash"
	FullSizeClean   = "clean"
	FullSizeUnknown = "unknown"
)

// DevFullSize is what a likely crash did at the full run's sizes.
type DevFullSize struct {
	// Verdict is FullSizeCrash, FullSizeClean or FullSizeUnknown; Reason says why.
	Verdict string `json:"verdict"`
	Reason  string `json:"reason,omitempty"`
	// Sizes are the values put at full size ("losses: 2 in the capped run, 20 at full
	// length").
	Sizes []string `json:"sizes,omitempty"`
}

// DevLoop is one loop of a fast dev run.
type DevLoop struct {
	// Line is the loop's 1-based line in the cell; Kind "for" or "while"; Header its
	// source ("epoch in range(100)").
	Line   int    `json:"line"`
	Kind   string `json:"kind"`
	Header string `json:"header,omitempty"`
	// Entries counts the times the loop started; Ran the iterations of the entry the cap cut
	// (the most iterations of one entry otherwise).
	Entries int `json:"entries"`
	Ran     int `json:"ran"`
	// Shortened: the cap cut an entry short; Total is len() of its iterable when known.
	Shortened bool `json:"shortened,omitempty"`
	Total     int  `json:"total,omitempty"`
	// Func, when set, is the function of an earlier cell the loop is in (a `train` the cell
	// calls, capped in the child as the cell's own loops are); Line is then its line in
	// that cell, not in this one.
	Func string `json:"func,omitempty"`
	// Last: after the capped iterations the loop's last item ran too (the loop's edge: the
	// last index, a DataLoader's smaller last batch); only for loops the full run surely
	// takes to their end (no break or return in the body).
	Last bool `json:"last,omitempty"`
}

// DevLastItem is the loop whose last item raised in a fast dev run (DevRun.LastItem).
type DevLastItem struct {
	Line   int    `json:"line"`
	Header string `json:"header,omitempty"`
	// Ran is the iterations run before the last item; Total the loop's length.
	Ran   int `json:"ran"`
	Total int `json:"total,omitempty"`
}

// Frame is one traceback frame.
type Frame struct {
	File   string `json:"file"`
	Line   int    `json:"line"`
	Func   string `json:"func"`
	InCell bool   `json:"in_cell"`
	Text   string `json:"text,omitempty"`
}

// LineState is the state after one line of the cell ran: the compact facts of the names
// that line assigned.
type LineState struct {
	// Line is 1-based in the cell.
	Line int `json:"line"`
	// Names maps each name assigned at this line to its compact facts.
	Names map[string]Compact `json:"names"`
}

// Compact is the small summary shown in inlay hints: "(712, 8) float64".
type Compact struct {
	Type  string `json:"type"`
	Shape []int  `json:"shape,omitempty"`
	Dtype string `json:"dtype,omitempty"`
	Len   *int   `json:"len,omitempty"`
	// Repr is a short repr for scalars and strings.
	Repr string `json:"repr,omitempty"`
}

// Tensors modes of a shadow run (--shadow-tensors, premortem.shadow.tensors).
const (
	// TensorsAuto: meta tensors for the CUDA tensors of a kernel that has initialised CUDA,
	// real tensors otherwise.
	TensorsAuto = "auto"
	// TensorsMeta: every tensor is shape-only in the child.
	TensorsMeta = "meta"
	// TensorsReal: the tensors keep their data; a kernel that has initialised CUDA is then
	// not shadow-run.
	TensorsReal = "real"
)

// MetaValueReason is why a crash that reads a placeholder is unknown.
const MetaValueReason = "depends on tensor values the GPU holds"

// MetaRun describes a shadow run on meta tensors.
type MetaRun struct {
	// Tensors is "meta"; Why says why ("meta (auto: the kernel has initialised CUDA ...)").
	Tensors string `json:"tensors"`
	Why     string `json:"why,omitempty"`
	// Converted counts the kernel's tensors made shape-only (parameters, optimizer state,
	// tensors in containers and datasets); Created those the cell moved to a GPU it
	// does not have.
	Converted int `json:"converted"`
	Created   int `json:"created,omitempty"`
	// Devices are the devices the converted tensors stood for ("cuda:0").
	Devices []string `json:"devices,omitempty"`
	// CUDACalls counts the CUDA entry points the guard stopped (each one ends the run as a
	// refusal): zero on every run that answered.
	CUDACalls int `json:"cuda_calls"`
	// Placeholders counts the values the run did not have and made up (.item(), bool(),
	// .tolist(), .numpy()); PlaceholderUses says which and where ("'.item() at line 7").
	Placeholders    int      `json:"placeholders,omitempty"`
	PlaceholderUses []string `json:"placeholder_uses,omitempty"`
	// ValueDependent: the crash line reads a placeholder (or the failing operation took
	// one): the crash is unknown, with Reason MetaValueReason.
	ValueDependent bool   `json:"value_dependent,omitempty"`
	Reason         string `json:"reason,omitempty"`
	// Stopped says why the run could not go on (an operation that needs values); the run
	// is then a refusal.
	Stopped string `json:"stopped,omitempty"`
	// Ops counts the tensor operations run; ConvertMS the time the conversion took;
	// Truncated is set when the walk over the namespace hit its bounds.
	Ops       int     `json:"ops,omitempty"`
	ConvertMS float64 `json:"convert_ms,omitempty"`
	Truncated bool    `json:"truncated,omitempty"`
	Error     string  `json:"error,omitempty"`
}

// Suggestions are the names that exist where a name or attribute was missing, nearest first.
type Suggestions struct {
	// Name is the missing name or attribute.
	Name       string   `json:"name"`
	Candidates []string `json:"candidates"`
}
