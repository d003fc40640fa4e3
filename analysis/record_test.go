package analysis_test

import (
	"bytes"
	"context"
	"debug/buildinfo"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/leakscope/leakscope/ingest/binsyms"
	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/ingest/dump"
	"github.com/leakscope/leakscope/ingest/gotrace"
	"github.com/leakscope/leakscope/ingest/profiles"
	"github.com/leakscope/leakscope/ingest/srclines"
	"github.com/leakscope/leakscope/samples"
)

// liveTest starts a test that runs a program and mostly waits on it: it
// is skipped with -short (saying why), and otherwise runs beside the
// package's other live tests (-parallel of them at once, after the tests
// that are not live), so that their waits overlap.
func liveTest(t *testing.T, why string) {
	t.Helper()
	if testing.Short() {
		t.Skip(why)
	}
	t.Parallel()
}

// fetched is one scraped artifact with the time it was taken.
type fetched struct {
	name string
	at   time.Time
	body []byte
}

// dumpsOf returns the goroutine dumps among got, in order.
func dumpsOf(got []fetched) [][]byte {
	var out [][]byte
	for _, f := range got {
		if strings.HasPrefix(f.name, "goroutine-") {
			out = append(out, f.body)
		}
	}
	return out
}

// record runs the sample program in dir for d, scraping a goroutine
// dump (debug=2) and a heap profile every interval, and ingests them into
// a new bundle, whose directory it returns; with trace it also records one 2 s
// execution trace window after the second dump (whose goroutine-creation
// stacks lead to the user's frame of leaks in library goroutines).
func record(t testing.TB, dir string, d, interval time.Duration, trace bool, args ...string) string {
	t.Helper()
	return recordUntil(t, dir, d, d, interval, trace, nil, args...)
}

// progress is what a recording holds so far: the goroutine dumps, and
// how much the sample's own live heap rose since the first (its /calls).
type progress struct {
	dumps    [][]byte
	heapRise int64
	counts   bool // the sample counts its calls and heap (/calls)
}

// recordUntil is record that goes on scraping past d, up to most, until
// ready says the recording so far holds what the test measures (on a
// loaded machine a sample gets less done in d). A nil ready stops at d.
func recordUntil(t testing.TB, dir string, d, most, interval time.Duration, trace bool, ready func(progress) bool, args ...string) string {
	t.Helper()
	return recordCounted(t, dir, d, most, interval, trace, ready, args...).dir
}

// recorded is a recorded bundle with what the sample counted of its own
// calls (its /calls, see samples/internal/service) at the first and the
// last dump, and when; calls are -1 when the sample does not count.
type recorded struct {
	dir         string
	calls       [2]int64
	heap        [2]int64 // the live heap the sample measured with calls
	first, last time.Time
	work        []byte // the sample's /work after the last dump
}

// heapPerCall is the sample's own live heap rise per call between the
// first and the last dump (0 when it did not count).
func (r recorded) heapPerCall() float64 {
	if r.calls[1] <= r.calls[0] {
		return 0
	}
	return float64(r.heap[1]-r.heap[0]) / float64(r.calls[1]-r.calls[0])
}

// callsPerMin is the sample's own call rate between the first and the
// last dump.
func (r recorded) callsPerMin() float64 {
	return float64(r.calls[1]-r.calls[0]) / r.last.Sub(r.first).Minutes()
}

// recordCounted is recordUntil, also reading the sample's own call count.
func recordCounted(t testing.TB, dir string, d, most, interval time.Duration, trace bool, ready func(progress) bool, args ...string) recorded {
	t.Helper()
	rec := recorded{calls: [2]int64{-1, -1}}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	p, err := samples.Start(ctx, dir, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop()
	client := &http.Client{Timeout: 20 * time.Second}
	get := func(path string) ([]byte, error) {
		resp, err := client.Get(p.URL + path)
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return nil, fmt.Errorf("GET %s: %s", path, resp.Status)
		}
		return io.ReadAll(resp.Body)
	}
	var got []fetched
	start := time.Now()
	for i := 0; ; i++ {
		at := time.Now()
		dump, err := get("/debug/pprof/goroutine?debug=2")
		if err != nil {
			t.Fatalf("%s: %v\n%s", filepath.Base(dir), err, p.Stderr())
		}
		got = append(got, fetched{fmt.Sprintf("goroutine-%02d.txt", i), at, dump})
		if b, err := get("/calls"); err == nil {
			var n, heap int64
			if _, err := fmt.Sscan(string(b), &n, &heap); err == nil {
				if i == 0 {
					rec.calls[0], rec.heap[0], rec.first = n, heap, at
				}
				rec.calls[1], rec.heap[1], rec.last = n, heap, at
			}
		}
		heap, err := get("/debug/pprof/heap?gc=1")
		if err != nil {
			t.Fatalf("%s: %v", filepath.Base(dir), err)
		}
		got = append(got, fetched{fmt.Sprintf("heap-%02d.pb.gz", i), time.Now(), heap})
		if trace && i == 1 {
			tr, err := get("/debug/pprof/trace?seconds=2")
			if err != nil {
				t.Fatalf("%s: %v", filepath.Base(dir), err)
			}
			got = append(got, fetched{"trace.out", time.Now(), tr})
		}
		if el := time.Since(start); el >= most || el >= d && (ready == nil || ready(progress{dumpsOf(got), rec.heap[1] - rec.heap[0], rec.calls[1] >= 0})) {
			break
		}
		time.Sleep(time.Until(start.Add(time.Duration(i+1) * interval)))
	}
	rec.work, _ = get("/work")
	rec.dir = bundleOf(t, dir, p, got)
	return rec
}

// bundleOf ingests the fetched files of sample dir's process p into a
// bundle as a capture would, the kept source included, and returns its
// path.
func bundleOf(t testing.TB, dir string, p *samples.Process, got []fetched) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), filepath.Base(dir)+".lsb")
	m := bundle.NewManifest(filepath.Base(dir), "analysis-test")
	m.Target.URL = p.URL
	m.Target.PID = p.PID
	// What a capture reads of the executable (capture.TargetInfo): its
	// Go version and release methods.
	exe := fmt.Sprintf("/proc/%d/exe", p.PID)
	if bi, err := buildinfo.ReadFile(exe); err == nil {
		m.Target.GoVersion = bi.GoVersion
	}
	m.Target.Methods, _ = binsyms.ReleaseMethods(exe)
	w, err := bundle.Create(out, m, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range got {
		a := bundle.Artifact{Name: f.name, Time: f.at, Size: int64(len(f.body))}
		switch {
		case strings.HasPrefix(f.name, "heap"):
			err = profiles.Ingest(w, bytes.NewReader(f.body), &a)
			w.Update(func(m *bundle.Manifest) { m.Source(bundle.SourcePprof) })
		case f.name == "trace.out":
			err = gotrace.Ingest(w, bytes.NewReader(f.body), &a, gotrace.Options{Now: f.at})
		default:
			err = dump.Ingest(w, bytes.NewReader(f.body), &a)
			w.Update(func(m *bundle.Manifest) { m.Source(bundle.SourceDump) })
		}
		if err != nil {
			t.Fatalf("ingest %s: %v", f.name, err)
		}
		w.Update(func(m *bundle.Manifest) { m.Artifacts = append(m.Artifacts, a); m.Widen(f.at) })
	}
	// The source as a capture keeps it, so rules that match source text
	// work as they do on a real capture.
	if _, err := srclines.Snapshot(w, memory.DefaultAllocator, srclines.Options{Source: "capture"}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return out
}
