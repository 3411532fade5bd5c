// Package scenario reads the txtar scenario files of every suite that tests premortem on
// files under testdata/ (analysis, analysis/rules, judge, lsp, llm), so that one reader
// and one naming of twins serve them all instead of a parser per suite.
//
// A scenario file is a txtar archive (golang.org/x/tools/txtar): a comment, then sections
// opened by "-- NAME --" lines. What this package shares is what the suites have in
// common:
//
//   - the sections in file order, each with its name split into a verb and an argument
//     ("notify textDocument/didOpen", "cell run=1", "cell 3"), since suites such as lsp's
//     and static analysis' put an argument after the section's kind;
//   - the comment's header, the "key: value" lines among its prose (judge's check and
//     fix scenarios keep their expectations there, the editor agreement test reads the
//     same verdict), and
//   - the check-scenario notebook (ran.py, target.py, unrun.py and data files), which
//     judge's check and fix scenarios and lsp's agreement test all turn into one .ipynb.
//
// Each suite still decides which sections and keys it accepts and what they mean: the
// files differ on purpose (a rules scenario is one cell and the inspector's facts, an lsp
// scenario a message sequence), and an unknown section is a suite's error, not this
// package's. Caret markers under cell lines are parsed by internal/testkit/markers.
//
// # Twins
//
// A scenario NAME that shows a finding has a twin NAME_ok (TwinSuffix): the nearby
// correct notebook, cell or kernel state, which must not produce it (no false alarm).
// Every directory uses that one suffix; the retired spellings (-ok, _fixed) meant the same
// thing and are refused by this package's tests.
//
// Fix scenarios (testdata/scenarios/fix) also have NAME_nofix (NoFixSuffix), which is not
// an ok twin: it still crashes, and it is the same repair family in a case where no edit
// keeps the user's intent, so no fix may be offered (the file says "nofix: true"; a rules
// marker says "nofix"). It keeps its own suffix because it asserts the opposite of an ok
// twin: the finding must be there, only its fixes must not.
package scenario

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"

	"github.com/premortem/premortem/notebook"
)

// TwinSuffix ends the name of a scenario's ok twin: the nearby correct code that must not
// produce the scenario's finding (internal/testkit/twins checks every code has a pair).
const TwinSuffix = "_ok"

// NoFixSuffix ends the name of a fix scenario's twin that still crashes but where no fix
// may be offered; see the package doc for why it is not an ok twin.
const NoFixSuffix = "_nofix"

// Ext is the extension of scenario files; a scenario's name is its file name without it.
const Ext = ".txtar"

// File is one parsed scenario file.
type File struct {
	// Path is the file's path as given to Load or Parse, for messages.
	Path string
	// Name is the file's base name without Ext: the subtest's name and, for twins, the
	// name that TwinSuffix or NoFixSuffix extends.
	Name string
	// Comment is the archive's comment: prose, and header lines (see Header).
	Comment string
	// Sections are the archive's sections in file order, which several suites give a
	// meaning to (cell order, message order).
	Sections []Section
	// Header holds the comment's "key: value" lines (see parseHeader).
	Header map[string]string

	archive *txtar.Archive
}

// Section is one "-- NAME --" section of a scenario file.
type Section struct {
	// Name is the section's whole name, as written between the dashes.
	Name string
	// Data is the section's content, every line ending in "\n".
	Data []byte
}

// Verb is the section name's first word ("cell" of "cell run=1", "notify" of
// "notify initialized"): the kind of section, for suites whose names carry arguments.
func (s Section) Verb() string {
	v, _, _ := strings.Cut(s.Name, " ")
	return v
}

// Arg is what follows the section name's first word and a space ("" when nothing does).
func (s Section) Arg() string {
	_, a, _ := strings.Cut(s.Name, " ")
	return a
}

// Text is the section's content without its final newline, as a cell's text (txtar adds
// one to every section; a cell does not end in one).
func (s Section) Text() string {
	return strings.TrimSuffix(string(s.Data), "\n")
}

// Lines are the section's non-blank lines, trimmed: the one-expectation-per-line sections
// (lsp's expect and result, llm's want) read them so.
func (s Section) Lines() []string {
	var out []string
	for _, l := range strings.Split(string(s.Data), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}

// Load reads and parses the scenario file at path, failing t when it cannot.
func Load(t testing.TB, path string) *File {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return Parse(path, data)
}

// Parse parses data as the scenario file path (which names it; it is not read). A txtar
// archive has no syntax errors, so neither has Parse: a file without sections is all
// comment.
func Parse(path string, data []byte) *File {
	a := txtar.Parse(data)
	f := &File{
		Path:    path,
		Name:    strings.TrimSuffix(filepath.Base(path), Ext),
		Comment: string(a.Comment),
		Header:  parseHeader(string(a.Comment)),
		archive: a,
	}
	for _, s := range a.Files {
		f.Sections = append(f.Sections, Section{Name: s.Name, Data: s.Data})
	}
	return f
}

// parseHeader returns the "key: value" lines of a scenario comment, values trimmed; a
// later line of the same key wins. A line is a header line when the text before its
// first colon is one word with no space or tab and the line does not start with "#", so
// prose ("The twin of x: ...") and commented-out keys are not read as expectations.
func parseHeader(comment string) map[string]string {
	h := map[string]string{}
	for _, line := range strings.Split(comment, "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok || strings.HasPrefix(line, "#") || strings.ContainsAny(k, " \t") {
			continue
		}
		h[k] = strings.TrimSpace(v)
	}
	return h
}

// Lookup returns the first section called name.
func (f *File) Lookup(name string) (Section, bool) {
	for _, s := range f.Sections {
		if s.Name == name {
			return s, true
		}
	}
	return Section{}, false
}

// JSON decodes section s into v, failing t with the file and section named.
func (f *File) JSON(t testing.TB, s Section, v any) {
	t.Helper()
	if err := json.Unmarshal(s.Data, v); err != nil {
		t.Fatalf("%s: %s: %v", f.Path, s.Name, err)
	}
}

// Set replaces the data of the first section called name, or appends such a section, so
// a test can re-record part of a scenario (analysis/rules' -update rewrites facts.json).
func (f *File) Set(name string, data []byte) {
	for i := range f.Sections {
		if f.Sections[i].Name == name {
			f.Sections[i].Data = data
			f.archive.Files[i].Data = data
			return
		}
	}
	f.Sections = append(f.Sections, Section{Name: name, Data: data})
	f.archive.Files = append(f.archive.Files, txtar.File{Name: name, Data: data})
}

// Format is the file's text in txtar form, with any Set applied.
func (f *File) Format() []byte {
	return txtar.Format(f.archive)
}

// Root returns the module's root directory (the nearest directory above the test's
// working directory holding go.mod), so suites name testdata the same way from any depth
// (and internal/tidy's checks walk the module from it).
func Root(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		up := filepath.Dir(dir)
		if up == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = up
	}
}

// Dir returns testdata/elem... under the module's root.
func Dir(t testing.TB, elem ...string) string {
	t.Helper()
	return filepath.Join(append([]string{Root(t), "testdata"}, elem...)...)
}

// Paths returns the scenario files of dir, sorted, failing t when there are fewer than
// min: a suite whose glob finds nothing (a moved directory) must not pass by running
// nothing.
func Paths(t testing.TB, dir string, min int) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*"+Ext))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < max(min, 1) {
		t.Fatalf("found %d scenarios in %s, want at least %d", len(files), dir, max(min, 1))
	}
	return files
}

// Run runs fn as a subtest named after each scenario of dir (see Paths), the file loaded
// inside the subtest so a broken file fails only its own.
func Run(t *testing.T, dir string, min int, fn func(t *testing.T, f *File)) {
	t.Helper()
	for _, path := range Paths(t, dir, min) {
		t.Run(strings.TrimSuffix(filepath.Base(path), Ext), func(t *testing.T) { fn(t, Load(t, path)) })
	}
}

// The sections of a check scenario that are notebook cells (see Notebook); every other
// section is a data file written beside the notebook.
const (
	// Ran is a cell that ran; execution counts follow file order.
	Ran = "ran.py"
	// Target is the cell judged; it has not run.
	Target = "target.py"
	// Unrun is a cell that has not run and is not judged.
	Unrun = "unrun.py"
)

// Notebook builds the Python notebook a check scenario describes (judge's check and fix
// scenarios, lsp's agreement test): its Ran, Target and Unrun sections as code cells in
// file order, the Ran ones with execution counts 1, 2, ... in that order. It returns the
// target's cell index and fails t without a Target section. Any other section is a data
// file (WriteData).
func (f *File) Notebook(t testing.TB) (*notebook.Notebook, int) {
	t.Helper()
	nb := notebook.NewPython("")
	target, count := -1, 0
	for _, s := range f.Sections {
		switch s.Name {
		case Ran:
			count++
			nb.AddCode(s.Text(), count)
		case Target:
			target = len(nb.Cells)
			nb.AddCode(s.Text(), 0)
		case Unrun:
			nb.AddCode(s.Text(), 0)
		}
	}
	if target < 0 {
		t.Fatalf("%s has no %s", f.Path, Target)
	}
	return nb, target
}

// WriteData writes every section of a check scenario that is not a cell into dir, under
// its section name: the data the cells read.
func (f *File) WriteData(t testing.TB, dir string) {
	t.Helper()
	for _, s := range f.Sections {
		switch s.Name {
		case Ran, Target, Unrun:
			continue
		}
		if err := os.WriteFile(filepath.Join(dir, s.Name), s.Data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// WriteNotebook writes nb as dir/scenario.ipynb and returns its path.
func WriteNotebook(t testing.TB, dir string, nb *notebook.Notebook) string {
	t.Helper()
	b, err := nb.MarshalIpynb()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "scenario.ipynb")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}
