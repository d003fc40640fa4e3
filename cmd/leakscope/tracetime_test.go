package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"runtime/trace"
	"testing"
	"time"

	"github.com/leakscope/leakscope/ingest/bundle"
)

// TestTraceDatedByItsClock ingests a real execution trace (Go 1.25+, with
// clock snapshots) whose file is years old: its time is its first
// event's, labelled content, and the bundle's time range is the trace's,
// not from the mtime to the trace.
func TestTraceDatedByItsClock(t *testing.T) {
	var buf bytes.Buffer
	before := time.Now()
	if err := trace.Start(&buf); err != nil {
		t.Fatal(err)
	}
	done := make(chan bool)
	go func() { time.Sleep(20 * time.Millisecond); close(done) }()
	<-done
	trace.Stop()
	p := filepath.Join(t.TempDir(), "t.trace")
	if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	old := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	os.Chtimes(p, old, old)
	dir := filepath.Join(t.TempDir(), "tr.lsb")
	if err := run(context.Background(), []string{"ingest", "-o", dir, p}, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	m, err := bundle.ReadManifest(dir)
	if err != nil {
		t.Fatal(err)
	}
	a := m.Artifacts[0]
	if a.TimeBasis != bundle.TimeContent || !a.Time.Equal(a.Start) || a.Time.Before(before.Add(-time.Minute)) {
		t.Errorf("trace artifact time %v basis %q start %v: want its first event's time, labelled content", a.Time, a.TimeBasis, a.Start)
	}
	if span := m.End.Sub(m.Start); span > time.Minute || span < 0 {
		t.Errorf("bundle spans %v (%v to %v) for a trace of under a second", span, m.Start, m.End)
	}
}
