package eval

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/premortem/premortem/llm"
)

// Versions of a JunoBench case: the buggy target crashes, the fixed one does not.
const (
	versionBuggy = "buggy"
	versionFixed = "fixed"
)

// evalCase is one JunoBench-format case: both versions plus its desc.csv row.
type evalCase struct {
	ID        string
	Group     string // library: pandas, torch, ..., NBspecific
	RootCause string
	Ename     string // lower case, as desc.csv has it
	CrashLine string // the traceback's ----> line (a code snippet)
	Versions  map[string]*caseVersion
	// Crane holds CRANE-LLM's per-model labels (C, W, RW, PC) for the reproduced (buggy)
	// and fixed instances, without -> with runtime information.
	Crane map[string]craneLabels
	// Dir is the case folder; DataGen the synthetic-data generator, "" when the case cannot
	// run offline.
	Dir     string
	DataGen string
}

// craneLabels are one model's labels for one case.
type craneLabels struct {
	BuggyNoRT, BuggyRT, FixedNoRT, FixedRT string
}

// caseVersion is the JSON of cases/<id>/{buggy,fixed}.json.
type caseVersion struct {
	Executed []struct {
		ExecutionCount int    `json:"execution_count"`
		CodeCellID     int    `json:"code_cell_id"`
		Code           string `json:"code"`
	} `json:"executed"`
	Target struct {
		CodeCellID int    `json:"code_cell_id"`
		Code       string `json:"code"`
	} `json:"target"`
}

// input is the LLM input of a version in the code setting: the executed cells in run order,
// the target, the lexical slice, no facts.
func (v *caseVersion) input() llm.Input {
	var in llm.Input
	for i, c := range v.Executed {
		in.Executed = append(in.Executed, llm.CellText{Index: i, ExecutionOrder: i + 1, Text: c.Code})
	}
	in.Target = llm.CellText{Index: len(v.Executed), Text: v.Target.Code}
	in.Dependencies = llm.SliceDependencies(in.Executed, in.Target.Text)
	if in.Dependencies == nil {
		in.Dependencies = []int{}
	}
	return in
}

// craneModels are the models of desc.csv's CRANE-LLM columns.
var craneModels = []string{"gemini", "qwen", "gpt5"}

// loadCases reads the cases under dir whose ids are in ids (all when empty), with desc
// (default: desc.csv beside dir) and the data generators in data (default: data beside dir).
func loadCases(dir, desc, data string, ids []string) ([]*evalCase, error) {
	if desc == "" {
		desc = filepath.Join(filepath.Dir(filepath.Clean(dir)), "desc.csv")
	}
	if data == "" {
		data = filepath.Join(filepath.Dir(filepath.Clean(dir)), "data")
	}
	rows, err := readDesc(desc)
	if err != nil {
		return nil, err
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("read cases: %w", err)
	}
	want, missing := map[string]bool{}, map[string]bool{}
	for _, id := range ids {
		want[id] = true
		missing[id] = true
	}
	var out []*evalCase
	for _, e := range entries {
		if !e.IsDir() || (len(want) > 0 && !want[e.Name()]) {
			continue
		}
		row, ok := rows[e.Name()]
		if !ok {
			return nil, fmt.Errorf("case %s has no row in %s", e.Name(), desc)
		}
		c := &evalCase{
			ID: e.Name(), Group: row["group"], RootCause: row["root_cause"], Ename: strings.ToLower(row["ename"]),
			CrashLine: row["crash_line"], Versions: map[string]*caseVersion{}, Dir: filepath.Join(dir, e.Name()),
			Crane: parseCrane(row["crane_diag_reproduced(-RT>+RT)"], row["crane_fixed(-RT>+RT)"]),
		}
		for _, ver := range []string{versionBuggy, versionFixed} {
			b, err := os.ReadFile(filepath.Join(c.Dir, ver+".json"))
			if err != nil {
				return nil, fmt.Errorf("case %s: %w", c.ID, err)
			}
			var cv caseVersion
			if err := json.Unmarshal(b, &cv); err != nil {
				return nil, fmt.Errorf("case %s %s.json: %w", c.ID, ver, err)
			}
			c.Versions[ver] = &cv
		}
		if gen := filepath.Join(data, c.ID, "make_data.py"); fileExists(gen) {
			c.DataGen = gen
		}
		delete(missing, c.ID)
		out = append(out, c)
	}
	if len(missing) > 0 {
		var ids []string
		for id := range missing {
			ids = append(ids, id)
		}
		sort.Strings(ids)
		return nil, fmt.Errorf("no such cases in %s: %s", dir, strings.Join(ids, ", "))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

func readDesc(path string) (map[string]map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read case descriptions: %w", err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		return nil, fmt.Errorf("parse %s: %w", path, err)
	}
	if len(recs) == 0 {
		return nil, fmt.Errorf("%s is empty", path)
	}
	head := recs[0]
	out := map[string]map[string]string{}
	for _, r := range recs[1:] {
		row := map[string]string{}
		for i, h := range head {
			if i < len(r) {
				row[h] = r[i]
			}
		}
		out[row["id"]] = row
	}
	return out, nil
}

// parseCrane reads "gemini:C>C;qwen:W>C;gpt5:RW>C" for the reproduced and fixed instances.
func parseCrane(reproduced, fixed string) map[string]craneLabels {
	out := map[string]craneLabels{}
	split := func(s string) map[string][2]string {
		m := map[string][2]string{}
		for _, part := range strings.Split(s, ";") {
			model, labels, ok := strings.Cut(strings.TrimSpace(part), ":")
			if !ok {
				continue
			}
			before, after, _ := strings.Cut(labels, ">")
			m[model] = [2]string{before, after}
		}
		return m
	}
	r, f := split(reproduced), split(fixed)
	for _, m := range craneModels {
		if _, ok := r[m]; !ok {
			continue
		}
		out[m] = craneLabels{BuggyNoRT: r[m][0], BuggyRT: r[m][1], FixedNoRT: f[m][0], FixedRT: f[m][1]}
	}
	return out
}

// crashLines returns the 1-based lines of target that the recorded crash line designates:
// lines whose text contains the snippet (whitespace ignored), each extended over the
// continuation lines of a statement spanning several lines. nil when nothing matches.
func crashLines(target, snippet string) []int {
	norm := func(s string) string { return strings.Join(strings.Fields(s), "") }
	want := norm(snippet)
	if want == "" {
		return nil
	}
	lines := strings.Split(target, "\n")
	var out []int
	seen := map[int]bool{}
	add := func(n int) {
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	matches := func(got string) bool {
		return got != "" && (strings.Contains(got, want) || (len(got) >= 8 && strings.Contains(want, got)))
	}
	// The snippet may come from a slightly different version of the line (a re-run with
	// other arguments): fall back to the line sharing the longest prefix with it, if long.
	fuzzy := -1
	if !slices.ContainsFunc(lines, func(l string) bool { return matches(norm(l)) }) {
		best := 0
		for i, l := range lines {
			got := norm(l)
			n := 0
			for n < len(got) && n < len(want) && got[n] == want[n] {
				n++
			}
			if n > best && n >= 12 && 10*n >= 4*len(want) {
				best, fuzzy = n, i
			}
		}
	}
	for i, l := range lines {
		if !matches(norm(l)) && i != fuzzy {
			continue
		}
		add(i + 1)
		// A statement left open (brackets) continues on the next lines.
		depth := bracketDepth(l)
		for j := i + 1; depth > 0 && j < len(lines); j++ {
			add(j + 1)
			depth += bracketDepth(lines[j])
		}
	}
	return out
}

func bracketDepth(s string) int {
	d := 0
	for _, r := range s {
		switch r {
		case '(', '[', '{':
			d++
		case ')', ']', '}':
			d--
		}
	}
	return d
}

func fileExists(path string) bool {
	st, err := os.Stat(path)
	return err == nil && !st.IsDir()
}
