package capture

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/leakscope/leakscope/ingest/bundle"
)

// TestCaptureEndFinishesSnapshot ends a capture while the target is half
// way through sending a dump: the dump still completes, so no partial
// dump (a snapshot of a few goroutines) stands beside the final one.
func TestCaptureEndFinishesSnapshot(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a live process")
	}
	t.Parallel()
	p := startSample(t, "stable-pool")
	var dumps atomic.Int32
	halfway := make(chan struct{})
	// The second dump is sent in two halves, 300 ms apart; the capture
	// is interrupted in between.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		resp, err := http.Get(p.URL + r.URL.RequestURI())
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		for k, v := range resp.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(resp.StatusCode)
		if r.URL.Path == "/debug/pprof/goroutine" && r.URL.Query().Get("debug") == "2" && dumps.Add(1) == 2 {
			w.Write(body[:len(body)/2])
			w.(http.Flusher).Flush()
			close(halfway)
			time.Sleep(300 * time.Millisecond)
			body = body[len(body)/2:]
		}
		w.Write(body)
	}))
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-halfway
		cancel()
	}()
	out := filepath.Join(t.TempDir(), "c.lsb")
	sum, err := Run(ctx, Options{URL: srv.URL, Out: out, Interval: time.Second, NoEBPF: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Reason != EndInterrupted {
		t.Errorf("reason %q, want %q", sum.Reason, EndInterrupted)
	}
	m, err := bundle.ReadManifest(out)
	if err != nil {
		t.Fatal(err)
	}
	var n int
	for _, a := range m.Artifacts {
		if a.Kind != bundle.SourceDump {
			continue
		}
		n++
		if a.Status != bundle.StatusComplete {
			t.Errorf("dump %s: %s %s", a.Name, a.Status, a.Detail)
		}
	}
	if n != 3 {
		t.Errorf("%d dumps, want 3: the first round's, the one in flight at the end, the final one", n)
	}
}
