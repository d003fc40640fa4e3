package gotrace

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow/go/v15/arrow/memory"
	"golang.org/x/exp/trace"

	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/ingest/schema"
)

// ingestBytes ingests data as one window into a new bundle, with one
// worker (which applies steps as it decodes them) and again with two
// (which merge parts), and fails the test unless both end alike.
func ingestBytes(t testing.TB, mem memory.Allocator, data []byte) (string, bundle.Artifact, error) {
	t.Helper()
	dir, a, err := ingestWorkers(t, mem, data, 1)
	_, a2, err2 := ingestWorkers(t, mem, data, 2)
	if fmt.Sprint(err) != fmt.Sprint(err2) || a.Status != a2.Status || a.Detail != a2.Detail || a.Rows != a2.Rows {
		t.Fatalf("one worker: %v, %s %q, %d rows; two: %v, %s %q, %d rows", err, a.Status, a.Detail, a.Rows, err2, a2.Status, a2.Detail, a2.Rows)
	}
	return dir, a, err
}

// ingestWorkers ingests data as one window into a new bundle with
// workers generations decoded at once.
func ingestWorkers(t testing.TB, mem memory.Allocator, data []byte, workers int) (string, bundle.Artifact, error) {
	dir := filepath.Join(t.TempDir(), "b.lsb")
	w, err := bundle.Create(dir, bundle.NewManifest("test", "gotrace-test"), mem)
	if err != nil {
		t.Fatal(err)
	}
	a := bundle.Artifact{Name: "cut.trace"}
	err = Ingest(w, bytes.NewReader(data), &a, Options{Mem: mem, Workers: workers})
	if cerr := w.Close(); cerr != nil {
		t.Fatal(cerr)
	}
	return dir, a, err
}

// referenceGenerations counts the complete generations bare x/exp/trace
// delivers from data (Sync events bracket generations).
func referenceGenerations(data []byte) int64 {
	r, err := trace.NewReader(bytes.NewReader(data))
	if err != nil {
		return 0
	}
	var syncs int64
	for {
		ev, err := r.ReadEvent()
		if err != nil {
			break
		}
		if ev.Kind() == trace.EventSync {
			syncs++
		}
	}
	return max(syncs-1, 0)
}

func TestTruncated(t *testing.T) {
	rec := record(t)
	full, err := os.ReadFile(rec.window1)
	if err != nil {
		t.Fatal(err)
	}
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)

	dir, a, err := ingestBytes(t, mem, full)
	if err != nil || a.Status != bundle.StatusComplete {
		t.Fatalf("full trace: %v %+v", err, a)
	}
	fullGens := readTables(t, dir, mem).manifest.Source(bundle.SourceTrace).Counters[CounterGenerations]

	var lastGens int64
	for _, cut := range []int{headerLen + 3, len(full) / 5, len(full) / 2, len(full) * 4 / 5, len(full) - 100, len(full) - 1} {
		t.Run(fmt.Sprint(cut), func(t *testing.T) {
			dir, a, err := ingestBytes(t, mem, full[:cut])
			if referenceGenerations(full[:cut]) == 0 {
				// Nothing to keep: refused, saying it was cut.
				if !errors.Is(err, ErrIncomplete) || !strings.Contains(err.Error(), "cut short") || a.Status != "" {
					t.Fatalf("cut before the first generation ends: err %v, artifact %+v", err, a)
				}
				return
			}
			if err != nil {
				t.Fatalf("truncated trace refused: %v", err)
			}
			if a.Status != bundle.StatusTruncated || !strings.Contains(a.Detail, "input read to byte") {
				t.Fatalf("artifact %+v", a)
			}
			tb := readTables(t, dir, mem)
			src := tb.manifest.Source(bundle.SourceTrace)
			if src.Status != bundle.StatusTruncated || !strings.Contains(src.Detail, "cut.trace: trace stopped") {
				t.Errorf("source %+v", src)
			}
			gens := src.Counters[CounterGenerations]
			if want := referenceGenerations(full[:cut]); gens != want {
				t.Errorf("kept %d generations, x/exp/trace delivers %d", gens, want)
			}
			if gens < lastGens || gens >= fullGens || gens == 0 {
				t.Errorf("kept %d generations (previous cut %d, full trace %d)", gens, lastGens, fullGens)
			}
			lastGens = gens
			if gens == 0 && (a.Rows != 0 || src.Settings[SettingClock] != "" || !tb.manifest.Start.IsZero()) {
				t.Errorf("nothing kept, yet %d rows, clock %q, start %v", a.Rows, src.Settings[SettingClock], tb.manifest.Start)
			}
			if gens > 0 {
				if len(tb.goroutines) == 0 || !strings.Contains(a.Detail, "complete generation(s)") {
					t.Errorf("%d generations kept but %d goroutine rows, detail %q", gens, len(tb.goroutines), a.Detail)
				}
			}
			t.Logf("cut at %d of %d: %d generations, %d rows; %s", cut, len(full), gens, a.Rows, a.Detail)
		})
	}
	if lastGens == 0 {
		t.Errorf("no cut kept a generation")
	}
}

func TestNotATrace(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	for _, tc := range []struct {
		name, data string
		want       error
	}{
		{"empty", "", ErrNotTrace},
		{"text", "goroutine 1 [running]:\nmain.main()\n", ErrNotTrace},
		{"gzip", "\x1f\x8b\x08\x00\x00\x00\x00\x00", ErrNotTrace},
		{"short header", "go 1.26 tra", ErrNotTrace},
		{"bad padding", "go 1.26 trace\x00\x00X and more", ErrNotTrace},
		{"go1.21", "go 1.21 trace\x00\x00\x00\x00\x01", ErrUnsupported},
		{"future", "go 1.99 trace\x00\x00\x00\x01\x01", ErrUnsupported},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if len(tc.data) >= headerLen && Looks([]byte(tc.data)) && tc.want == ErrNotTrace {
				t.Errorf("Looks(%q) = true", tc.data)
			}
			_, a, err := ingestBytes(t, mem, []byte(tc.data))
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			if tc.want == ErrNotTrace && !strings.Contains(err.Error(), "go 1.NN trace") {
				t.Errorf("error %q does not say what was expected", err)
			}
			if a.Status != "" {
				t.Errorf("status %q set on error", a.Status)
			}
		})
	}
}

func TestLooks(t *testing.T) {
	rec := record(t)
	f, err := os.Open(rec.small)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	head := make([]byte, 64)
	n, _ := io.ReadFull(f, head)
	if !Looks(head[:n]) || !Looks(head[:8]) {
		t.Errorf("Looks rejects a real trace header %q", head[:16])
	}
	if Looks([]byte("go 1.xx trace")) || Looks([]byte("go")) {
		t.Error("Looks accepts a non-trace")
	}
}

// TestClockFallbacks ingests a trace window without its clock snapshots:
// with a given wall-clock offset, with the time it ended, and, from a
// reader that cannot seek, with the time it started.
func TestClockFallbacks(t *testing.T) {
	rec := record(t)
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	c := newClockCase(t, mem, rec.window1)
	t.Run("offset", c.offsetMapping)
	t.Run("anchored-end", c.anchoredEnd)
	t.Run("anchored-start", c.anchoredStart)
}

// clockCase is one trace window ingested with its clock snapshots, the
// reference each clock fallback is held against.
type clockCase struct {
	window     string // the trace file
	mem        memory.Allocator
	refCreated map[int64]int64 // goid -> created_ts mapped through the snapshots
	offset     int64           // wall less monotonic time at the first snapshot
	tolerance  int64           // how far the single-offset mapping may differ, in ns
	now        time.Time       // the time the anchored fallbacks are given
}

// newClockCase ingests window with its clock snapshots and derives the
// offset and tolerance the fallbacks are checked with.
func newClockCase(t *testing.T, mem memory.Allocator, window string) *clockCase {
	t.Helper()
	dir, _ := ingestFiles(t, mem, Options{}, window)
	ref := readTables(t, dir, mem)
	c := &clockCase{window: window, mem: mem, refCreated: map[int64]int64{}, now: mustTime(t, "2020-01-02T03:04:05Z")}
	for _, g := range ref.goroutines {
		c.refCreated[g.Goid] = g.CreatedTS
	}
	cs := ref.clockSync[0]
	c.offset = cs.TS - cs.MonoNS
	// Each snapshot reads the wall and monotonic clocks one after the
	// other, so their offsets differ by the time between the reads; the
	// single-offset mapping can agree with the per-snapshot one only to
	// within that spread (plus clock rounding).
	spread := int64(0)
	for _, s := range ref.clockSync {
		spread = max(spread, abs64(s.TS-s.MonoNS-c.offset))
	}
	c.tolerance = spread + 10_000
	return c
}

// offsetMapping: a given wall-clock offset maps creation times as the snapshots
// do, within the tolerance, and writes no clock_sync rows.
func (c *clockCase) offsetMapping(t *testing.T) {
	dir, _ := ingestFiles(t, c.mem, Options{WallOffsetNS: c.offset, ignoreSnapshots: true}, c.window)
	tb := readTables(t, dir, c.mem)
	if m := tb.manifest.Source(bundle.SourceTrace).Settings[SettingClock]; m != ClockOffset {
		t.Errorf("clock method %q", m)
	}
	n := 0
	for _, g := range tb.goroutines {
		if g.CreatedTS == 0 {
			continue
		}
		n++
		// The trace clock is CLOCK_MONOTONIC, so the offset mapping
		// agrees with the snapshots up to clock rounding.
		if d := g.CreatedTS - c.refCreated[g.Goid]; abs64(d) > c.tolerance {
			t.Errorf("goroutine %d created %d, snapshot mapping says %d", g.Goid, g.CreatedTS, c.refCreated[g.Goid])
		}
	}
	if n == 0 || len(tb.clockSync) != 0 {
		t.Errorf("%d goroutines compared, %d clock_sync rows", n, len(tb.clockSync))
	}
}

// anchoredEnd: given the time the trace ended, its last event lands within
// a second of it.
func (c *clockCase) anchoredEnd(t *testing.T) {
	dir, _ := ingestFiles(t, c.mem, Options{Now: c.now, ignoreSnapshots: true}, c.window)
	tb := readTables(t, dir, c.mem)
	if m := tb.manifest.Source(bundle.SourceTrace).Settings[SettingClock]; m != ClockAnchoredEnd {
		t.Errorf("clock method %q", m)
	}
	last := maxEnd(tb.generations)
	// The end is estimated from batch headers: close, not exact.
	if d := last - c.now.UnixNano(); d < -1e9 || d > 1e9 {
		t.Errorf("last event at %d, anchored end %d (diff %d ns)", last, c.now.UnixNano(), d)
	}
}

// anchoredStart: from a reader that cannot seek, the time given is the
// trace's start.
func (c *clockCase) anchoredStart(t *testing.T) {
	data, err := os.ReadFile(c.window)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "b.lsb")
	w, err := bundle.Create(dir, bundle.NewManifest("t", "t"), c.mem)
	if err != nil {
		t.Fatal(err)
	}
	var a bundle.Artifact
	// Not seekable: only an io.Reader.
	if err := Ingest(w, struct{ io.Reader }{bytes.NewReader(data)}, &a, Options{Mem: c.mem, Now: c.now, ignoreSnapshots: true}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	tb := readTables(t, dir, c.mem)
	if m := tb.manifest.Source(bundle.SourceTrace).Settings[SettingClock]; m != ClockAnchoredStart {
		t.Errorf("clock method %q", m)
	}
	if !tb.manifest.Start.Equal(c.now) {
		t.Errorf("start %v, want %v", tb.manifest.Start, c.now)
	}
}

func maxEnd(gens []schema.TraceGeneration) int64 {
	var m int64
	for _, g := range gens {
		m = max(m, g.EndTS)
	}
	return m
}

func abs64(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}
