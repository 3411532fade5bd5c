package analysis

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/premortem/premortem/notebook"
)

func TestZZJuno(t *testing.T) {
	dir := os.Getenv("JUNO")
	if dir == "" {
		t.Skip()
	}
	cases, _ := filepath.Glob(filepath.Join(dir, "cases", "*"))
	for _, c := range cases {
		for _, kind := range []string{"buggy", "fixed"} {
			b, err := os.ReadFile(filepath.Join(c, kind+".json"))
			if err != nil {
				continue
			}
			var in struct {
				Executed []struct {
					ExecutionCount int    `json:"execution_count"`
					Code           string `json:"code"`
				}
				Target struct{ Code string }
			}
			if err := json.Unmarshal(b, &in); err != nil {
				t.Fatal(err)
			}
			nb := &notebook.Notebook{}
			for i, e := range in.Executed {
				nb.Cells = append(nb.Cells, &notebook.Cell{ID: fmt.Sprintf("c%d", i), Kind: notebook.Code, Text: e.Code, ExecutionOrder: i + 1})
			}
			nb.Cells = append(nb.Cells, &notebook.Cell{ID: "target", Kind: notebook.Code, Text: in.Target.Code})
			res, _ := NewAnalyzer().Analyze(context.Background(), nb, Options{})
			for id, fs := range res.Findings {
				for _, f := range fs {
					fmt.Printf("%s %s %s %s %s: %s\n", filepath.Base(c), kind, id, f.Code, f.Severity, f.Message)
				}
			}
		}
	}
}

func TestZZJunoFacts(t *testing.T) {
	dir := os.Getenv("JUNO")
	if dir == "" {
		t.Skip()
	}
	cases, _ := filepath.Glob(filepath.Join(dir, "cases", "*", "buggy.json"))
	counts := map[string]int{}
	for _, c := range cases {
		b, _ := os.ReadFile(c)
		var in struct {
			Executed []struct{ Code string }
			Target   struct{ Code string }
		}
		json.Unmarshal(b, &in)
		codes := []string{in.Target.Code}
		for _, e := range in.Executed {
			codes = append(codes, e.Code)
		}
		for _, code := range codes {
			f := ParseCell(code)
			if len(f.SyntaxErrors) > 0 {
				fmt.Printf("SYNTAX %s %v\n%s\n", c, f.SyntaxErrors[0], code)
			}
			for _, e := range f.SideEffects {
				counts[string(e.Kind)]++
				if os.Getenv("EFF") == string(e.Kind) {
					fmt.Printf("%s %s\n", e.Kind, e.Call)
				}
			}
			for _, m := range f.Magics {
				fmt.Printf("MAGIC %s %q\n", m.Kind, m.Text)
			}
		}
	}
	fmt.Println(counts)
}
