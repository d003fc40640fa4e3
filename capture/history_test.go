package capture

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/ingest/schema"
)

// TestCaptureHistory reads three watch snapshots of the leaky sample as
// the agent does, stores them with a torn file beside them, and captures
// with them as history: the bundle starts with the history as goroutine
// and heap snapshots at their own times, before the first dump, marked as
// history in the manifest; the torn file is left out.
func TestCaptureHistory(t *testing.T) {
	p := startSample(t, "timeout-send")
	dir := t.TempDir()
	var hist []HistoryFile
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for i := range 3 {
		s, err := ReadSnapshot(ctx, NewScrapeClient(0), p.URL)
		if err != nil {
			t.Fatal(err)
		}
		for prof, data := range map[string][]byte{"goroutine": s.Goroutine, "heap": s.Heap} {
			path := filepath.Join(dir, prof+string(rune('0'+i)))
			if err := os.WriteFile(path, data, 0o644); err != nil {
				t.Fatal(err)
			}
			hist = append(hist, HistoryFile{Path: path, Profile: prof, Time: s.TS})
		}
		if i == 0 {
			torn := filepath.Join(dir, "torn")
			os.WriteFile(torn, s.Goroutine[:len(s.Goroutine)/2], 0o644)
			hist = append(hist, HistoryFile{Path: torn, Profile: "goroutine", Time: s.TS.Add(time.Millisecond)})
		}
	}
	out := filepath.Join(t.TempDir(), "c.lsb")
	var log strings.Builder
	if _, err := Run(context.Background(), Options{URL: p.URL, Out: out, Duration: 3 * time.Second, Interval: time.Second,
		NoEBPF: true, History: hist}, &syncWriter{w: &log}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(log.String(), "torn") {
		t.Errorf("no notice of the torn history file:\n%s", log.String())
	}
	b, err := bundle.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	histTS := map[int64]string{}
	var firstDump time.Time
	for _, a := range b.Manifest.Artifacts {
		switch {
		case a.Role == bundle.RoleHistory:
			if a.Status != bundle.StatusComplete || !strings.HasPrefix(a.Detail, "history ("+a.Profile+" profile)") || a.TimeBasis != bundle.TimeContent {
				t.Errorf("history artifact %+v", a)
			}
			histTS[a.Time.UnixNano()] = a.Profile
		case a.Kind == bundle.SourceDump && (firstDump.IsZero() || a.Time.Before(firstDump)):
			firstDump = a.Time
		}
	}
	if len(histTS) != 6 {
		t.Fatalf("%d history snapshots in the manifest, want 3 goroutine and 3 heap", len(histTS))
	}
	if s := source(t, b.Manifest, bundle.SourcePprof); !strings.HasPrefix(s.Settings["history"], "6 earlier profiles") {
		t.Errorf("pprof source settings %v", s.Settings)
	}
	rows := map[int64]int{}
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	readRows(t, b, schema.TableSamples, mem, func(rec arrow.Record, i int) {
		ts := i64At(col(t, rec, schema.ColSnapshotTS), i)
		prof := col(t, rec, schema.ColProfile).(*array.Dictionary)
		if name := prof.Dictionary().(*array.String).Value(prof.GetValueIndex(i)); histTS[ts] == name {
			rows[ts]++
		}
	})
	for ts, prof := range histTS {
		if rows[ts] == 0 {
			t.Errorf("no %s samples rows at the history time %v", prof, time.Unix(0, ts).UTC())
		}
		if !time.Unix(0, ts).Before(firstDump) {
			t.Errorf("history snapshot %v is not before the first dump %v", time.Unix(0, ts).UTC(), firstDump)
		}
	}
}
