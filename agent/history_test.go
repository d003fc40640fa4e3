package agent

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/leakscope/leakscope/capture"
	"github.com/leakscope/leakscope/ingest/bundle"
)

// runAgentUntil runs an agent like startAgent, but returns a stop
// function, so a test can restart it on the same spool.
func runAgentUntil(t *testing.T, cfg Config) (*Agent, func()) {
	t.Helper()
	cfg.Listen = "127.0.0.1:0"
	cfg.Log = testLog{t}
	cfg.Version = "test"
	cfg.Capture.Duration, cfg.Capture.Interval = 6*time.Second, 2*time.Second
	cfg.Capture.TraceWindow, cfg.Capture.CPUWindow = time.Second, 0
	cfg.Capture.NoEBPF = true
	a, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	var stopped bool
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		if err := <-done; err != nil {
			t.Errorf("agent: %v", err)
		}
	}
	t.Cleanup(stop)
	return a, stop
}

// waitHistory waits until the agent's history of k holds at least n
// goroutine profiles, and returns it.
func waitHistory(t *testing.T, a *Agent, k key, n int) []capture.HistoryFile {
	t.Helper()
	deadline := time.Now().Add(3 * time.Minute)
	for {
		fs := a.history.Files(k, time.Now())
		if countProfile(fs, "goroutine") >= n {
			return fs
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %d goroutine profiles in the history; have %d files", n, len(fs))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func countProfile(fs []capture.HistoryFile, profile string) int {
	n := 0
	for _, f := range fs {
		if f.Profile == profile {
			n++
		}
	}
	return n
}

// TestHistorySurvivesRestart watches the leaky sample with a history,
// stops the agent, leaves a crash's debris in the history (a temporary
// file, an empty file) and starts a new agent on the same spool: the
// earlier profiles are still there, the debris is gone, and the new
// agent keeps adding.
func TestHistorySurvivesRestart(t *testing.T) {
	liveTest(t)
	p, _ := startLeaky(t, "")
	spool := t.TempDir()
	cfg := Config{Select: Selection{PIDs: []int{p.PID}}, WatchEvery: time.Second, SpoolDir: spool,
		History: HistoryConfig{Keep: time.Hour}}
	a, stop := runAgentUntil(t, cfg)
	waitFor(t, a, "the sample to be watched", func(st status) bool { return len(st.Targets) == 1 })
	proc, err := readProcess(p.PID)
	if err != nil {
		t.Fatal(err)
	}
	before := waitHistory(t, a, proc.key(), 3)
	stop()

	dir := filepath.Join(spool, historyDir, procDir(proc.key()))
	debris := []string{filepath.Join(dir, histName(time.Now(), "goroutine")+".tmp"), filepath.Join(dir, histName(time.Now(), "heap"))}
	for _, f := range debris {
		if err := os.WriteFile(f, nil, 0o640); err != nil {
			t.Fatal(err)
		}
	}
	a2, _ := runAgentUntil(t, cfg)
	for _, f := range debris {
		if _, err := os.Stat(f); !os.IsNotExist(err) {
			t.Errorf("%s left after the restart (%v)", f, err)
		}
	}
	after := a2.history.Files(proc.key(), time.Now())
	if len(after) < len(before) {
		t.Fatalf("history after the restart has %d files, before %d", len(after), len(before))
	}
	for i, f := range before {
		if after[i].Path != f.Path || !after[i].Time.Equal(f.Time) {
			t.Errorf("file %d after the restart %+v, before %+v", i, after[i], f)
		}
	}
	more := waitHistory(t, a2, proc.key(), countProfile(before, "goroutine")+2)
	if last := more[len(more)-1].Time; !last.After(before[len(before)-1].Time) {
		t.Errorf("the restarted agent added nothing after %v", last)
	}

	// An alert's capture starts with the history, the profiles from
	// before the restart included.
	waitFor(t, a2, "the sample to be watched again", func(st status) bool { return len(st.Targets) == 1 })
	e := alertCapture(t, a2, p.PID)
	b, err := bundle.Open(a2.spool.BundlePath(e))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, art := range b.Manifest.Artifacts {
		if art.Role == bundle.RoleHistory && art.Status == bundle.StatusComplete {
			got[art.OriginPath] = true
		}
	}
	for _, f := range before {
		if !got[f.Path] {
			t.Errorf("the capture lacks the history file %s from before the restart", f.Path)
		}
	}
}

// alertCapture posts a firing alert naming pid and waits for its capture
// to be ready in the spool.
func alertCapture(t *testing.T, a *Agent, pid int) *Entry {
	t.Helper()
	note := fmt.Sprintf(`{"version":"4","status":"firing","alerts":[{"status":"firing","labels":{"alertname":"GoroutineGrowth","pid":"%d"}}]}`, pid)
	resp, err := http.Post("http://"+a.Addr()+"/alerts", "application/json", strings.NewReader(note))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	st := waitFor(t, a, "the alert's capture", func(st status) bool { return len(st.Spool) == 1 && st.Spool[0].State == StateReady })
	return st.Spool[0]
}

// TestHistoryBound feeds the history real profiles of the leaky sample
// for 50 processes and checks, after every sample, that the files on disk
// stay within the total bound and each process within its share, that the
// window drops old samples, and that a process gone for the grace period
// loses its history.
func TestHistoryBound(t *testing.T) {
	liveTest(t)
	p, _ := startLeaky(t, "")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	snap, err := capture.ReadSnapshot(ctx, capture.NewScrapeClient(0), p.URL)
	if err != nil {
		t.Fatal(err)
	}
	per := int64(len(snap.Goroutine) + len(snap.Heap))
	dir := filepath.Join(t.TempDir(), historyDir)
	cfg := HistoryConfig{Keep: 2 * time.Minute, MaxBytes: 120 * per, Grace: time.Minute}
	h, err := OpenHistory(dir, cfg, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	share := cfg.MaxBytes / historyShare
	t0 := time.Now()
	const procs, samples = 50, 20
	for i := range samples {
		snap.TS = t0.Add(time.Duration(i) * 15 * time.Second)
		for pid := 1; pid <= procs; pid++ {
			if err := h.Add(key{pid, 7}, snap); err != nil {
				t.Fatal(err)
			}
			if n := bundle.DirSize(dir); n > cfg.MaxBytes {
				t.Fatalf("sample %d, process %d: history takes %d bytes on disk, bound %d", i, pid, n, cfg.MaxBytes)
			}
		}
	}
	total, n := h.Usage()
	if disk := bundle.DirSize(dir); total != disk || n != procs {
		t.Errorf("usage %d bytes, %d processes; on disk %d bytes, want %d processes", total, n, disk, procs)
	}
	// Each process within its share, and the window (2 min) dropped
	// what is older.
	for name, ph := range h.procs {
		if ph.bytes > share || bundle.DirSize(filepath.Join(dir, name)) != ph.bytes {
			t.Errorf("%s: %d bytes (on disk %d), share %d", name, ph.bytes, bundle.DirSize(filepath.Join(dir, name)), share)
		}
		if len(ph.files) > 0 && snap.TS.Sub(ph.files[0].ts) > cfg.Keep {
			t.Errorf("%s keeps %s, older than the window", name, ph.files[0].name)
		}
	}
	if len(h.Files(key{procs, 7}, snap.TS)) == 0 {
		t.Errorf("the last process fed has no history")
	}
	h2, err := OpenHistory(dir, cfg, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	if t2, n2 := h2.Usage(); t2 != total || n2 != n {
		t.Errorf("reopened: %d bytes, %d processes; before %d, %d", t2, n2, total, n)
	}
	live := map[key]bool{{1, 7}: true}
	h2.Prune(live, snap.TS)
	h2.Prune(live, snap.TS.Add(cfg.Grace))
	if _, n := h2.Usage(); n != 1 {
		t.Errorf("%d processes after the grace period, want the 1 still alive", n)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("%d process directories after the grace period, want 1", len(ents))
	}
}
