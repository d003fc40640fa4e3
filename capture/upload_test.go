package capture

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/leakscope/leakscope/dev/bundletest"
	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/ingest/schema"
)

// makeBundle writes a small real bundle.
func makeBundle(t *testing.T) (string, string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "u.lsb")
	m := bundle.NewManifest("cap-123", "test")
	w := bundletest.New(t, dir, m, memory.DefaultAllocator)
	sid := w.Stack(bundle.StackFrame{Function: "main.leak", File: "main.go", Line: 3})
	for i := int64(1); i <= 100; i++ {
		w.Add(schema.Goroutine{SnapshotTS: 1e18, Goid: i, State: "chan send", StackID: sid})
	}
	w.Raw("dump.txt", "goroutine 1 [running]:\n")
	return w.Close(), m.CaptureID
}

// workbench is a minimal POST /api/captures: it unpacks the body as a
// bundle and answers its id. The first failFirst requests get 503.
type workbench struct {
	t         *testing.T
	dir       string
	token     string
	failFirst int32
	calls     atomic.Int32
}

func (wb *workbench) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n := wb.calls.Add(1)
	if r.Method != http.MethodPost || r.URL.Path != CapturesPath {
		http.Error(w, `{"error":"not found"}`, http.StatusNotFound)
		return
	}
	if r.Header.Get("Authorization") != "Bearer "+wb.token {
		w.WriteHeader(http.StatusUnauthorized)
		w.Write([]byte(`{"error":"bad or missing token"}`))
		return
	}
	if n <= wb.failFirst {
		w.WriteHeader(http.StatusServiceUnavailable)
		w.Write([]byte(`{"error":"store is busy"}`))
		return
	}
	m, err := bundle.Unpack(r.Body, filepath.Join(wb.dir, "got.lsb"), bundle.Limits{})
	if err != nil {
		w.WriteHeader(http.StatusBadRequest)
		json.NewEncoder(w).Encode(map[string]string{"error": err.Error()})
		return
	}
	w.WriteHeader(http.StatusCreated)
	json.NewEncoder(w).Encode(map[string]string{"id": "srv-" + m.CaptureID})
}

func TestUploadRetriesThenSucceeds(t *testing.T) {
	dir, id := makeBundle(t)
	wb := &workbench{t: t, dir: t.TempDir(), token: "s3cret", failFirst: 2}
	srv := httptest.NewServer(wb)
	defer srv.Close()
	var log strings.Builder
	res, err := Upload(context.Background(), dir, UploadOptions{To: srv.URL, Token: "s3cret", Backoff: time.Millisecond, Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	if res.ID != "srv-"+id || res.Attempts != 3 || res.Bytes == 0 {
		t.Errorf("result %+v, want id srv-%s after 3 attempts", res, id)
	}
	if c := strings.Count(log.String(), "503 Service Unavailable: store is busy; retrying"); c != 2 {
		t.Errorf("log has %d retry lines:\n%s", c, log.String())
	}
	b, err := bundle.Open(filepath.Join(wb.dir, "got.lsb"))
	if err != nil {
		t.Fatal(err)
	}
	tables, err := b.Tables(memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	var rows int64
	for _, ti := range tables {
		if ti.Name == schema.TableGoroutines {
			rows = ti.Rows
		}
	}
	if rows != 100 {
		t.Errorf("uploaded bundle has %d goroutine rows, want 100", rows)
	}
}

func TestUploadRefused(t *testing.T) {
	dir, _ := makeBundle(t)
	wb := &workbench{t: t, dir: t.TempDir(), token: "right"}
	srv := httptest.NewServer(wb)
	defer srv.Close()
	_, err := Upload(context.Background(), dir, UploadOptions{To: srv.URL + "/", Token: "wrong", Backoff: time.Millisecond})
	var ue *UploadError
	if !errors.As(err, &ue) || ue.Code != http.StatusUnauthorized || !strings.Contains(err.Error(), "bad or missing token") {
		t.Errorf("err %v, want a 401 UploadError quoting the server", err)
	}
	if n := wb.calls.Load(); n != 1 {
		t.Errorf("a 4xx was retried: %d calls", n)
	}
}

func TestUploadGivesUp(t *testing.T) {
	dir, _ := makeBundle(t)
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close() // connection refused from now on
	_, err := Upload(context.Background(), dir, UploadOptions{To: url, Attempts: 3, Backoff: time.Millisecond})
	if err == nil || !strings.Contains(err.Error(), "gave up after 3 attempts") || !strings.Contains(err.Error(), "connection refused") {
		t.Errorf("err %v", err)
	}
	if _, err := Upload(context.Background(), t.TempDir(), UploadOptions{To: url}); err == nil || !strings.Contains(err.Error(), "manifest") {
		t.Errorf("not a bundle: err %v", err)
	}
}
