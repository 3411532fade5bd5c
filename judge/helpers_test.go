package judge_test

import (
	"os/exec"
	"sync"
	"testing"
)

// python is the interpreter with ipykernel, numpy, pandas, sklearn and torch (the brief's
// machine); the pyenv python3 first on PATH has none of them.
const python = "/usr/bin/python3"

var (
	kernelOnce sync.Once
	kernelErr  error
)

// requireKernel skips the test when /usr/bin/python3 cannot start an IPython kernel.
func requireKernel(t testing.TB) {
	t.Helper()
	kernelOnce.Do(func() { kernelErr = exec.Command(python, "-c", "import ipykernel").Run() }) //nolint
	if kernelErr != nil {
		t.Skipf("%s lacks ipykernel (%v): kernel tests skipped", python, kernelErr)
	}
}
