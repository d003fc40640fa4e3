package web

import (
	"bytes"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/leakscope/leakscope/analysis"
	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/ingest/schema"
)

// What a capture — its names, its analysis — may hold: no request, no
// lock, no other capture's series.

// hostileArchive is a small bundle of goroutine profiles in which one
// stack grows, named (function, file, node, executable) with an escape
// sequence and invalid UTF-8, packed as an upload.
func hostileArchive(t *testing.T) []byte {
	t.Helper()
	const evil = "\x1b]0;x\x07\xff"
	m := bundle.NewManifest("cap-hostile", "test")
	m.Node, m.Target.Exe = "node"+evil, "/bin/svc"+evil
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	m.Start, m.End = t0, t0.Add(3*time.Minute)
	dir := filepath.Join(t.TempDir(), "h.lsb")
	w, err := bundle.Create(dir, m, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	sid, err := w.StackID([]bundle.StackFrame{{Function: "runtime.gopark", File: "/go/src/runtime/proc.go", Line: 425},
		{Function: "runtime.chanrecv1", File: "/go/src/runtime/chan.go", Line: 500},
		{Function: "main.leak" + evil, File: "/src/main" + evil + ".go", Line: 7}, {Function: "runtime.goexit", File: "asm.s", Line: 1}})
	if err != nil {
		t.Fatal(err)
	}
	for s := range 4 {
		row := schema.Sample{SnapshotTS: t0.Add(time.Duration(s) * time.Minute).UnixNano(), Profile: schema.ProfileGoroutine, StackID: sid, Source: "raw/g.pb.gz"}
		row.Set(schema.ColCount, int64(50*(s+1)))
		if err := w.Append(row); err != nil {
			t.Fatal(err)
		}
	}
	w.Update(func(m *bundle.Manifest) { m.Source(bundle.SourcePprof) })
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := bundle.Pack(dir, &buf, bundle.FormatTarGzip); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestHostileNamesInMetrics: a capture named with invalid UTF-8 and an
// escape sequence is exported with its labels escaped (the collector used
// to panic on it while holding the capture, and DELETE of it then never
// returned); the capture can be deleted, and its series go with it.
func TestHostileNamesInMetrics(t *testing.T) {
	s, h := newServer(t, Options{})
	var up struct{ ID string }
	if rec := do(t, h, http.MethodPost, "/api/captures", hostileArchive(t), &up); rec.Code != http.StatusCreated {
		t.Fatalf("upload: %d %s", rec.Code, rec.Body)
	}
	c, release, err := s.Acquire(up.ID)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := c.Report()
	release()
	if err != nil || len(rep.Suspects) == 0 {
		t.Fatalf("report: %v, %d suspects", err, len(rep.Suspects))
	}
	rec := do(t, h, http.MethodGet, MetricsPath, nil, nil)
	body := rec.Body.String()
	if rec.Code != http.StatusOK || !utf8.ValidString(body) || strings.ContainsAny(body, "\x1b\x07") {
		t.Fatalf("scrape: %d, valid UTF-8 %v, control characters %v", rec.Code, utf8.ValidString(body), strings.ContainsAny(body, "\x1b\x07"))
	}
	if !strings.Contains(body, `leakscope_suspect_score{capture="cap-hostile"`) || !strings.Contains(body, `main.leak\\x1b]0;x\\x07\\xff`) {
		t.Errorf("the suspect's series is missing or not escaped:\n%s", grepLines(body, "leakscope_suspect_score"))
	}
	if rec := do(t, h, http.MethodDelete, "/api/captures/"+up.ID, nil, nil); rec.Code != http.StatusOK {
		t.Fatalf("delete after a scrape: %d %s", rec.Code, rec.Body)
	}
	if body := do(t, h, http.MethodGet, MetricsPath, nil, nil).Body.String(); strings.Contains(body, "cap-hostile") {
		t.Errorf("the deleted capture's series remain")
	}
}

func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// TestListingsDoNotWaitForAnalyses: with every analysis slot taken, an
// uploaded capture is listed, exported to /metrics and shown in the fleet
// view as pending, and can be deleted; its report view is not queued
// behind them; once a slot frees, an analysis runs and the list shows its
// suspects.
func TestListingsDoNotWaitForAnalyses(t *testing.T) {
	f := getFixture(t)
	s, h := newServer(t, Options{})
	defer func(d time.Duration) { uploadWait = d }(uploadWait)
	uploadWait = 0 // the uploads' analyses cannot start here
	for range cap(s.slots) {
		s.slots <- struct{}{}
	}
	var up struct{ ID string }
	if rec := do(t, h, http.MethodPost, "/api/captures", f.archive, &up); rec.Code != http.StatusCreated {
		t.Fatalf("upload: %d %s", rec.Code, rec.Body)
	}
	var list []captureSummary
	do(t, h, http.MethodGet, "/api/captures", nil, &list)
	if len(list) != 1 || !list[0].AnalysisPending || list[0].Suspects != nil || list[0].AnalysisError != "" {
		t.Fatalf("list while the analysis waits: %+v", list)
	}
	if v, n := value(scrape(t, h), "leakscope_capture_analysis_pending", nil); n != 1 || v != 1 {
		t.Errorf("leakscope_capture_analysis_pending: %d series, %g", n, v)
	}
	if rec := do(t, h, http.MethodGet, "/api/fleet", nil, nil); rec.Code != http.StatusOK {
		t.Errorf("fleet: %d", rec.Code)
	}
	// A view that needs the report is not queued behind the listings'.
	if rec := do(t, h, http.MethodGet, "/api/captures/"+up.ID+"/report", nil, nil); rec.Code != http.StatusOK {
		t.Errorf("the report while the listings' slots are taken: %d %s", rec.Code, rec.Body)
	}
	if rec := do(t, h, http.MethodDelete, "/api/captures/"+up.ID, nil, nil); rec.Code != http.StatusOK {
		t.Fatalf("delete: %d %s", rec.Code, rec.Body)
	}
	if rec := do(t, h, http.MethodPost, "/api/captures", f.archive, &up); rec.Code != http.StatusCreated {
		t.Fatalf("upload again: %d %s", rec.Code, rec.Body)
	}
	if rec := do(t, h, http.MethodDelete, "/api/captures/"+up.ID, nil, nil); rec.Code != http.StatusOK {
		t.Fatalf("delete while its analysis waits: %d %s", rec.Code, rec.Body)
	}
	if rec := do(t, h, http.MethodPost, "/api/captures", f.archive, &up); rec.Code != http.StatusCreated {
		t.Fatalf("upload again: %d %s", rec.Code, rec.Body)
	}
	for range cap(s.slots) {
		<-s.slots
	}
	s.Wait()
	list = nil
	do(t, h, http.MethodGet, "/api/captures", nil, &list)
	if len(list) != 1 || list[0].AnalysisPending || list[0].Suspects == nil || *list[0].Suspects == 0 {
		t.Fatalf("list once the analysis ran: %+v", list)
	}
}

// TestDeleteDoesNotWaitForReaders: DELETE answers at once while a
// request holds the capture; its files go when the reader lets go, and a
// workbench started before that does not bring the capture back.
func TestDeleteDoesNotWaitForReaders(t *testing.T) {
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
	_, release, err := s.Acquire(up.ID)
	if err != nil {
		t.Fatal(err)
	}
	if rec := do(t, h, http.MethodDelete, "/api/captures/"+up.ID, nil, nil); rec.Code != http.StatusOK {
		t.Fatalf("delete while read: %d %s", rec.Code, rec.Body)
	}
	dir := filepath.Join(s.Dir(), up.ID)
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("the files went while a reader held them: %v", err)
	}
	restarted, err := openStoreT(t, data, nil, bundle.Limits{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(restarted.List()) != 0 {
		t.Errorf("a workbench started meanwhile lists the deleted capture")
	}
	release()
	s.Wait()
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("the files remain after the reader let go: %v", err)
	}
	if left, _ := filepath.Glob(filepath.Join(s.Dir(), ".*")); len(left) != 0 {
		t.Errorf("left in the data directory: %v", left)
	}
}

// TestAnalysisCacheInQuota: the analysis kept beside a capture counts in
// the quota, and is not written when it would not fit.
func TestAnalysisCacheInQuota(t *testing.T) {
	f := getFixture(t)
	s, h := newServer(t, Options{})
	var up struct{ ID string }
	if rec := do(t, h, http.MethodPost, "/api/captures", f.archive, &up); rec.Code != http.StatusCreated {
		t.Fatalf("upload: %d %s", rec.Code, rec.Body)
	}
	s.Wait()
	bundleBytes := bundle.DirSize(filepath.Join(s.Dir(), up.ID))
	st, err := os.Stat(s.reportCachePath(up.ID))
	if err != nil {
		t.Fatalf("no analysis kept: %v", err)
	}
	if used, _ := s.Used(); used != bundleBytes+st.Size() {
		t.Errorf("used %d, want the bundle's %d and its analysis's %d", used, bundleBytes, st.Size())
	}
	do(t, h, http.MethodDelete, "/api/captures/"+up.ID, nil, nil)
	s.Wait()
	if used, _ := s.Used(); used != 0 {
		t.Errorf("used %d after the delete", used)
	}
	s.SetQuota(bundleBytes + st.Size()/2)
	if rec := do(t, h, http.MethodPost, "/api/captures", f.archive, &up); rec.Code != http.StatusCreated {
		t.Fatalf("upload under the small quota: %d %s", rec.Code, rec.Body)
	}
	s.Wait()
	if _, err := os.Stat(s.reportCachePath(up.ID)); !os.IsNotExist(err) {
		t.Errorf("an analysis past the quota was kept: %v", err)
	}
	if used, quota := s.Used(); used > quota {
		t.Errorf("used %d past the quota %d", used, quota)
	}
}

// TestAnalysisCutShown: an analysis cut at its deadline is the capture's
// answer: the list shows it as the analysis error, /metrics as failed.
func TestAnalysisCutShown(t *testing.T) {
	f := getFixture(t)
	s, h := newServer(t, Options{})
	s.SetAnalysis(analysis.Options{Timeout: time.Nanosecond})
	if rec := do(t, h, http.MethodPost, "/api/captures", f.archive, nil); rec.Code != http.StatusCreated {
		t.Fatalf("upload: %d %s", rec.Code, rec.Body)
	}
	s.Wait()
	var list []captureSummary
	do(t, h, http.MethodGet, "/api/captures", nil, &list)
	if len(list) != 1 || !strings.Contains(list[0].AnalysisError, "analysis cut short") || !strings.Contains(list[0].AnalysisError, "deadline of 1ns") {
		t.Fatalf("list: %+v", list)
	}
	if v, n := value(scrape(t, h), "leakscope_capture_analysis_failed", nil); n != 1 || v != 1 {
		t.Errorf("leakscope_capture_analysis_failed: %d series, %g", n, v)
	}
}
