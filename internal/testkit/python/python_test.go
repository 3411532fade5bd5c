package python

import "testing"

// TestRequire: a module Python lacks skips the test; modules it has, or none, do not.
func TestRequire(t *testing.T) {
	var skipped bool
	t.Run("missing", func(t *testing.T) {
		defer func() { skipped = t.Skipped() }()
		Require(t, "no_such_module_premortem_test")
	})
	if !skipped {
		t.Error("a missing module did not skip the test")
	}
	for name, modules := range map[string][]string{"present": {"os", "json"}, "none": nil} {
		t.Run(name, func(t *testing.T) {
			Require(t, modules...)
			if t.Skipped() {
				t.Errorf("%v skipped the test", modules)
			}
		})
	}
}

// TestPath: PREMORTEM_TEST_PYTHON overrides the default interpreter.
func TestPath(t *testing.T) {
	t.Setenv("PREMORTEM_TEST_PYTHON", "")
	if got := Path(); got != Default {
		t.Errorf("Path() = %q without the variable, want %q", got, Default)
	}
	t.Setenv("PREMORTEM_TEST_PYTHON", "/opt/py/bin/python3")
	if got := Path(); got != "/opt/py/bin/python3" {
		t.Errorf("Path() = %q, want the variable's /opt/py/bin/python3", got)
	}
}
