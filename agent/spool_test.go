package agent

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/ingest/schema"
)

// logs collects log lines.
type logs struct{ lines []string }

func (l *logs) logf(format string, args ...any) {
	l.lines = append(l.lines, fmt.Sprintf(format, args...))
}

func (l *logs) has(sub string) bool {
	for _, s := range l.lines {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// addEntry makes a spool entry in state with a bundle of size bytes (a
// payload file in bundle.lsb/) and a report.md of 500.
func addEntry(t *testing.T, s *Spool, pid int, state string, size int, at time.Time) *Entry {
	t.Helper()
	e, err := s.New(Process{PID: pid, Exe: "/usr/bin/svc", Start: 77}, "test", at)
	if err != nil {
		t.Fatal(err)
	}
	if size > 0 {
		os.MkdirAll(s.BundlePath(e), 0o755)
		if err := os.WriteFile(filepath.Join(s.BundlePath(e), "payload"), make([]byte, size), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(s.Path(e, reportFile), make([]byte, 500), 0o644); err != nil {
		t.Fatal(err)
	}
	e.State, e.Ended = state, at.Add(time.Minute)
	if err := s.Save(e); err != nil {
		t.Fatal(err)
	}
	return e
}

// TestSpoolGivesUpLeastFirst: over its bound the spool gives up the
// reports of uploaded entries first, then the bundles of older captures
// not uploaded, never one being captured nor the newest; every entry
// stays, with its process's cooldown.
func TestSpoolGivesUpLeastFirst(t *testing.T) {
	var l logs
	s, err := OpenSpool(t.TempDir(), 11_000, l.logf)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	oldReady := addEntry(t, s, 1, StateReady, 4000, t0)
	uploaded := addEntry(t, s, 2, StateUploaded, 0, t0.Add(time.Minute))
	os.WriteFile(s.Path(uploaded, postmortemFile), make([]byte, 4000), 0o644)
	capturing := addEntry(t, s, 3, StateCapturing, 4000, t0.Add(-time.Hour))
	newReady := addEntry(t, s, 4, StateReady, 4000, t0.Add(2*time.Minute))
	dropped, err := s.Enforce()
	if err != nil {
		t.Fatal(err)
	}
	if len(dropped) != 2 || dropped[0] != uploaded.Name || dropped[1] != oldReady.Name {
		t.Fatalf("gave up %q, want [%s %s]", dropped, uploaded.Name, oldReady.Name)
	}
	left, _ := s.Entries()
	if len(left) != 4 {
		t.Fatalf("entries left %v, want all four", names(left))
	}
	for _, e := range left {
		switch e.Name {
		case oldReady.Name:
			if _, err := os.Stat(s.Path(e, reportFile)); e.State != StateDropped || err != nil || !strings.Contains(e.Error, "not uploaded") {
				t.Errorf("the older capture: state %q (%s), report %v; want dropped with its report", e.State, e.Error, err)
			}
		case capturing.Name, newReady.Name:
			if _, err := os.Stat(s.BundlePath(e)); err != nil {
				t.Errorf("%s lost its bundle", e.Name)
			}
		}
	}
	if last := s.LastCapture(Process{PID: 1, Start: 77}); !last.Equal(oldReady.Ended) {
		t.Errorf("the older capture's cooldown: last capture %v, want %v", last, oldReady.Ended)
	}
	if !l.has("dropping the bundle of "+oldReady.Name) || !l.has("its entry, with the process's cooldown, stays") {
		t.Errorf("no log line for the dropped bundle: %q", l.lines)
	}
	if n, _, _ := s.Usage(); n > s.MaxBytes {
		t.Errorf("usage %d bytes over %d", n, s.MaxBytes)
	}
}

func names(es []*Entry) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.Name)
	}
	return out
}

// TestSpoolRecoversInterruptedCaptures reopens a spool whose agent died
// during three captures: one left a bundle with data (ready, marked
// interrupted), one an empty bundle (empty: never uploaded as a healthy
// capture), one nothing (failed).
func TestSpoolRecoversInterruptedCaptures(t *testing.T) {
	dir := t.TempDir()
	var l logs
	s, err := OpenSpool(dir, 0, l.logf)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	withData := addEntry(t, s, 10, StateCapturing, 0, t0)
	writeBundle(t, s.BundlePath(withData), 5)
	empty := addEntry(t, s, 12, StateCapturing, 0, t0.Add(2*time.Second))
	writeBundle(t, s.BundlePath(empty), 0)
	without := addEntry(t, s, 11, StateCapturing, 0, t0.Add(time.Second))

	s2, err := OpenSpool(dir, 0, l.logf)
	if err != nil {
		t.Fatal(err)
	}
	es, _ := s2.Entries()
	state := map[string]string{}
	for _, e := range es {
		state[e.Name] = e.State
		if !e.Interrupted {
			t.Errorf("%s: not marked interrupted", e.Name)
		}
	}
	if state[withData.Name] != StateReady || state[without.Name] != StateFailed || state[empty.Name] != StateEmpty {
		t.Errorf("states after restart: %v", state)
	}
	if _, err := os.Stat(filepath.Join(dir, withData.Name, entryFile)); err != nil {
		t.Error(err)
	}
}

// writeBundle writes a bundle of n goroutine rows at dir.
func writeBundle(t *testing.T, dir string, n int) {
	t.Helper()
	w, err := bundle.Create(dir, bundle.NewManifest("c-"+filepath.Base(filepath.Dir(dir)), "test"), memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	if n > 0 {
		sid, err := w.StackID([]bundle.StackFrame{{Function: "main.main", File: "main.go", Line: 1}})
		if err != nil {
			t.Fatal(err)
		}
		for i := range n {
			w.Append(schema.Goroutine{SnapshotTS: time.Now().UnixNano(), Goid: int64(i + 1), State: "running", StackID: sid})
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestSpoolKeepsNewestCapture: a capture larger than the spool, whose
// uploads fail (the workbench unreachable), is kept over the bound with a
// log line saying so; a newer capture takes its place, and it keeps its
// reports and entry.
func TestSpoolKeepsNewestCapture(t *testing.T) {
	var l logs
	s, err := OpenSpool(t.TempDir(), 1000, l.logf)
	if err != nil {
		t.Fatal(err)
	}
	s.Uploads = true
	big := addEntry(t, s, 1, StateReady, 5000, time.Now().Add(-time.Hour))
	big.Attempts = 3
	if err := s.Save(big); err != nil {
		t.Fatal(err)
	}
	if dropped, _ := s.Enforce(); len(dropped) != 0 {
		t.Fatalf("dropped %v: the only capture, which failed to upload", dropped)
	}
	if !l.has("kept until it is uploaded") {
		t.Errorf("no log line for the capture kept over the bound: %q", l.lines)
	}
	addEntry(t, s, 1, StateReady, 5000, time.Now())
	if dropped, _ := s.Enforce(); len(dropped) != 1 || dropped[0] != big.Name {
		t.Fatalf("gave up %v once a newer capture came, want %s", dropped, big.Name)
	}
	left, _ := s.Entries()
	if len(left) != 2 || left[0].State != StateDropped {
		t.Errorf("entries %v (%s)", names(left), left[0].State)
	}
	if _, err := os.Stat(s.Path(left[0], reportFile)); err != nil {
		t.Errorf("the older capture lost its report: %v", err)
	}
}
