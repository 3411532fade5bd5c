package analysis

import (
	"fmt"
	"math/rand"
	"os"
	"sync/atomic"
	"testing"
	"time"
)

func TestZZHang(t *testing.T) {
	if os.Getenv("HANG") == "" {
		t.Skip()
	}
	var cur atomic.Value
	var stage atomic.Value
	cur.Store("")
	stage.Store("")
	var last atomic.Int64
	go func() {
		for {
			time.Sleep(time.Second)
			if time.Now().UnixNano()-last.Load() > int64(5*time.Second) {
				fmt.Printf("HANG stage=%s input=%q\n", stage.Load(), cur.Load())
				os.Exit(3)
			}
		}
	}()
	r := rand.New(rand.NewSource(1))
	alpha := []byte("abcxyz_019 \t\n\r\f\\'\"#%!?()[]{}:;.,=+-*/@<>&|^~\x00\x1e\xe2\x80\x8b\xf0\x9f\x98\x80é")
	seeds := []string{"x = 1\nprint(x)", "%%time\ny = [i for i in z]", "!ls\n%cd ..\ndf?", "def f(:\n  pass", "class C:\n    x = [y for y in x]"}
	var c Cache
	for i := 0; i < 70000; i++ {
		s := []byte(seeds[r.Intn(len(seeds))])
		if os.Getenv("HANG") == "bytes" {
			s = make([]byte, r.Intn(1200))
			r.Read(s)
		}
		for k := r.Intn(30); k > 0; k-- {
			switch r.Intn(3) {
			case 0:
				if len(s) > 0 {
					j := r.Intn(len(s))
					s = append(s[:j], s[j+1:]...)
				}
			default:
				j := r.Intn(len(s) + 1)
				b := alpha[r.Intn(len(alpha))]
				s = append(s[:j], append([]byte{b}, s[j:]...)...)
			}
		}
		last.Store(time.Now().UnixNano())
		cur.Store(string(s))
		stage.Store("mask")
		m := maskCell(string(s))
		stage.Store("treesitter")
		os.WriteFile("/tmp/hang-input.bin", m.src, 0o644)
		os.WriteFile("/tmp/hang-iter.txt", []byte(fmt.Sprint(i)), 0o644)
		t0 := time.Now()
		tr := parseTree(m.src, nil)
		if d := time.Since(t0); d > 50*time.Millisecond {
			fmt.Printf("iter %d len %d took %v\n", i, len(m.src), d)
			os.WriteFile(fmt.Sprintf("/tmp/slow-%d.bin", i), m.src, 0o644)
		}
		stage.Store("mirror")
		root := mirror(tr)
		if tr != nil {
			tr.Close()
		}
		stage.Store("facts")
		buildFacts(string(s), m, root)
		stage.Store("cache")
		if os.Getenv("NOCACHE") == "" {
			c.Facts("x", string(s))
		}
	}
}
