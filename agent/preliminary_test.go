package agent

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/leakscope/leakscope/ingest/bundle"
)

// lockedLog keeps the agent's log lines for the test, and logs them.
type lockedLog struct {
	t  *testing.T
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	l.b.Write(p)
	l.mu.Unlock()
	l.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

func (l *lockedLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// listed is one row of the workbench's capture list.
type listed struct {
	ID          string `json:"id"`
	CaptureID   string `json:"capture_id"`
	TopSuspect  string `json:"top_suspect"`
	Preliminary bool   `json:"preliminary"`
	// Pending is set while the workbench still analyses the capture.
	Pending bool `json:"analysis_pending"`
}

// list reads the workbench's capture list.
func (wb *workbench) list(t *testing.T) []listed {
	t.Helper()
	resp, err := http.Get(wb.srv.URL + "/api/captures")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out []listed
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestPreliminaryInWorkbench has an alert trigger a capture of the leaky
// sample: the webhook answers the capture's workbench link at once; the
// workbench lists a preliminary capture naming the planted leak first,
// seconds after the trigger, while the capture still runs; the final
// capture then replaces it under the same id, and the link leads to it.
func TestPreliminaryInWorkbench(t *testing.T) {
	liveTest(t)
	p, leak := startLeaky(t, "")
	wb := newWorkbench(t)
	log := &lockedLog{t: t}
	a := startAgent(t, Config{Select: Selection{PIDs: []int{p.PID}}, UploadTo: wb.srv.URL, WatchEvery: time.Second,
		History: HistoryConfig{Keep: time.Hour}, Log: log})
	st := waitFor(t, a, "the sample to be watched", func(st status) bool { return len(st.Targets) == 1 && st.Targets[0].Goroutines > 0 })
	// The preliminary capture reads the first dump alone: the planted
	// leak comes first there once it holds more goroutines than the
	// sample's idle connections, which on a loaded machine may take
	// longer than the agent takes to start watching.
	base := st.Targets[0].Goroutines
	waitFor(t, a, "the sample to leak 20 goroutines", func(st status) bool { return st.Targets[0].Goroutines >= base+20 })

	note := fmt.Sprintf(`{"version":"4","status":"firing","alerts":[{"status":"firing","labels":{"alertname":"GoroutineGrowthFast","pid":"%d"}}]}`, p.PID)
	triggered := time.Now()
	resp, err := http.Post("http://"+a.Addr()+"/alerts", "application/json", strings.NewReader(note))
	if err != nil {
		t.Fatal(err)
	}
	var ans struct{ Alerts []alertAnswer }
	err = json.NewDecoder(resp.Body).Decode(&ans)
	resp.Body.Close()
	if err != nil || len(ans.Alerts) != 1 || ans.Alerts[0].Result != "started" {
		t.Fatalf("webhook answer %+v (%v)", ans, err)
	}
	cid, link := ans.Alerts[0].CaptureID, ans.Alerts[0].Workbench
	if cid == "" || link != wb.srv.URL+"/c/"+cid {
		t.Fatalf("webhook answers capture %q, link %q; want %s/c/CAPTUREID", cid, link, wb.srv.URL)
	}

	prelim, final := watchList(t, a, wb, cid, leak.Function)
	t.Logf("preliminary capture listed %v after the trigger; final %v", prelim.Sub(triggered).Round(10*time.Millisecond), final.Sub(triggered).Round(10*time.Millisecond))
	if !prelim.Before(final) {
		t.Errorf("the preliminary capture was listed at %v, not before the final one at %v", prelim, final)
	}
	e := uploadedEntry(waitFor(t, a, "the entry to be uploaded", func(st status) bool { return uploadedEntry(st) != nil }))
	if e == nil || e.PreliminaryID == "" || e.UploadID != e.PreliminaryID || e.CaptureID != cid {
		t.Fatalf("spool entry %+v: want the final upload under the preliminary capture's id, capture id %s", e, cid)
	}
	if n := len(wb.list(t)); n != 1 {
		t.Errorf("the workbench lists %d captures, want the final one alone", n)
	}
	if !strings.Contains(log.String(), "preliminary capture "+e.PreliminaryID+" in the workbench") || !strings.Contains(log.String(), link) {
		t.Errorf("the agent's log does not give the preliminary capture and its link %s", link)
	}
	// The link leads to the final capture's page.
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	r, err := noFollow.Get(link)
	if err != nil {
		t.Fatal(err)
	}
	r.Body.Close()
	if want := "/#/c/" + e.UploadID + "/overview"; r.StatusCode != http.StatusSeeOther || r.Header.Get("Location") != want {
		t.Errorf("GET %s: %s to %q, want 303 to %q", link, r.Status, r.Header.Get("Location"), want)
	}
}

// watchList polls the workbench's list until capture cid (with "", the
// first capture listed) is there final, and returns when it was first
// listed preliminary and when final. It fails if the preliminary capture
// never showed, was replaced before the workbench had analysed it, or,
// analysed, named another top suspect than the leak (fn).
func watchList(t *testing.T, a *Agent, wb *workbench, cid, fn string) (prelim, final time.Time) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Minute)
	named := false
	for time.Now().Before(deadline) {
		for _, c := range wb.list(t) {
			if cid == "" {
				cid = c.CaptureID
			}
			if c.CaptureID != cid {
				continue
			}
			now := time.Now()
			if c.Preliminary && prelim.IsZero() {
				prelim = now
			}
			if c.Preliminary && !c.Pending && !named {
				named = true // its analysis is done: it must name the leak
				if !strings.Contains(c.TopSuspect, fn) {
					t.Errorf("preliminary capture's top suspect %q, want %s", c.TopSuspect, fn)
				}
			}
			if !c.Preliminary {
				if prelim.IsZero() {
					t.Fatalf("the final capture %s was listed with no preliminary one before it", c.ID)
				}
				if !named {
					t.Errorf("the final capture %s replaced the preliminary one before the workbench had analysed it", c.ID)
				}
				return prelim, now
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("capture %s: no final capture in the workbench after 3 minutes (preliminary seen: %v)", cid, !prelim.IsZero())
	return
}

// TestCopyPreliminary copies a bundle while its writer is still open: the
// copy is a valid bundle marked preliminary, with the raw files its
// manifest lists and the rows flushed so far, and what the writer adds
// afterwards stays out of it.
func TestCopyPreliminary(t *testing.T) {
	src := filepath.Join(t.TempDir(), "b.lsb")
	w, err := bundle.Create(src, bundle.NewManifest("cp-test", "test"), memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	w.RecordFlushes()
	addRaw := func(name string) {
		f, rel, err := w.CreateRaw(name)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString("goroutine 1 [running]:\nmain.main()\n\t/x/main.go:1 +0x1\n")
		f.Close()
		w.Update(func(m *bundle.Manifest) {
			m.Artifacts = append(m.Artifacts, bundle.Artifact{Name: rel, Kind: bundle.SourceDump, Time: time.Now(), Status: bundle.StatusComplete})
			m.Source(bundle.SourceDump).Status = bundle.StatusRunning
		})
	}
	addRaw("dump-1.txt")
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(t.TempDir(), "p.lsb")
	if err := copyPreliminary(src, dst); err != nil {
		t.Fatal(err)
	}
	addRaw("dump-2.txt")
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	m, err := bundle.Validate(dst)
	if err != nil {
		t.Fatalf("the copy is no valid bundle: %v", err)
	}
	if !m.Preliminary || len(m.Artifacts) != 1 || m.CaptureID != "cp-test" {
		t.Errorf("copy's manifest: preliminary %v, %d artifacts, capture %q; want preliminary, 1, cp-test", m.Preliminary, len(m.Artifacts), m.CaptureID)
	}
	if _, err := os.Stat(filepath.Join(dst, bundle.RawDir, "dump-1.txt")); err != nil {
		t.Errorf("the listed raw file is not in the copy: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dst, bundle.RawDir, "dump-2.txt")); err == nil {
		t.Errorf("a raw file added after the copy is in it")
	}
	if s := m.Sources[0]; s.Status != bundle.StatusRunning || !strings.Contains(s.Detail, "preliminary copy") {
		t.Errorf("copy's dump source %+v, want running with a preliminary note", s)
	}
}
