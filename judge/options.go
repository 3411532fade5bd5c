package judge

import (
	"time"

	"github.com/premortem/premortem/facts"
)

// Shadow modes (setting premortem.shadow.mode, flag --no-shadow).
const (
	// ShadowOff never forks the kernel.
	ShadowOff = "off"
	// ShadowSafe runs the cell in a forked kernel only when the static screen finds no side
	// effect (file writes, network, subprocesses, CUDA); the child's guards refuse the rest.
	ShadowSafe = "safe"
	// ShadowAlways runs every cell; the child's guards still refuse side effects.
	ShadowAlways = "always"
)

// Options choose the layers and their budgets.
type Options struct {
	// Rules enables the runtime rules (needs a kernel).
	Rules bool
	// Shadow is the shadow mode: ShadowOff, ShadowSafe or ShadowAlways.
	Shadow string
	// ShadowTimeout kills a shadow child after this long (default 3 s).
	ShadowTimeout time.Duration
	// Trace records the per-line state in shadow runs.
	Trace bool
	// InspectBudget is the time the inspector may spend in the kernel (default 50 ms).
	InspectBudget time.Duration
	// ShadowLongRuns lets safe mode shadow-run cells that may run long (training loops):
	// right for a batch check, where nobody waits at the keyboard and the shadow timeout
	// still bounds the run; an editor keeps it off to spare the CPU while the user types.
	ShadowLongRuns bool
	// ShadowSandbox is the shadow child's sandbox setting: kernelclient.SandboxAuto ("" too:
	// namespaces where the machine allows them) or kernelclient.SandboxForceFallback
	// (setting premortem.shadow.sandbox, flag --shadow-sandbox).
	ShadowSandbox string
	// DevRunCap > 0 turns on the fast dev run: a cell with loops also runs with every loop
	// capped at DevRunCap iterations, within ShadowTimeout, while the full run goes on
	// within ShadowFullTimeout (judge/fastdev.go). 0 turns it off.
	DevRunCap int
	// ShadowFullTimeout bounds the full shadow run that goes on in the background after the
	// budget (default 60 s; never less than ShadowTimeout).
	ShadowFullTimeout time.Duration
	// ShadowTensors is facts.TensorsAuto ("" too), TensorsMeta or TensorsReal: which tensors
	// a shadow child makes shape-only (setting premortem.shadow.tensors, flag
	// --shadow-tensors).
	ShadowTensors string
	// RepairBudget bounds the time one crash finding's fix search may spend running
	// candidates in the shadow (default DefaultRepairBudget): the search stops at the
	// first candidate that would start after it, and the proven ones are offered.
	RepairBudget time.Duration
}

// DefaultRepairBudget is the fix search's time per crash finding: about 40 candidates at
// the half second a small cell's shadow run takes, and short enough that a batch check of
// a notebook with a handful of crashes stays within a minute or two.
const DefaultRepairBudget = 20 * time.Second

// DefaultDevRunCap is the iterations a loop keeps in a fast dev run: enough to run the
// body once after its first iteration changed state, few enough for a 1 M-row loader.
const DefaultDevRunCap = 3

// DefaultShadowFullTimeout bounds the background full run: a training cell of a minute
// still gets a final answer, a hanging one stops using a core soon.
const DefaultShadowFullTimeout = 60 * time.Second

// DefaultOptions are the layers a user gets without configuration: everything local.
func DefaultOptions() Options {
	return Options{Rules: true, Shadow: ShadowSafe, ShadowTimeout: 3 * time.Second, Trace: true, InspectBudget: 50 * time.Millisecond,
		DevRunCap: DefaultDevRunCap, ShadowFullTimeout: DefaultShadowFullTimeout, RepairBudget: DefaultRepairBudget}
}

func (o Options) repairBudget() time.Duration {
	if o.RepairBudget <= 0 {
		return DefaultRepairBudget
	}
	return o.RepairBudget
}

func (o Options) shadowTimeout() time.Duration {
	if o.ShadowTimeout <= 0 {
		return 3 * time.Second
	}
	return o.ShadowTimeout
}

func (o Options) inspectBudget() time.Duration {
	if o.InspectBudget <= 0 {
		return 50 * time.Millisecond
	}
	return o.InspectBudget
}

func (o Options) devRunCap() int { return max(o.DevRunCap, 0) }

func (o Options) shadowFullTimeout() time.Duration {
	if o.ShadowFullTimeout <= 0 {
		return DefaultShadowFullTimeout
	}
	return o.ShadowFullTimeout
}

func (o Options) shadowTensors() string {
	switch o.ShadowTensors {
	case facts.TensorsMeta, facts.TensorsReal:
		return o.ShadowTensors
	}
	return facts.TensorsAuto
}
