package capture

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/http/pprof"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// lockedBuffer is a progress writer the capture and the test share.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestCaptureWarnsWhenBehind serves this process's pprof handlers with
// the goroutine dump slower than the capture's interval: the capture
// says it falls behind.
func TestCaptureWarnsWhenBehind(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/goroutine") && r.URL.Query().Get("debug") == "2" {
			time.Sleep(1500 * time.Millisecond)
		}
		pprof.Index(w, r)
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	var progress lockedBuffer
	o := Options{URL: srv.URL, Out: filepath.Join(t.TempDir(), "b.lsb"), Duration: 4 * time.Second, Interval: time.Second, NoEBPF: true, Tool: "test"}
	if _, err := Run(context.Background(), o, &progress); err != nil {
		t.Fatalf("capture: %v\n%s", err, progress.String())
	}
	if !strings.Contains(progress.String(), "falling behind: a snapshot round took") {
		t.Errorf("no warning that the capture fell behind its interval:\n%s", progress.String())
	}
}
