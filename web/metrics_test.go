package web

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/leakscope/leakscope/analysis"
	"github.com/leakscope/leakscope/cmd/leakscope/bundles"
	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	dto "github.com/prometheus/client_model/go"
)

// scrape fetches /metrics and parses the text exposition format.
func scrape(t *testing.T, h http.Handler) map[string]*dto.MetricFamily {
	t.Helper()
	rec := do(t, h, http.MethodGet, MetricsPath, nil, nil, "Accept", "text/plain")
	if rec.Code != http.StatusOK {
		t.Fatalf("GET /metrics: %d %s", rec.Code, rec.Body.String())
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(bytes.NewReader(rec.Body.Bytes()))
	if err != nil {
		t.Fatalf("parse /metrics: %v", err)
	}
	return fams
}

// value returns the value of the series of family name whose labels
// include want, and how many series matched.
func value(fams map[string]*dto.MetricFamily, name string, want map[string]string) (float64, int) {
	f := fams[name]
	if f == nil {
		return 0, 0
	}
	var v float64
	var n int
	for _, m := range f.Metric {
		ok := true
		for k, wv := range want {
			found := false
			for _, l := range m.Label {
				if l.GetName() == k && l.GetValue() == wv {
					found = true
				}
			}
			ok = ok && found
		}
		if ok {
			n++
			switch {
			case m.Gauge != nil:
				v = m.Gauge.GetValue()
			case m.Counter != nil:
				v = m.Counter.GetValue()
			}
		}
	}
	return v, n
}

// TestMetricsFromReport uploads a real capture and checks that every
// per-capture and per-suspect series equals the field of the capture's
// report that the other views show, and that the upload counters count.
func TestMetricsFromReport(t *testing.T) {
	fx := getFixture(t)
	s, h := newServer(t, Options{})
	var up struct{ ID string }
	if rec := do(t, h, http.MethodPost, "/api/captures", fx.archive, &up, "User-Agent", "leakscope-agent/test"); rec.Code != http.StatusCreated {
		t.Fatalf("upload: %d %s", rec.Code, rec.Body.String())
	}
	if rec := do(t, h, http.MethodPost, "/api/captures", []byte("not an archive"), nil); rec.Code != http.StatusBadRequest {
		t.Fatalf("bad upload: %d", rec.Code)
	}
	c, release, err := s.Acquire(up.ID)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := c.Report()
	release()
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Suspects) == 0 {
		t.Fatal("fixture has no suspects")
	}
	fams := scrape(t, h)
	capL := map[string]string{"capture": c.b.Manifest.CaptureID}
	last := rep.Series.Goroutines[len(rep.Series.Goroutines)-1].Value
	checks := []struct {
		name string
		want float64
	}{
		{"leakscope_capture_goroutines", last},
		{"leakscope_capture_peak_goroutines", float64(rep.Bundle.PeakGoroutines)},
		{"leakscope_capture_suspects", float64(len(rep.Suspects))},
		{"leakscope_capture_analysis_failed", 0},
	}
	for _, c := range checks {
		if got, n := value(fams, c.name, capL); n != 1 || got != c.want {
			t.Errorf("%s: %d series, value %g; report says %g", c.name, n, got, c.want)
		}
	}
	for _, sp := range rep.Suspects[:min(len(rep.Suspects), DefaultMetricsSuspects)] {
		l := map[string]string{"capture": c.b.Manifest.CaptureID, "suspect": sp.ID, "pattern": sp.Pattern, "location": sp.Location}
		if got, n := value(fams, "leakscope_suspect_score", l); n != 1 || got != sp.Score {
			t.Errorf("%s score: %d series, %g; report %g", sp.ID, n, got, sp.Score)
		}
		count, growth := "leakscope_suspect_goroutines", "leakscope_suspect_goroutine_growth_per_second"
		if sp.Kind == analysis.KindHeap {
			count, growth = "leakscope_suspect_heap_bytes", "leakscope_suspect_heap_growth_bytes_per_second"
		}
		if got, n := value(fams, count, l); n != 1 || got != float64(sp.Count) {
			t.Errorf("%s %s: %d series, %g; report %d", sp.ID, count, n, got, sp.Count)
		}
		if got, n := value(fams, growth, l); n != 1 || got != sp.GrowthPerMin/60 {
			t.Errorf("%s %s: %d series, %g; report %g a minute", sp.ID, growth, n, got, sp.GrowthPerMin)
		}
	}
	for _, c := range []struct {
		labels map[string]string
		want   float64
	}{
		{map[string]string{"result": "stored", "client": "agent"}, 1},
		{map[string]string{"result": "refused", "client": "other"}, 1},
	} {
		if got, n := value(fams, "leakscope_uploads_total", c.labels); n != 1 || got != c.want {
			t.Errorf("uploads %v: %d series, %g, want %g", c.labels, n, got, c.want)
		}
	}
	// A deleted capture's series go away with it.
	do(t, h, http.MethodDelete, "/api/captures/"+up.ID, nil, nil)
	fams = scrape(t, h)
	if _, n := value(fams, "leakscope_suspect_score", capL); n != 0 {
		t.Errorf("%d suspect series left after delete", n)
	}
	if got, _ := value(fams, "leakscope_captures_deleted_total", nil); got != 1 {
		t.Errorf("deleted counter %g, want 1", got)
	}
}

// TestFleetAPI uploads one capture as if from two nodes (the second
// bundle's manifest names another node, so the workbench stores both) and
// checks the fleet view counts both nodes for every leak of the report.
func TestFleetAPI(t *testing.T) {
	fx := getFixture(t)
	s, h := newServer(t, Options{})
	var a, b struct{ ID string }
	do(t, h, http.MethodPost, "/api/captures", fx.archive, &a)
	do(t, h, http.MethodPost, "/api/captures", onNode(t, fx.dir, "other-node"), &b)
	if a.ID == "" || b.ID == a.ID {
		t.Fatalf("uploads stored as %q and %q; want two captures", a.ID, b.ID)
	}
	cb, release, err := s.Acquire(b.ID)
	if err != nil {
		t.Fatal(err)
	}
	if cb.b.Manifest.Node != "other-node" {
		t.Fatalf("second capture's node %q", cb.b.Manifest.Node)
	}
	service := cb.b.Manifest.Target.Service()
	rep, err := cb.Report()
	release()
	if err != nil {
		t.Fatal(err)
	}
	var list struct {
		Services []struct {
			Service  string
			Captures int
			Nodes    int
		}
	}
	do(t, h, http.MethodGet, "/api/fleet", nil, &list)
	if len(list.Services) != 1 || list.Services[0].Service != service || list.Services[0].Captures != 2 || list.Services[0].Nodes != 2 {
		t.Fatalf("services %+v", list.Services)
	}
	var view struct {
		Leaks []struct {
			Location string
			Nodes    []string
			Captures int
			MaxScore float64 `json:"max_score"`
		}
	}
	rec := do(t, h, http.MethodGet, "/api/fleet?service="+service, nil, &view)
	if rec.Code != http.StatusOK || len(view.Leaks) != len(rep.Suspects) || len(view.Leaks) == 0 {
		t.Fatalf("fleet view: %d, %d leaks for %d suspects", rec.Code, len(view.Leaks), len(rep.Suspects))
	}
	for i, l := range view.Leaks {
		if len(l.Nodes) != 2 || l.Captures != 2 {
			t.Errorf("leak %d %s: nodes %v, %d captures; want both", i, l.Location, l.Nodes, l.Captures)
		}
	}
	if rec := do(t, h, http.MethodGet, "/api/fleet?service=nosuch", nil, nil); rec.Code != http.StatusNotFound {
		t.Errorf("unknown service: %d", rec.Code)
	}
}

// onNode returns an archive of a copy of the bundle dir whose manifest
// names node: the same capture as another node would have sent it.
func onNode(t *testing.T, dir, node string) []byte {
	t.Helper()
	return editManifest(t, dir, func(m map[string]any) { m["node"] = node })
}

// editManifest returns an archive of a copy of the bundle dir with its
// manifest changed by edit.
func editManifest(t *testing.T, dir string, edit func(map[string]any)) []byte {
	t.Helper()
	cp := filepath.Join(t.TempDir(), filepath.Base(dir))
	if err := os.CopyFS(cp, os.DirFS(dir)); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(cp, bundle.ManifestFile)
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	edit(m)
	if raw, err = json.Marshal(m); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := bundle.Pack(cp, &buf, bundle.FormatTarGzip); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestFleetLeavesOutSamples: the sample captures a new workbench ships
// with are not the user's fleet; a capture naming no program is listed
// apart, compared with nothing.
func TestFleetLeavesOutSamples(t *testing.T) {
	fx := getFixture(t)
	s, err := openStoreT(t, t.TempDir(), bundles.FS, bundle.Limits{MaxBytes: 64 << 20, MaxFiles: 200}, nil)
	if err != nil {
		t.Fatal(err)
	}
	h := NewRouter(s, Options{Loopback: true})
	var a, b struct{ ID string }
	do(t, h, http.MethodPost, "/api/captures", fx.archive, &a)
	do(t, h, http.MethodPost, "/api/captures", editManifest(t, fx.dir, func(m map[string]any) {
		m["node"], m["capture_id"] = "", "anonymous"
		m["target"] = map[string]any{}
	}), &b)
	var list struct {
		Services []struct {
			Service  string
			Captures int
		}
		Unidentified []struct{ ID string }
	}
	do(t, h, http.MethodGet, "/api/fleet", nil, &list)
	if len(list.Services) != 1 || list.Services[0].Captures != 1 {
		t.Errorf("services %+v; want the one upload's, without the %d samples", list.Services, len(s.List())-2)
	}
	if len(list.Unidentified) != 1 || list.Unidentified[0].ID != b.ID {
		t.Errorf("unidentified %+v, want %s", list.Unidentified, b.ID)
	}
}
