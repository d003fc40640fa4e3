package capture

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/pprof"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/leakscope/leakscope/ingest/bundle"
)

// htmlEverywhere answers every path with 200 and an HTML page, as a web
// app or a login proxy in front of the target does.
var htmlEverywhere = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	io.WriteString(w, "<!doctype html><html><head><title>Sign in</title></head><body>Please sign in</body></html>")
})

// TestCaptureNotPprof: a server that answers 200 with HTML on every path
// is refused before anything is recorded, with an error naming the URL,
// what came back and what to do.
func TestCaptureNotPprof(t *testing.T) {
	srv := httptest.NewServer(htmlEverywhere)
	defer srv.Close()
	out := filepath.Join(t.TempDir(), "html.lsb")
	_, err := Run(context.Background(), Options{URL: srv.URL, Out: out, Duration: 2 * time.Second, Interval: time.Second, NoEBPF: true}, nil)
	var np *NotPprofError
	if !errors.As(err, &np) {
		t.Fatalf("capture of an HTML server: err %v, want a NotPprofError", err)
	}
	for _, want := range []string{srv.URL + "/debug/pprof/goroutine?debug=1", "text/html", "<!doctype html>", "net/http/pprof", "--url"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}

// TestCaptureValidatesArtifacts: a target whose goroutine endpoints are
// real net/http/pprof but whose other paths answer HTML. The dump source
// is complete; pprof and trace are failed, saying what came back; no HTML
// is ingested as a profile. When not even the dump is real, the capture
// ends with an error at the first artifact.
func TestCaptureValidatesArtifacts(t *testing.T) {
	mux := http.NewServeMux()
	mux.Handle("/debug/pprof/goroutine", pprof.Handler("goroutine"))
	mux.Handle("/", htmlEverywhere)
	srv := httptest.NewServer(mux)
	defer srv.Close()
	out := filepath.Join(t.TempDir(), "half.lsb")
	var log strings.Builder
	_, err := Run(context.Background(), Options{URL: srv.URL, Out: out, Duration: 2 * time.Second, Interval: time.Second,
		TraceWindow: time.Second, CPUWindow: time.Second, NoEBPF: true}, &syncWriter{w: &log})
	if err != nil {
		t.Fatalf("capture: %v\n%s", err, log.String())
	}
	b, err := bundle.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	if s := source(t, b.Manifest, bundle.SourceDump); s.Status != bundle.StatusComplete {
		t.Errorf("dump source %q (%s)", s.Status, s.Detail)
	}
	for _, k := range []string{bundle.SourcePprof, bundle.SourceTrace} {
		s := source(t, b.Manifest, k)
		// The goroutine profile is real, so pprof has usable artifacts
		// beside the HTML heap profiles; the trace has none.
		want := bundle.StatusFailed
		if k == bundle.SourcePprof {
			want = bundle.StatusComplete
		}
		if s.Status != want || !strings.Contains(s.Detail, "text/html") || !strings.Contains(s.Detail, "failed") && want == bundle.StatusComplete {
			t.Errorf("source %s: %q (%s), want %q with the reason", k, s.Status, s.Detail, want)
		}
	}
	for _, a := range b.Manifest.Artifacts {
		html := a.Profile != "goroutine" && a.Kind != bundle.SourceDump
		if html && (a.Status != bundle.StatusFailed || a.Rows != 0) {
			t.Errorf("%s: HTML reply kept as %q with %d rows", a.Name, a.Status, a.Rows)
		}
		if !html && a.Status != bundle.StatusComplete {
			t.Errorf("%s: real reply %q (%s)", a.Name, a.Status, a.Detail)
		}
	}

	// Only the probe's path is real: the capture stops at the first dump.
	probeOnly := http.NewServeMux()
	probeOnly.HandleFunc("/debug/pprof/goroutine", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("debug") == "1" {
			pprof.Handler("goroutine").ServeHTTP(w, r)
			return
		}
		htmlEverywhere(w, r)
	})
	probeOnly.Handle("/", htmlEverywhere)
	srv2 := httptest.NewServer(probeOnly)
	defer srv2.Close()
	out2 := filepath.Join(t.TempDir(), "probe.lsb")
	_, err = Run(context.Background(), Options{URL: srv2.URL, Out: out2, Duration: time.Minute, Interval: time.Second, NoEBPF: true}, nil)
	var np *NotPprofError
	if !errors.As(err, &np) || !strings.Contains(err.Error(), "debug=2") {
		t.Fatalf("err %v, want a NotPprofError for the dump", err)
	}
	b2, err := bundle.Open(out2)
	if err != nil {
		t.Fatal(err)
	}
	// It stopped after its first round: one dump, no final snapshot.
	if n := countKind(b2.Manifest, bundle.SourceDump); n != 1 {
		t.Errorf("%d dump replies recorded; the capture should stop after the first round", n)
	}
	if s := source(t, b2.Manifest, bundle.SourceDump); s.Status != bundle.StatusFailed {
		t.Errorf("dump source %q (%s), want failed", s.Status, s.Detail)
	}
}
