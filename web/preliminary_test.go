package web

import (
	"bytes"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/ingest/killpoint"
)

// TestPreliminaryReplaced uploads a preliminary copy of a bundle, then the
// final bundle of the same capture id: the list shows the first one marked
// preliminary, one from another node with that capture id is another
// capture, the final one takes its place under the same id, a
// preliminary copy arriving after the final one changes nothing, and
// /c/CAPTUREID leads to the capture page.
func TestPreliminaryReplaced(t *testing.T) {
	f := getFixture(t)
	_, h := newServer(t, Options{})
	link := "/c/web-test"
	if rec := do(t, h, http.MethodGet, link, nil, nil); rec.Code != http.StatusNotFound {
		t.Errorf("GET %s before any upload: %d, want 404", link, rec.Code)
	}
	prelim := editManifest(t, f.dir, func(m map[string]any) { m["preliminary"] = true })
	var up uploadAnswer
	if rec := do(t, h, http.MethodPost, "/api/captures", prelim, &up); rec.Code != http.StatusCreated {
		t.Fatalf("preliminary upload: %d %s", rec.Code, rec.Body)
	}
	var list []captureSummary
	do(t, h, http.MethodGet, "/api/captures", nil, &list)
	if len(list) != 1 || !list[0].Preliminary || list[0].ID != up.ID {
		t.Fatalf("after the preliminary upload the list is %+v, want %s marked preliminary", list, up.ID)
	}
	if rec := do(t, h, http.MethodGet, link, nil, nil); rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != "/#/c/"+up.ID+"/overview" {
		t.Errorf("GET %s: %d to %q, want 303 to the preliminary capture", link, rec.Code, rec.Header().Get("Location"))
	}
	// The same capture id from another node is another capture.
	var other uploadAnswer
	if rec := do(t, h, http.MethodPost, "/api/captures", onNode(t, f.dir, "other-node"), &other); rec.Code != http.StatusCreated || other.ID == up.ID {
		t.Fatalf("another node's bundle of the same capture id: %d %+v, want a capture of its own", rec.Code, other)
	}
	if rec := do(t, h, http.MethodDelete, "/api/captures/"+other.ID, nil, nil); rec.Code != http.StatusOK {
		t.Fatalf("delete %s: %d", other.ID, rec.Code)
	}
	var final uploadAnswer
	if rec := do(t, h, http.MethodPost, "/api/captures", f.archive, &final); rec.Code != http.StatusCreated || final.ID != up.ID {
		t.Fatalf("final upload: %d %+v, want 201 with the preliminary capture's id %s", rec.Code, final, up.ID)
	}
	list = nil
	do(t, h, http.MethodGet, "/api/captures", nil, &list)
	if len(list) != 1 || list[0].Preliminary || list[0].ID != up.ID || list[0].Suspects == nil || *list[0].Suspects == 0 {
		t.Fatalf("after the final upload the list is %+v, want %s alone, final, with its suspects", list, up.ID)
	}
	var again uploadAnswer
	if rec := do(t, h, http.MethodPost, "/api/captures", prelim, &again); rec.Code != http.StatusOK || !again.Duplicate || again.ID != up.ID {
		t.Errorf("a preliminary copy after the final one: %d %+v, want 200 duplicate of %s", rec.Code, again, up.ID)
	}
	list = nil
	do(t, h, http.MethodGet, "/api/captures", nil, &list)
	if len(list) != 1 || list[0].Preliminary {
		t.Errorf("a late preliminary copy changed the list: %+v", list)
	}
}

// TestStoreKillDuringSupersede sends the final bundle of a stored
// preliminary capture in a child killed at every step of the replacement:
// reopened, the store holds one capture under the preliminary one's id,
// final, and nothing staged.
func TestStoreKillDuringSupersede(t *testing.T) {
	f := getFixture(t)
	archive := filepath.Join(t.TempDir(), "final.tar.gz")
	if err := os.WriteFile(archive, f.archive, 0o644); err != nil {
		t.Fatal(err)
	}
	prelim := editManifest(t, f.dir, func(m map[string]any) { m["preliminary"] = true })
	for _, point := range []string{"store:staged", "store:swapped"} {
		data := t.TempDir()
		s, err := openStoreT(t, data, nil, bundle.Limits{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		id, _, err := s.Add(bytes.NewReader(prelim))
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), childEnv+"="+data+"\n"+archive, killpoint.Env+"="+point)
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != -1 {
			t.Fatalf("%s: not killed there (%v)\n%s", point, err, out)
		}
		s2, err := openStoreT(t, data, nil, bundle.Limits{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		list := s2.List()
		if len(list) != 1 || list[0].id != id || list[0].b.Manifest.Preliminary {
			t.Errorf("killed at %s: the store holds %d captures (first %v), want the final one alone under %s", point, len(list), list, id)
		}
		if es, _ := filepath.Glob(filepath.Join(s2.Dir(), ".*")); len(es) > 0 {
			t.Errorf("killed at %s: %v left", point, es)
		}
	}
}
