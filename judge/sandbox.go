package judge

import (
	"context"
	"time"

	"github.com/premortem/premortem/facts"
	"github.com/premortem/premortem/kernelclient"
)

// sandboxKind is the sandbox a shadow run will get in the judge's kernel: what the kernel's
// probe found for the sandbox setting (cached in the kernel, so one short silent request; for
// the forced fallback it says what the fallback emulates). A probe that fails (busy kernel, old inspector) counts as the fallback, whose
// safe-mode screen is the stricter one.
func (j *Judge) sandboxKind(ctx context.Context) facts.SandboxInfo {
	forced := facts.SandboxInfo{Sandbox: facts.SandboxFallback, Reason: "the fallback sandbox was asked for (the sandbox setting)"}
	if j.Options.Shadow != ShadowSafe {
		if j.Options.ShadowSandbox == kernelclient.SandboxForceFallback {
			return forced
		}
		return facts.SandboxInfo{} // only safe mode's screen depends on it; the run reports its own
	}
	pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	info, err := j.Kernel.SandboxProbe(pctx, j.Options.ShadowSandbox)
	if err != nil || info == nil {
		if j.Options.ShadowSandbox == kernelclient.SandboxForceFallback {
			return forced // what the fallback emulates is unknown: screened as refusing writes
		}
		return facts.SandboxInfo{Sandbox: facts.SandboxFallback, Reason: "the sandbox probe failed; screened as for the fallback"}
	}
	return *info
}
