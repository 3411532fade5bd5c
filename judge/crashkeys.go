package judge

import (
	"strings"

	"github.com/premortem/premortem/analysis/repair"
	"github.com/premortem/premortem/facts"
	"github.com/premortem/premortem/finding"
)

// crashKeys returns the keys the cell's shadow run saw on its crash line (the objects it
// subscripts or reads attributes of), when that run's crash is the one the finding is
// about; the missing-name repairs take the labels that do exist from them.
func crashKeys(r *facts.ShadowResult, f finding.Finding) []facts.CrashKeys {
	if r == nil || r.Status != facts.ShadowError || len(r.CrashKeys) == 0 {
		return nil
	}
	if !sameException(r, f) {
		return nil
	}
	return r.CrashKeys
}

// crashFacts returns the facts of the crash line's names as the cell's shadow run held them
// at the crash, when that run's crash is the one the finding is about: the repairs of a
// cell that builds its own data reason from them.
func crashFacts(r *facts.ShadowResult, f finding.Finding) map[string]facts.Value {
	if r == nil || r.Status != facts.ShadowError || len(r.CrashFacts) == 0 {
		return nil
	}
	if !sameException(r, f) {
		return nil
	}
	return r.CrashFacts
}

// crashSite is the executed cell whose code raised the shadow run's exception, when the
// finding is that exception and the traceback goes through code an earlier cell defined
// (repair.FrameSite); nil otherwise.
func crashSite(r *facts.ShadowResult, f finding.Finding, hist []repair.Cell) *repair.Site {
	if r == nil || r.Status != facts.ShadowError || len(r.Frames) == 0 {
		return nil
	}
	if !sameException(r, f) {
		return nil
	}
	s, ok := repair.FrameSite(r.Frames, hist)
	if !ok {
		return nil
	}
	return &s
}

// crashSuggestions are the shadow run's nearest existing names for the missing one, when
// the finding is that run's exception.
func crashSuggestions(r *facts.ShadowResult, f finding.Finding) *facts.Suggestions {
	if r == nil || r.Status != facts.ShadowError || r.Suggestions == nil {
		return nil
	}
	if !sameException(r, f) {
		return nil
	}
	return r.Suggestions
}

// sameException reports whether the finding is about the run's exception (either may name
// it with its module).
func sameException(r *facts.ShadowResult, f finding.Finding) bool {
	return sameExceptionName(f.Exception, r.Exception)
}

// sameExceptionName reports whether a predicted exception is the real one: equal, or one
// names the other with its module ("NotFittedError", "sklearn.exceptions.NotFittedError").
// An empty prediction matches any.
func sameExceptionName(pred, real string) bool {
	return pred == "" || strings.EqualFold(pred, real) || strings.HasSuffix(real, pred) || strings.HasSuffix(pred, real)
}

// siteFacts are the crash facts of the frame where an earlier cell's code raised, when the
// finding is the run's exception.
func siteFacts(r *facts.ShadowResult, f finding.Finding) map[string]facts.Value {
	if r == nil || r.Status != facts.ShadowError || !sameException(r, f) {
		return nil
	}
	return r.SiteFacts
}
