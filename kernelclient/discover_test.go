package kernelclient

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestReadServerInfo(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name, content string
		wantURL       string
		wantRoot      string
		wantErr       bool
	}{
		{"jpserver-1.json", `{"url": "http://localhost:8888/", "token": "t", "root_dir": "/home/u", "pid": 1, "version": "2.14.0"}`, "http://localhost:8888/", "/home/u", false},
		{"nbserver-2.json", `{"url": "http://127.0.0.1:8889/", "token": "t", "notebook_dir": "/srv/nb", "pid": 2}`, "http://127.0.0.1:8889/", "/srv/nb", false},
		{"jpserver-3.json", `{"token": "t"}`, "", "", true},
		{"jpserver-4.json", `{"url": `, "", "", true},
	}
	for _, tc := range tests {
		path := filepath.Join(dir, tc.name)
		os.WriteFile(path, []byte(tc.content), 0o600)
		si, err := readServerInfo(path)
		if (err != nil) != tc.wantErr {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if err == nil && (si.URL != tc.wantURL || si.RootDir != tc.wantRoot || si.Token != "t") {
			t.Errorf("%s: %+v", tc.name, si)
		}
	}
}

func TestMatchNotebook(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "real")
	os.MkdirAll(real, 0o755)
	nb := filepath.Join(real, "a.ipynb")
	os.WriteFile(nb, []byte("{}"), 0o644)
	link := filepath.Join(dir, "link")
	if err := os.Symlink(real, link); err != nil {
		t.Skip("no symlinks:", err)
	}
	now := time.Now()
	found := []Discovered{
		{ConnectionFile: "old.json", Notebook: nb, ModTime: now.Add(-time.Hour)},
		{ConnectionFile: "new.json", Notebook: filepath.Join(link, "a.ipynb"), ModTime: now},
		{ConnectionFile: "dead.json", Notebook: nb, ModTime: now.Add(time.Hour), Skipped: "stale"},
		{ConnectionFile: "other.json", Notebook: filepath.Join(real, "b.ipynb"), ModTime: now},
	}
	d, err := MatchNotebook(found, filepath.Join(real, ".", "a.ipynb"))
	if err != nil || d.ConnectionFile != "new.json" {
		t.Fatalf("match: %+v %v", d, err)
	}
	if _, err := MatchNotebook(found, filepath.Join(real, "c.ipynb")); !errors.Is(err, ErrNoMatch) {
		t.Fatalf("no match: %v", err)
	}
	if _, err := MatchNotebook(nil, nb); !errors.Is(err, ErrNoMatch) {
		t.Fatalf("empty: %v", err)
	}
}
