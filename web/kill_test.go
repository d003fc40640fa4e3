package web

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/ingest/killpoint"
)

// childEnv makes the test binary, run as a child, add one archive to a
// data directory and exit (see TestMain): "DATA\nARCHIVE".
const childEnv = "LEAKSCOPE_TEST_STORE_CHILD"

func TestMain(m *testing.M) {
	if arg := os.Getenv(childEnv); arg != "" {
		var data, archive string
		fmt.Sscanf(arg, "%s\n%s", &data, &archive)
		f, err := os.Open(archive)
		if err == nil {
			var s *Store
			if s, err = OpenStore(data, nil, bundle.Limits{}, nil); err == nil {
				_, _, err = s.Add(f)
			}
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestStoreKillDuringDuplicateCheck sends an archive the store already
// holds (an agent retrying an upload whose answer it lost) in a child
// killed at every step of Add: reopened, the store holds the bundle once.
func TestStoreKillDuringDuplicateCheck(t *testing.T) {
	f := getFixture(t)
	archive := filepath.Join(t.TempDir(), "a.tar.gz")
	if err := os.WriteFile(archive, f.archive, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, point := range []string{"store:unpacked", "store:checked"} {
		data := t.TempDir()
		s, err := openStoreT(t, data, nil, bundle.Limits{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		af, _ := os.Open(archive)
		if _, _, err := s.Add(af); err != nil {
			t.Fatal(err)
		}
		af.Close()
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), childEnv+"="+data+"\n"+archive, killpoint.Env+"="+point)
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		killed := errors.As(err, &ee) && ee.ExitCode() == -1
		if err != nil && !killed {
			t.Fatalf("%s: %v\n%s", point, err, out)
		}
		if point == "store:unpacked" && !killed {
			t.Errorf("kill point %s never reached", point)
		}
		s2, err := openStoreT(t, data, nil, bundle.Limits{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if n := len(s2.List()); n != 1 {
			t.Errorf("killed at %s: the store holds %d captures of one bundle", point, n)
		}
		if es, _ := filepath.Glob(filepath.Join(s2.Dir(), ".*")); len(es) > 0 {
			t.Errorf("killed at %s: %v left", point, es)
		}
	}
}

// TestUploadedRunningIsInterrupted: a bundle uploaded with a source still
// "running" and a last flush a second ago (an agent killed mid-capture,
// restarted, uploading what it had) reads "interrupted", not "still being
// written".
func TestUploadedRunningIsInterrupted(t *testing.T) {
	f := getFixture(t)
	_, h := newServer(t, Options{})
	archive := editManifest(t, f.dir, func(m map[string]any) {
		srcs := m["sources"].([]any)
		srcs[0].(map[string]any)["status"] = bundle.StatusRunning
		m["last_flush"] = time.Now().Add(-time.Second).UTC().Format(time.RFC3339Nano)
	})
	var up struct{ ID string }
	if rec := do(t, h, http.MethodPost, "/api/captures", archive, &up); rec.Code != http.StatusCreated {
		t.Fatalf("upload: %d %s", rec.Code, rec.Body)
	}
	rec := do(t, h, http.MethodGet, "/api/captures/"+up.ID, nil, nil)
	var c struct {
		Sources []struct{ Kind, Status, Detail string }
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &c); err != nil || len(c.Sources) == 0 {
		t.Fatalf("capture %s: %v", rec.Body, err)
	}
	if s := c.Sources[0]; s.Status != bundle.StatusInterrupted {
		t.Errorf("source %+v, want interrupted", s)
	}
}
