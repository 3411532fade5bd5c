package judge

import (
	"context"
	"fmt"
	"time"

	"github.com/premortem/premortem/facts"
	"github.com/premortem/premortem/kernelclient"
)

// Value asks the kernel for one name's runtime facts, for a hover on a cell whose cached
// inspection lacks it: one inspection of that name alone, within budget, never sent while
// the kernel runs another client's code (kernelclient.ErrBusy then). It returns the facts,
// the execution count they describe and whether the name exists.
func Value(ctx context.Context, k kernelclient.Kernel, name string, budget time.Duration) (facts.Value, int, bool, error) {
	if k.RunningOthers() {
		return facts.Value{}, 0, false, kernelclient.ErrBusy
	}
	ictx, cancel := context.WithTimeout(ctx, budget)
	defer cancel()
	// The inspector's own sampling budget is a sixth of the request's: the rest is the
	// round trip and the reply's decoding.
	insp, err := k.Inspect(ictx, kernelclient.InspectRequest{Names: []string{name}, Budget: budget / 6})
	if err != nil {
		return facts.Value{}, 0, false, fmt.Errorf("inspect %s: %w", name, err)
	}
	v, ok := insp.Values[name]
	return v, insp.ExecutionCount, ok, nil
}
