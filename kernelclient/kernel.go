// Package kernelclient talks to the user's live Jupyter kernel: the messaging protocol v5
// over ZeroMQ (pure Go) or a Jupyter Server's WebSocket, connection files, discovery of
// running kernels, launching kernels from kernelspecs, and the embedded Python inspector and
// shadow runner. It knows nothing of LSP or analysis; what it learns is returned as package
// facts values.
package kernelclient

import (
	"context"
	"errors"
	"time"

	"github.com/premortem/premortem/facts"
)

// Errors callers switch on (wrapped with context; test with errors.Is).
var (
	// ErrBusy: the kernel is executing something (usually the user's cell) and the caller's
	// deadline does not allow waiting for idle. premortem never queues behind the user.
	ErrBusy = errors.New("kernel is busy")
	// ErrDead: the kernel stopped answering heartbeats or its process exited.
	ErrDead = errors.New("kernel is not responding")
	// ErrRestarted: the kernel restarted (its session id changed) during the call; facts
	// gathered before are stale.
	ErrRestarted = errors.New("kernel restarted")
	// ErrClosed: the client was closed.
	ErrClosed = errors.New("kernel client closed")
)

// Kernel is what the rest of premortem needs from a kernel connection, local (ZeroMQ) or
// remote (Jupyter Server WebSocket). Every method takes a context with a deadline and never
// blocks past it. The user's kernel state (namespace, In/Out, execution count, RNG states)
// is never changed by Inspect, Shadow, ShadowResult or ShadowCancel.
type Kernel interface {
	// Info returns what kernel_info_reply said (language, versions, implementation).
	Info() KernelInfo
	// State returns the last known execution state: busy while any request runs, ours
	// included.
	State() State
	// RunningOthers reports whether the kernel is running code another client sent (the
	// user's cell). Our own requests in flight do not count: they end by themselves, and
	// ours queue behind them, so they are never a reason to give up or to tell the user
	// their cell is running.
	RunningOthers() bool
	// Execute runs code as a user would (store_history true, execution count advances):
	// only `premortem check` uses it, to replay a notebook in a kernel it launched itself.
	Execute(ctx context.Context, code string) (*ExecuteResult, error)
	// Inspect returns runtime facts for names and attribute chains ("df", "model.predict").
	// It is one silent execute with user_expressions; it returns ErrBusy instead of queueing
	// behind a running cell.
	Inspect(ctx context.Context, req InspectRequest) (*facts.Inspection, error)
	// Shadow forks the kernel process and runs code in the child; it returns at once with a
	// token (Status running) or a final result (skipped).
	Shadow(ctx context.Context, code string, opts ShadowOptions) (*facts.ShadowResult, error)
	// ShadowResult collects the outcome of a shadow run (Status running until the child ends).
	ShadowResult(ctx context.Context, token string) (*facts.ShadowResult, error)
	// ShadowCancel kills a running shadow child.
	ShadowCancel(ctx context.Context, token string) error
	// SandboxProbe says which sandbox a shadow run with this sandbox setting ("auto" or
	// "fallback") gets in this kernel, and why. The kernel forks once to find out and caches
	// the answer for its lifetime.
	SandboxProbe(ctx context.Context, sandbox string) (*facts.SandboxInfo, error)
	// Events delivers what happens on the kernel: executions by any client (the user's
	// runs), status changes, restarts, death. The channel is closed by Close.
	Events() <-chan Event
	// Close disconnects (it does not shut a kernel down; see Launched.Shutdown).
	Close() error
}

// State is a kernel execution state.
type State string

// Kernel states.
const (
	StateUnknown  State = "unknown"
	StateStarting State = "starting"
	StateIdle     State = "idle"
	StateBusy     State = "busy"
	StateDead     State = "dead"
)

// KernelInfo is the useful part of kernel_info_reply.
type KernelInfo struct {
	ProtocolVersion       string `json:"protocol_version"`
	Implementation        string `json:"implementation"`
	ImplementationVersion string `json:"implementation_version"`
	LanguageName          string `json:"language"`
	LanguageVersion       string `json:"language_version"`
	// Session is the kernel's session id: a change means the kernel restarted.
	Session string `json:"session"`
}

// ExecuteResult is the outcome of Execute.
type ExecuteResult struct {
	ExecutionCount int
	// Status is "ok", "error" or "aborted".
	Status    string
	Ename     string
	Evalue    string
	Traceback []string
	Stdout    string
	Stderr    string
	Duration  time.Duration
}

// InspectRequest says what to inspect.
type InspectRequest struct {
	// Names are names or dotted attribute chains ("df", "df.Age", "model.predict").
	Names []string
	// Budget is the time the inspector may spend in the kernel (default 50 ms).
	Budget time.Duration
	// NoValues withholds value facts (samples, min/max, reprs): only structure and types.
	NoValues bool
	// Namespace asks for the list of user-visible global names.
	Namespace bool
}

// ShadowOptions configure a shadow run.
type ShadowOptions struct {
	// Timeout kills the child after this long (default 3 s).
	Timeout time.Duration
	// Trace records per-line state of assigned names.
	Trace bool
	// MaxMemory caps the child's extra memory in bytes (0: default).
	MaxMemory int64
	// Sandbox is SandboxAuto (namespaces where the machine allows them, else the fallback)
	// or SandboxForceFallback (the fallback's refusals, for tests and machines whose
	// namespaces misbehave). "" means SandboxAuto.
	Sandbox string
	// DevRunCap > 0 asks for a fast dev run beside the full one when the cell has loops: a
	// second child runs the cell with each loop capped at DevRunCap iterations within
	// Timeout, and the answer carries its token in DevRunToken. The two children are one
	// run group: neither kills the other; the next Shadow call kills both.
	DevRunCap int
	// FullTimeout is the full child's time limit when DevRunCap > 0 (at least Timeout): it
	// goes on in the background after the capped child answered.
	FullTimeout time.Duration
	// Tensors is facts.TensorsAuto ("" too), TensorsMeta or TensorsReal: which tensors the
	// child makes shape-only (kernelclient/inspector/36_meta.py).
	Tensors string
	// Types are names whose types a clean full run reports (facts.ShadowResult.Types): fix
	// verification asks for the names the edited cells bind, so the guard can refuse a fix
	// that left one unbound or of another type.
	Types []string
}

// Sandbox settings (ShadowOptions.Sandbox, premortem.shadow.sandbox, --shadow-sandbox).
const (
	SandboxAuto          = "auto"
	SandboxForceFallback = "fallback"
)

// EventKind is the kind of an Event.
type EventKind string

// Event kinds.
const (
	// EventExecuteInput: some client (the user) started running code.
	EventExecuteInput EventKind = "execute_input"
	// EventExecuteReply: a run finished; Status, Ename, Evalue, Traceback set.
	EventExecuteReply EventKind = "execute_result"
	// EventStatus: the execution state changed.
	EventStatus EventKind = "status"
	// EventRestart: the kernel's session changed.
	EventRestart EventKind = "restart"
	// EventDead: heartbeat lost or process gone.
	EventDead EventKind = "dead"
)

// Event is something that happened on the kernel, seen on IOPub or the heartbeat.
type Event struct {
	Kind           EventKind
	State          State
	ExecutionCount int
	Code           string
	// Status of a finished run: "ok" or "error" (learned from the IOPub error message or
	// the run going idle without one).
	Status    string
	Ename     string
	Evalue    string
	Traceback []string
	// Ours is true for requests premortem itself sent (callers usually ignore them).
	Ours bool
}
