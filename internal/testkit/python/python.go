// Package python names the interpreter premortem's tests start kernels and run Python with,
// and skips a test, naming the module, when that interpreter lacks what the test needs.
//
// It is Debian's /usr/bin/python3 (ipykernel, jupyter_client, notebook, numpy, pandas,
// torch, sklearn), not the python3 first on PATH, which has none of them. The environment
// variable PREMORTEM_TEST_PYTHON names another one.
package python

import (
	"os"
	"os/exec"
	"sync"
	"testing"
)

// Default is the interpreter tests use unless PREMORTEM_TEST_PYTHON names another.
const Default = "/usr/bin/python3"

// Path is the interpreter for tests: PREMORTEM_TEST_PYTHON when set, else Default.
func Path() string {
	if p := os.Getenv("PREMORTEM_TEST_PYTHON"); p != "" {
		return p
	}
	return Default
}

// imports caches, per interpreter and module, whether the import failed (nil: it worked),
// so a package whose every test asks for ipykernel starts Python once for it.
var imports sync.Map

// Require skips t when Path cannot import one of modules, naming the module; with no
// modules, when Path does not run at all.
func Require(t testing.TB, modules ...string) {
	t.Helper()
	py := Path()
	if len(modules) == 0 {
		if err := importErr(py, ""); err != nil {
			t.Skipf("%s does not run (%v): install python3 to run this test", py, err)
		}
		return
	}
	for _, m := range modules {
		if err := importErr(py, m); err != nil {
			t.Skipf("%s cannot import %s (%v): install python3-ipykernel (and the module) for it to run this test", py, m, err)
		}
	}
}

// Has reports whether Path imports every one of modules (a test's optional cases).
func Has(modules ...string) bool {
	for _, m := range modules {
		if importErr(Path(), m) != nil {
			return false
		}
	}
	return true
}

func importErr(py, module string) error {
	key := py + "\x00" + module
	if v, ok := imports.Load(key); ok {
		err, _ := v.(error)
		return err
	}
	code := "pass"
	if module != "" {
		code = "import " + module
	}
	err := exec.Command(py, "-c", code).Run()
	imports.Store(key, err)
	return err
}
