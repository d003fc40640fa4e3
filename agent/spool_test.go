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

// addEntry makes a spool entry in state with a payload file of size bytes.
func addEntry(t *testing.T, s *Spool, pid int, state string, size int, at time.Time) *Entry {
	t.Helper()
	e, err := s.New(Process{PID: pid, Exe: "/usr/bin/svc"}, "test", at)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(s.Path(e, "payload"), make([]byte, size), 0o644); err != nil {
		t.Fatal(err)
	}
	e.State = state
	if err := s.Save(e); err != nil {
		t.Fatal(err)
	}
	return e
}

func TestSpoolDropsOldestUploadedFirst(t *testing.T) {
	var l logs
	s, err := OpenSpool(t.TempDir(), 10_000, l.logf)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	oldReady := addEntry(t, s, 1, StateReady, 4000, t0)
	uploaded := addEntry(t, s, 2, StateUploaded, 4000, t0.Add(time.Minute))
	capturing := addEntry(t, s, 3, StateCapturing, 4000, t0.Add(-time.Hour))
	newReady := addEntry(t, s, 4, StateReady, 4000, t0.Add(2*time.Minute))
	dropped, err := s.Enforce()
	if err != nil {
		t.Fatal(err)
	}
	// 16 KB in four entries over a 10 KB limit: the uploaded one goes
	// first, then the oldest ready one; the capture in flight stays.
	if len(dropped) != 2 || dropped[0] != uploaded.Name || dropped[1] != oldReady.Name {
		t.Fatalf("dropped %q, want [%s %s]", dropped, uploaded.Name, oldReady.Name)
	}
	left, _ := s.Entries()
	if len(left) != 2 || left[0].Name != capturing.Name || left[1].Name != newReady.Name {
		t.Errorf("left %v", names(left))
	}
	if !l.has("dropping the oldest entry "+oldReady.Name) || !l.has("not uploaded") {
		t.Errorf("no log line for the dropped entry: %q", l.lines)
	}
	if n, count, _ := s.Usage(); count != 2 || n > s.MaxBytes {
		t.Errorf("usage %d bytes in %d entries", n, count)
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
	withData := addEntry(t, s, 10, StateCapturing, 1, t0)
	writeBundle(t, s.BundlePath(withData), 5)
	empty := addEntry(t, s, 12, StateCapturing, 1, t0.Add(2*time.Second))
	writeBundle(t, s.BundlePath(empty), 0)
	without := addEntry(t, s, 11, StateCapturing, 1, t0.Add(time.Second))

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

// TestSpoolKeepsUntriedCapture: a capture larger than the spool is not
// dropped before its first upload attempt; after one, it is.
func TestSpoolKeepsUntriedCapture(t *testing.T) {
	var l logs
	s, err := OpenSpool(t.TempDir(), 1000, l.logf)
	if err != nil {
		t.Fatal(err)
	}
	s.Uploads = true
	big := addEntry(t, s, 1, StateReady, 5000, time.Now())
	if dropped, _ := s.Enforce(); len(dropped) != 0 {
		t.Fatalf("dropped %v before the upload was tried", dropped)
	}
	big.Attempts = 1
	if err := s.Save(big); err != nil {
		t.Fatal(err)
	}
	if dropped, _ := s.Enforce(); len(dropped) != 1 {
		t.Errorf("dropped %v after a failed upload, want the entry over the bound", dropped)
	}
}
