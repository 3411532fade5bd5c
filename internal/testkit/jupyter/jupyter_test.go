package jupyter

import (
	"net/http"
	"path/filepath"
	"testing"
)

// TestStart: the server answers its REST API with the token, a session starts a kernel
// the server lists, and the server's info file is in RuntimeDir.
func TestStart(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a notebook server")
	}
	s := Start(t)
	sess := s.NewSession(t, "nb.ipynb")
	if sess.ID == "" || sess.Kernel.ID == "" {
		t.Fatalf("session %+v", sess)
	}
	var kernels []struct {
		ID string `json:"id"`
	}
	s.API(t, http.MethodGet, "api/kernels", nil, &kernels)
	if len(kernels) != 1 || kernels[0].ID != sess.Kernel.ID {
		t.Errorf("kernels %+v, want the session's %s", kernels, sess.Kernel.ID)
	}
	if infos, _ := filepath.Glob(filepath.Join(s.RuntimeDir, "nbserver-*.json")); len(infos) != 1 {
		t.Errorf("server info files %v in %s", infos, s.RuntimeDir)
	}
}
