package web

import (
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/leakscope/leakscope/ingest/bundle"
)

// TestAnalysisKeptAcrossRestart: a restarted workbench lists its captures,
// answers /metrics and the fleet view from the analysis kept beside each
// bundle, analysing none again; a kept analysis of another build is not
// used.
func TestAnalysisKeptAcrossRestart(t *testing.T) {
	f := getFixture(t)
	data := t.TempDir()
	s, err := openStoreT(t, data, nil, bundle.Limits{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	h := NewRouter(s, Options{Loopback: true})
	var up struct{ ID string }
	if rec := do(t, h, http.MethodPost, "/api/captures", f.archive, &up); rec.Code != http.StatusCreated {
		t.Fatalf("upload: %d %s", rec.Code, rec.Body)
	}
	var before []captureSummary
	do(t, h, http.MethodGet, "/api/captures", nil, &before)
	if len(before) != 1 || before[0].Suspects == nil || *before[0].Suspects == 0 {
		t.Fatalf("list before the restart: %+v", before)
	}
	if _, err := os.Stat(filepath.Join(s.Dir(), up.ID+reportCacheSuffix)); err != nil {
		t.Fatalf("no analysis kept beside the bundle: %v", err)
	}

	restart := func() http.Handler {
		s, err := openStoreT(t, data, nil, bundle.Limits{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return NewRouter(s, Options{Loopback: true})
	}
	n := analyses.Load()
	h = restart()
	var after []captureSummary
	do(t, h, http.MethodGet, "/api/captures", nil, &after)
	scrape(t, h)
	do(t, h, http.MethodGet, "/api/fleet?service="+after[0].Process.Exe, nil, nil)
	if got := analyses.Load() - n; got != 0 {
		t.Errorf("the restarted workbench analysed %d captures for the list, /metrics and fleet", got)
	}
	if len(after) != 1 || *after[0].Suspects != *before[0].Suspects || after[0].TopSuspect != before[0].TopSuspect {
		t.Errorf("list after the restart %+v, before %+v", after, before)
	}

	// Another build (or cache format) is not trusted.
	path := filepath.Join(data, "captures", up.ID+reportCacheSuffix)
	raw, _ := os.ReadFile(path)
	os.WriteFile(path, []byte(`{"format":1,"analyzer":"other-build","bundle_bytes":1}`+string(raw[len(raw):])), 0o644)
	n = analyses.Load()
	h = restart()
	do(t, h, http.MethodGet, "/api/captures", nil, &after)
	if got := analyses.Load() - n; got != 1 {
		t.Errorf("with another build's analysis kept, %d analyses, want 1", got)
	}
}
