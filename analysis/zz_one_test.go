package analysis

import (
	"fmt"
	"os"
	"testing"
	"time"
)

func TestZZOne(t *testing.T) {
	p := os.Getenv("ONE")
	if p == "" {
		t.Skip()
	}
	b, _ := os.ReadFile(p)
	for i := 0; i < 3000; i++ {
		t0 := time.Now()
		tr := parseTree(b, nil)
		if d := time.Since(t0); d > 100*time.Millisecond || i%500 == 0 {
			fmt.Println("parsed", i, tr != nil, d)
		}
		if tr != nil {
			tr.Close()
		}
	}
}
