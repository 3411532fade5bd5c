package judge

import (
	"strings"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/analysis/repair"
	"github.com/premortem/premortem/facts"
)

// crashKeys returns the keys the cell's shadow run saw on its crash line (the objects it
// subscripts or reads attributes of), when that run's crash is the one the finding is
// about; the missing-name repairs take the labels that do exist from them.
func crashKeys(r *facts.ShadowResult, f analysis.Finding) []facts.CrashKeys {
	if r == nil || r.Status != facts.ShadowError || len(r.CrashKeys) == 0 {
		return nil
	}
	if f.Exception != "" && !strings.EqualFold(f.Exception, r.Exception) && !strings.HasSuffix(r.Exception, f.Exception) && !strings.HasSuffix(f.Exception, r.Exception) {
		return nil
	}
	return r.CrashKeys
}

// crashFacts returns the facts of the crash line's names as the cell's shadow run held them
// at the crash, when that run's crash is the one the finding is about: the repairs of a
// cell that builds its own data reason from them.
func crashFacts(r *facts.ShadowResult, f analysis.Finding) map[string]facts.Value {
	if r == nil || r.Status != facts.ShadowError || len(r.CrashFacts) == 0 {
		return nil
	}
	if f.Exception != "" && !strings.EqualFold(f.Exception, r.Exception) && !strings.HasSuffix(r.Exception, f.Exception) && !strings.HasSuffix(f.Exception, r.Exception) {
		return nil
	}
	return r.CrashFacts
}

// crashSite is the executed cell whose code raised the shadow run's exception, when the
// finding is that exception and the traceback goes through code an earlier cell defined
// (repair.FrameSite); nil otherwise.
func crashSite(r *facts.ShadowResult, f analysis.Finding, hist []repair.Cell) *repair.Site {
	if r == nil || r.Status != facts.ShadowError || len(r.Frames) == 0 {
		return nil
	}
	if f.Exception != "" && !strings.EqualFold(f.Exception, r.Exception) && !strings.HasSuffix(r.Exception, f.Exception) && !strings.HasSuffix(f.Exception, r.Exception) {
		return nil
	}
	s, ok := repair.FrameSite(r.Frames, hist)
	if !ok {
		return nil
	}
	return &s
}
