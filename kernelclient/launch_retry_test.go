package kernelclient

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/premortem/premortem/internal/testkit/python"
)

// TestLaunchRetriesOnPortClash: when another process takes one of the ports between our
// choosing it and the kernel binding it, Launch starts the kernel again on fresh ports.
func TestLaunchRetriesOnPortClash(t *testing.T) {
	python.Require(t, "ipykernel")
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	clashes := 0
	pickPorts = func(n int) ([]int, error) {
		ports, err := freePorts(n)
		if err == nil && clashes == 0 {
			clashes++
			ports[1] = taken.Addr().(*net.TCPAddr).Port // IOPub: the kernel cannot bind it
		}
		return ports, err
	}
	defer func() { pickPorts = freePorts }()

	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	l, err := Launch(ctx, LaunchOptions{Python: python.Path()})
	if err != nil {
		t.Fatalf("Launch after a port clash: %v", err)
	}
	defer l.Shutdown(context.Background())
	if clashes != 1 {
		t.Fatalf("the clash was not provoked (clashes=%d)", clashes)
	}
	if _, err := l.Execute(ctx, "1+1"); err != nil {
		t.Fatalf("execute on the relaunched kernel: %v", err)
	}
}
