package capture

import (
	"context"
	"io"
	"net/http"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/ingest/schema"
)

func TestWindowFor(t *testing.T) {
	const interval, measure = 15 * time.Second, time.Second
	for _, c := range []struct {
		name   string
		budget float64
		hits   int64
		cpu    time.Duration
		want   time.Duration
	}{
		{"within budget", 0.01, 2000, time.Second, interval},                    // 8 ms of 1 s
		{"no limit", 1, 1e6, time.Second, interval},                             // 4 s of 1 s
		{"idle target, under the floor", 0.01, 400, 0, interval},                // 1.6 ms
		{"idle target, over the floor", 0.01, 5000, 0, 1500 * time.Millisecond}, // 20 ms, 2 allowed
		{"worst-case service", 0.01, 26000, 910 * time.Millisecond, 1300 * time.Millisecond},
		{"hotter still: the measure alone", 0.001, 26000, 910 * time.Millisecond, measure},
	} {
		got := windowFor(interval, measure, c.budget, c.hits, c.cpu)
		if got.length != c.want {
			t.Errorf("%s: window %v, want %v (estimated share %.3f)", c.name, got.length, c.want, got.share)
		}
	}
}

// TestDetachAt: a window of the whole interval is never cut, even when it
// was measured late in the interval (the next interval starting later
// than from plus the interval); a shorter one ends after its length,
// unless the next interval starts first.
func TestDetachAt(t *testing.T) {
	const interval = 2 * time.Second
	from := time.Unix(1000, 0)
	for _, c := range []struct {
		name   string
		length time.Duration
		next   time.Time
		want   bool
	}{
		{"throughout, measured on time", interval, from.Add(interval), false},
		{"throughout, measured late", interval, from.Add(interval + 150*time.Millisecond), false},
		{"short window", 500 * time.Millisecond, from.Add(interval), true},
		{"short window past the next start", 500 * time.Millisecond, from.Add(300 * time.Millisecond), false},
	} {
		end, ok := detachAt(from, probeWindow{length: c.length}, interval, c.next)
		if ok != c.want || ok && !end.Equal(from.Add(c.length)) {
			t.Errorf("%s: detach %v at %v, want %v at %v", c.name, ok, end, c.want, from.Add(c.length))
		}
	}
}

// TestCaptureProbeWindows captures a service creating a goroutine per
// request under a budget it exceeds: the goroutine probes are attached for
// the first part of each interval only, each time is a probe_windows row,
// and every go_create and go_exit event lies in one.
func TestCaptureProbeWindows(t *testing.T) {
	if testing.Short() {
		t.Skip("captures a live process for 7 s")
	}
	if !isRoot() {
		t.Skip("needs root for eBPF")
	}
	t.Parallel()
	p := startSample(t, "stable-pool")
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	load := requestWork(ctx, p.URL)
	defer load.Wait()
	const interval = 2 * time.Second
	out := filepath.Join(t.TempDir(), "c.lsb")
	var log strings.Builder
	_, err := Run(context.Background(), Options{PID: p.PID, URL: p.URL, Out: out, Duration: 7 * time.Second, Interval: interval,
		NoSnapshots: true, EBPFBudget: 0.0001}, &syncWriter{w: &log})
	stop()
	t.Logf("progress:\n%s", log.String())
	if err != nil {
		t.Fatal(err)
	}
	b, err := bundle.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	src := source(t, b.Manifest, bundle.SourceEBPF)
	if src.Status != bundle.StatusComplete {
		t.Fatalf("ebpf source %s as root: %s", src.Status, src.Detail)
	}
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	windows := readProbeWindows(t, b, mem)
	t.Logf("windows %+v; counters %v", windows, src.Counters)
	if len(windows) == 0 {
		t.Fatal("no probe window")
	}
	from, err := strconv.ParseInt(src.Settings["goroutine_intervals_from_mono_ns"], 10, 64)
	if err != nil {
		t.Fatalf("goroutine_intervals_from_mono_ns: %v", err)
	}
	if want := 1 + intervalStarts(from, windows[0], 7*time.Second, interval); len(windows) < want || int64(len(windows)) != src.Counters["goroutine_probe_windows"] {
		t.Fatalf("%d probe windows in 7 s of %v intervals (manifest says %d), want at least %d: one, and one per interval start after it", len(windows), interval, src.Counters["goroutine_probe_windows"], want)
	}
	// The first window starts before the tracer loads (which may take
	// longer than an interval); the others when an interval starts. The
	// probes are detached between windows: each window ends before the
	// next one, as measured, begins. (Not "shorter than the interval":
	// attaching and detaching take longer on a loaded machine, and a
	// window of 2.36 s was measured against a 2 s interval, followed by
	// the next a whole interval later.) Only the last may run to the end:
	// the capture may end while its attach, measure and detach are under
	// way, which takes no longer than the cycles measured before it, or
	// than the rest of the capture's last interval.
	var longest int64
	for _, w := range windows[:len(windows)-1] {
		longest = max(longest, w.end-w.start)
	}
	for i, w := range windows {
		last := i == len(windows)-1
		switch {
		case w.toEnd && (!last || i == 0 || w.end-w.start >= max(longest+1, int64(interval))):
			t.Errorf("window %d: %+v: the probes stayed attached to the end, %v after they were attached, where the windows before it lasted at most %v",
				i, w, time.Duration(w.end-w.start), time.Duration(longest))
		case i > 0 && w.start < windows[i-1].end:
			t.Errorf("window %d: %+v: starts before window %d ended (%d)", i, w, i-1, windows[i-1].end)
		case i+1 < len(windows) && w.end >= windows[i+1].start:
			t.Errorf("window %d: %+v: the probes were not detached before window %d began (%d)", i, w, i+1, windows[i+1].start)
		}
	}
	checkGoroutineEventsInWindows(t, b, mem, windows)
}

// intervalStarts counts the interval starts of a capture of duration d
// from the monotonic time from that come clearly after the first probe
// window ends and before the capture ends: each opens a window. The first
// window starts when the tracer begins to load, which may be well after
// the capture starts on a loaded machine, and ends once the budget loop
// has measured it, which may be past some interval starts; a quarter
// interval of slack on both sides keeps a start at a boundary out of the
// count.
func intervalStarts(from int64, first windowRow, d, interval time.Duration) int {
	n := 0
	slack := int64(interval / 4)
	for at := from + int64(interval); at < from+int64(d)-slack; at += int64(interval) {
		if at > first.end+slack {
			n++
		}
	}
	return n
}

// requestWork keeps four clients requesting url/work, each making the
// service create a goroutine, until ctx is done; wait on the result for
// them to stop.
func requestWork(ctx context.Context, url string) *sync.WaitGroup {
	var load sync.WaitGroup
	for range 4 {
		load.Go(func() {
			for ctx.Err() == nil {
				req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url+"/work", nil)
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		})
	}
	return &load
}

// windowRow is one probe_windows row: monotonic start and end, and
// whether the window ran to the end of the capture.
type windowRow struct {
	start, end int64
	toEnd      bool
}

// readProbeWindows reads b's probe_windows table, sorted by start.
func readProbeWindows(t *testing.T, b *bundle.Bundle, mem memory.Allocator) []windowRow {
	t.Helper()
	var windows []windowRow
	readRows(t, b, schema.TableProbeWindows, mem, func(rec arrow.Record, i int) {
		windows = append(windows, windowRow{i64At(col(t, rec, schema.ColStartMonoNS), i), i64At(col(t, rec, schema.ColEndMonoNS), i),
			col(t, rec, schema.ColToEnd).(*array.Boolean).Value(i)})
	})
	sort.Slice(windows, func(i, j int) bool { return windows[i].start < windows[j].start })
	return windows
}

// checkGoroutineEventsInWindows checks every go_create and go_exit event of
// b lies in one of windows, and every window but the last saw one.
func checkGoroutineEventsInWindows(t *testing.T, b *bundle.Bundle, mem memory.Allocator, windows []windowRow) {
	t.Helper()
	seen := make([]int, len(windows))
	var outside int
	readRows(t, b, schema.TableEBPFEvents, mem, func(rec arrow.Record, i int) {
		kind := col(t, rec, schema.ColKind).(*array.Dictionary)
		k := kind.Dictionary().(*array.String).Value(kind.GetValueIndex(i))
		if k != schema.EventGoCreate && k != schema.EventGoExit {
			return
		}
		mono := i64At(col(t, rec, schema.ColMonoNS), i)
		j := sort.Search(len(windows), func(j int) bool { return windows[j].end >= mono })
		if j == len(windows) || mono < windows[j].start {
			outside++
			return
		}
		seen[j]++
	})
	if outside > 0 {
		t.Errorf("%d goroutine events outside every probe window", outside)
	}
	for i, n := range seen[:len(seen)-1] {
		if n == 0 {
			t.Errorf("window %d saw no goroutine event under load", i)
		}
	}
}
