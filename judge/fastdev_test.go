package judge

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/premortem/premortem/facts"
	"github.com/premortem/premortem/kernelclient"
)

// groupKernel is a kernel whose shadow run group answers on a script: the full run's and
// the capped run's results, each after a delay (never, for a zero result).
type groupKernel struct {
	kernelclient.Kernel // only the shadow calls are used

	full, capped        *facts.ShadowResult
	fullAfter, capAfter time.Duration
	mu                  sync.Mutex
	start               time.Time
	cancelled           map[string]bool
	opts                kernelclient.ShadowOptions
}

func (k *groupKernel) Shadow(ctx context.Context, code string, opts kernelclient.ShadowOptions) (*facts.ShadowResult, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.start, k.opts, k.cancelled = time.Now(), opts, map[string]bool{}
	r := &facts.ShadowResult{Token: "full", Status: facts.ShadowRunning}
	if k.capped != nil || k.capAfter > 0 {
		r.DevRunToken = "capped"
	}
	return r, nil
}

func (k *groupKernel) ShadowResult(ctx context.Context, token string) (*facts.ShadowResult, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	res, after := k.full, k.fullAfter
	if token == "capped" {
		res, after = k.capped, k.capAfter
	}
	if k.cancelled[token] {
		return &facts.ShadowResult{Token: token, Status: facts.ShadowDied, Reason: "cancelled"}, nil
	}
	if res == nil || time.Since(k.start) < after {
		return &facts.ShadowResult{Token: token, Status: facts.ShadowRunning}, nil
	}
	c := *res
	c.Token = token
	return &c, nil
}

func (k *groupKernel) ShadowCancel(ctx context.Context, token string) error {
	k.mu.Lock()
	k.cancelled[token] = true
	k.mu.Unlock()
	return nil
}

// TestShadowRunStaged drives the orchestration with scripted children: a decisive fast
// answer ends both runs, a likely one is provisional until the full run withdraws it, a
// full run within the budget wins, and a full run that never ends leaves the fast answer
// with a note.
func TestShadowRunStaged(t *testing.T) {
	short := &facts.DevRun{Cap: 3, Shortened: true, Loops: []facts.DevLoop{{Line: 2, Kind: "for", Header: "i in range(100)", Entries: 1, Ran: 3, Shortened: true, Total: 100}}}
	likely := *short
	likely.Likely, likely.Reads = true, []string{"losses"}
	held, gone := likely, likely
	held.FullSize = &facts.DevFullSize{Verdict: facts.FullSizeCrash, Sizes: []string{"losses: 3 in the capped run, 300 at full length"}}
	gone.FullSize = &facts.DevFullSize{Verdict: facts.FullSizeClean, Sizes: []string{"losses: 3 in the capped run, 100 at full length"}}
	crash := func(d *facts.DevRun) *facts.ShadowResult {
		return &facts.ShadowResult{Status: facts.ShadowError, Exception: "IndexError", Line: 4, DevRun: d}
	}
	tests := []struct {
		name          string
		k             *groupKernel
		wantStatus    string
		wantDevRun    bool
		wantEarly     string // status of the provisional answer, "" for none
		wantNote      string
		wantReason    string
		wantCancelled string
	}{
		{name: "confirmed fast crash stops the full run",
			k:          &groupKernel{capped: crash(short), capAfter: 20 * time.Millisecond},
			wantStatus: facts.ShadowError, wantDevRun: true, wantNote: "the full run was stopped", wantCancelled: "full"},
		{name: "likely fast crash is provisional; the clean full run withdraws it",
			k: &groupKernel{capped: crash(&likely), capAfter: 20 * time.Millisecond,
				full: &facts.ShadowResult{Status: facts.ShadowOK}, fullAfter: 800 * time.Millisecond},
			wantStatus: facts.ShadowOK, wantEarly: facts.ShadowRunning, wantNote: "withdrawn"},
		{name: "a likely crash that holds at full sizes is the provisional answer",
			k: &groupKernel{capped: crash(&held), capAfter: 20 * time.Millisecond,
				full: crash(nil), fullAfter: 800 * time.Millisecond},
			wantStatus: facts.ShadowError, wantEarly: facts.ShadowError, wantNote: "confirms"},
		{name: "a likely crash gone at full sizes is never a crash, even when the full run never ends",
			k:          &groupKernel{capped: crash(&gone), capAfter: 20 * time.Millisecond},
			wantStatus: facts.ShadowTimeout, wantDevRun: true, wantEarly: facts.ShadowRunning, wantReason: "runs clean, so the crash came from the shortening", wantCancelled: "full"},
		{name: "a likely crash with nothing extrapolated is unknown",
			k:          &groupKernel{capped: crash(&likely), capAfter: 20 * time.Millisecond},
			wantStatus: facts.ShadowTimeout, wantDevRun: true, wantEarly: facts.ShadowRunning, wantReason: "not tested at the full run's sizes", wantCancelled: "full"},
		{name: "a full run within the budget wins",
			k: &groupKernel{capped: &facts.ShadowResult{Status: facts.ShadowOK, DevRun: short}, capAfter: 20 * time.Millisecond,
				full: &facts.ShadowResult{Status: facts.ShadowOK}, fullAfter: 100 * time.Millisecond},
			wantStatus: facts.ShadowOK},
		{name: "a full run that never ends leaves the shortened clean run",
			k:          &groupKernel{capped: &facts.ShadowResult{Status: facts.ShadowOK, DevRun: short}, capAfter: 20 * time.Millisecond},
			wantStatus: facts.ShadowOK, wantDevRun: true, wantEarly: facts.ShadowOK, wantNote: "did not finish within", wantCancelled: "full"},
		{name: "no loops: still running at the budget, then the full answer",
			k:          &groupKernel{full: crash(nil), fullAfter: 800 * time.Millisecond},
			wantStatus: facts.ShadowError, wantEarly: facts.ShadowRunning, wantNote: "went on in the background"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j := &Judge{Kernel: tt.k, Options: Options{Shadow: ShadowAlways, ShadowTimeout: 200 * time.Millisecond,
				ShadowFullTimeout: 1500 * time.Millisecond, DevRunCap: 3}}
			var early []*facts.ShadowResult
			r, err := j.ShadowRunStaged(context.Background(), "x", nil, func(r *facts.ShadowResult) { early = append(early, r) })
			if err != nil {
				t.Fatal(err)
			}
			if r.Status != tt.wantStatus || (r.DevRun != nil) != tt.wantDevRun {
				t.Errorf("final %s (devrun %v), want %s (devrun %v)", r.Status, r.DevRun != nil, tt.wantStatus, tt.wantDevRun)
			}
			switch {
			case tt.wantEarly == "" && len(early) > 0:
				t.Errorf("provisional answer %+v, want none", early[0])
			case tt.wantEarly != "" && (len(early) != 1 || early[0].Status != tt.wantEarly):
				t.Errorf("provisional answers %+v, want one %s", early, tt.wantEarly)
			}
			if tt.wantNote != "" && !strings.Contains(strings.Join(r.Notes, "\n"), tt.wantNote) {
				t.Errorf("notes %q lack %q", r.Notes, tt.wantNote)
			}
			if tt.wantReason != "" && !strings.Contains(r.Reason, tt.wantReason) {
				t.Errorf("reason %q lacks %q", r.Reason, tt.wantReason)
			}
			for _, e := range early {
				if e.Status == facts.ShadowError && unprovenLikely(e) != "" {
					t.Errorf("provisional crash that did not hold at full sizes: %+v", e)
				}
			}
			if tt.wantCancelled != "" && !tt.k.cancelled[tt.wantCancelled] {
				t.Errorf("%s run not cancelled", tt.wantCancelled)
			}
			if tt.k.opts.DevRunCap != 3 || tt.k.opts.FullTimeout != 1500*time.Millisecond || tt.k.opts.Timeout != 200*time.Millisecond {
				t.Errorf("shadow options %+v", tt.k.opts)
			}
		})
	}
}

// TestTrimTrace: traced state from the first shortened loop on is dropped.
func TestTrimTrace(t *testing.T) {
	r := &facts.ShadowResult{Status: facts.ShadowOK, DevRun: &facts.DevRun{Shortened: true, Loops: []facts.DevLoop{{Line: 3, Shortened: true}}},
		Trace: []facts.LineState{{Line: 1}, {Line: 2}, {Line: 4}, {Line: 6}}}
	got := trimTrace(r)
	if len(got.Trace) != 2 || got.Trace[1].Line != 2 || !got.TraceTruncated || len(r.Trace) != 4 {
		t.Errorf("trimmed %+v (original %d entries)", got.Trace, len(r.Trace))
	}
}
