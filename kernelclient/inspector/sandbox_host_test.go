package inspector

import "testing"

// TestPythonSandboxHost runs test_sandbox_host.py: each probe of what the namespace
// sandbox could share with the host (SysV and POSIX IPC, /proc/sys and cgroups, the
// terminal, keyrings, host shared memory, the scratch space's size) observed from outside
// the shadow child.
func TestPythonSandboxHost(t *testing.T) {
	runPythonTests(t, "test_sandbox_host.py")
}
