package web

import (
	"bytes"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/leakscope/leakscope/dev/bundletest"
	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/ingest/schema"
)

// manySuspects packs a bundle of n goroutine groups, each parked in a
// function of its own and growing over three dumps: n suspects.
func manySuspects(t *testing.T, id string, n int) []byte {
	t.Helper()
	dir := filepath.Join(t.TempDir(), id+".lsb")
	m := bundle.NewManifest(id, "test")
	m.Node = "n1"
	w := bundletest.New(t, dir, m, memory.DefaultAllocator)
	stacks := make([]int64, n)
	for i := range stacks {
		stacks[i] = w.Stack(
			bundle.StackFrame{Function: "runtime.gopark", File: "/go/src/runtime/proc.go", Line: 400},
			bundle.StackFrame{Function: "runtime.chansend1", File: "/go/src/runtime/chan.go", Line: 161},
			bundle.StackFrame{Function: fmt.Sprintf("main.leak%04d", i), File: "/src/main.go", Line: int64(10 + i)},
			bundle.StackFrame{Function: "main.main", File: "/src/main.go", Line: 3},
		)
	}
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano()
	goid := int64(100)
	for snap := range 3 {
		ts := start + int64(snap)*int64(time.Minute)
		for i, sid := range stacks {
			for range 2 * (snap + 1) {
				goid++
				w.Add(schema.Goroutine{SnapshotTS: ts, Goid: goid, State: "chan send", WaitMinutes: int64(snap), StackID: sid,
					CreatorGoid: 1, CreatorFunction: fmt.Sprintf("main.spawn%04d", i), Source: "raw/dump.txt"})
			}
		}
		w.Flush()
	}
	w.Close()
	var buf bytes.Buffer
	if err := bundle.Pack(dir, &buf, bundle.FormatTarZstd); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestMetricsBounded: one upload with hundreds of suspects, and more
// captures of a service than the bound, keep /metrics to a bounded number
// of series: the top suspects one by one, the rest summed, no empty label,
// growth in base units.
func TestMetricsBounded(t *testing.T) {
	s, h := newServer(t, Options{MetricsSuspects: 3, MetricsCaptures: 2})
	const n = 300
	var first struct{ ID string }
	if rec := do(t, h, http.MethodPost, "/api/captures", manySuspects(t, "many-0", n), &first); rec.Code != http.StatusCreated {
		t.Fatalf("upload: %d %s", rec.Code, rec.Body)
	}
	c, release, err := s.Acquire(first.ID)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := c.Report()
	release()
	if err != nil || len(rep.Suspects) < 100 {
		t.Fatalf("%d suspects (%v), want hundreds", len(rep.Suspects), err)
	}
	for i := 1; i < 4; i++ {
		if rec := do(t, h, http.MethodPost, "/api/captures", manySuspects(t, fmt.Sprintf("many-%d", i), 5), nil); rec.Code != http.StatusCreated {
			t.Fatalf("upload %d: %d %s", i, rec.Code, rec.Body)
		}
	}
	rec := do(t, h, http.MethodGet, MetricsPath, nil, nil, "Accept", "text/plain")
	body := rec.Body.String()
	fams := scrape(t, h)
	var series int
	for name, f := range fams {
		if strings.HasPrefix(name, "leakscope_suspect_") || strings.HasPrefix(name, "leakscope_capture_") {
			series += len(f.Metric)
		}
		for _, m := range f.Metric {
			for _, l := range m.Label {
				if l.GetValue() == "" {
					t.Errorf("%s has an empty label %s", name, l.GetName())
				}
			}
		}
	}
	t.Logf("/metrics: %d capture and suspect series, %d bytes, for 4 captures (%d suspects in one)", series, len(body), len(rep.Suspects))
	// 2 captures: 7 capture series, (3 + 1 other) × 3 suspect series.
	if series > 2*(7+4*3) {
		t.Errorf("/metrics has %d capture and suspect series (%d bytes) for 4 captures, want at most %d", series, len(body), 2*(7+4*3))
	}
	if strings.Contains(body, "_per_minute") {
		t.Error("/metrics has a per-minute series")
	}
	if _, k := value(fams, "leakscope_suspect_score", map[string]string{"suspect": "other"}); k == 0 {
		t.Error("no summed series for the suspects past the top")
	}
	svc := map[string]string{"service": bundle.OrUnknown(c.b.Manifest.Target.Service())}
	if got, _ := value(fams, "leakscope_service_captures", svc); got != 4 {
		t.Errorf("leakscope_service_captures %g, want 4", got)
	}
	if got, _ := value(fams, "leakscope_service_captures_omitted", svc); got != 2 {
		t.Errorf("leakscope_service_captures_omitted %g, want 2", got)
	}
}

// TestMetricsTokenOffLoopback: off loopback, /metrics needs the token,
// also with public reads.
func TestMetricsTokenOffLoopback(t *testing.T) {
	_, h := newServer(t, Options{Token: "s3", PublicRead: true})
	req := func(hdr ...string) int {
		return do(t, h, http.MethodGet, MetricsPath, nil, nil, hdr...).Code
	}
	if code := req(); code != http.StatusUnauthorized {
		t.Errorf("/metrics without the token: %d, want 401", code)
	}
	if code := req("Authorization", "Bearer s3"); code != http.StatusOK {
		t.Errorf("/metrics with the token: %d", code)
	}
}
