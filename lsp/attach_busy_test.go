package lsp

import (
	"bufio"
	"context"
	"encoding/json"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/premortem/premortem/internal/testkit/python"
)

// iopubWatcher is a jupyter_client subscriber printing every IOPub message's type, parent
// and state as JSON lines; it sends the kernel nothing.
const iopubWatcher = `import sys, json, time
from jupyter_client import BlockingKernelClient
kc = BlockingKernelClient(connection_file=sys.argv[1])
kc.load_connection_file()
kc.start_channels(shell=False, iopub=True, stdin=False, hb=False, control=False)
time.sleep(1.0)
print(json.dumps({"type": "ready"}), flush=True)
while True:
    try:
        m = kc.get_iopub_msg(timeout=0.2)
    except Exception:
        continue
    p = m["parent_header"]
    print(json.dumps({"type": m["msg_type"], "parent": p.get("msg_id", ""), "session": p.get("session", ""), "state": m["content"].get("execution_state", "")}), flush=True)
`

type iopubLine struct {
	Type, Parent, Session, State string
}

// TestAttachToBusyKernel: attaching with the command while the user's cell runs reports
// "waiting for the kernel to be idle" and sends the kernel nothing: a subscriber on IOPub
// sees no message answering anyone but the user's cell before that cell's idle (every
// request on shell or control would show up as its busy/idle pair). Once the cell ends,
// the rules diagnostic comes.
func TestAttachToBusyKernel(t *testing.T) {
	l := launchKernelIn(t, t.TempDir())
	n := execute(t, l, restartSetup)
	watch := exec.Command(python.Path(), "-c", iopubWatcher, l.ConnectionFile)
	out, err := watch.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := watch.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = watch.Process.Kill()
		_ = watch.Wait()
	})
	var mu sync.Mutex
	var lines []iopubLine
	ready := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			var ln iopubLine
			if json.Unmarshal(sc.Bytes(), &ln) != nil {
				continue
			}
			if ln.Type == "ready" {
				close(ready)
				continue
			}
			mu.Lock()
			lines = append(lines, ln)
			mu.Unlock()
		}
	}()
	select {
	case <-ready:
	case <-time.After(30 * time.Second):
		t.Fatal("the IOPub watcher did not start")
	}

	c := restartServer(t, t.TempDir(), n, false)
	execDone := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		_, err := l.Execute(ctx, "import time; time.sleep(5)")
		execDone <- err
	}()
	eventually(t, "the user's cell on IOPub", func() bool {
		mu.Lock()
		defer mu.Unlock()
		for _, ln := range lines {
			if ln.Type == "execute_input" {
				return true
			}
		}
		return false
	})
	var st KernelStatus
	c.callOK("workspace/executeCommand", map[string]any{"command": CommandAttachKernel, "arguments": []any{l.ConnectionFile}}, &st)
	if st.State != StatusBusy || !strings.Contains(st.Detail, "waiting for the kernel to be idle") {
		t.Errorf("attach result while the cell runs: %+v, want busy, waiting for the kernel to be idle", st)
	}
	if err := <-execDone; err != nil {
		t.Fatal(err)
	}
	target := cellURI(nbPath, 1)
	c.wait("the rules finding once the cell ended", func() bool { return c.hasCode(target, restartFound) })

	mu.Lock()
	defer mu.Unlock()
	user, userIdle := "", -1
	for i, ln := range lines {
		if ln.Type == "execute_input" && user == "" {
			user = ln.Parent
		}
		if user != "" && ln.Parent == user && ln.Type == "status" && ln.State == "idle" {
			userIdle = i
			break
		}
	}
	if userIdle < 0 {
		t.Fatalf("the watcher never saw the user's cell end: %+v", lines)
	}
	before, after := 0, 0
	for i, ln := range lines {
		if ln.Parent == user {
			continue
		}
		if i < userIdle {
			before++
		} else {
			after++
		}
	}
	if before != 0 {
		t.Errorf("%d IOPub message(s) answered premortem while the user's cell ran; want 0: %+v", before, lines[:userIdle+1])
	}
	if after == 0 {
		t.Error("the watcher saw no message of premortem's at all: it cannot witness anything")
	}
}
