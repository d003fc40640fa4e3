package gotrace

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/apache/arrow/go/v15/arrow/memory"
	"golang.org/x/exp/trace"

	"github.com/leakscope/leakscope/dev/benchstat"
	"github.com/leakscope/leakscope/ingest/bundle"
)

// The benchmarks need a large trace. It is generated once by
// testdata/bigprog and cached in os.TempDir() (delete it to regenerate);
// LEAKSCOPE_BIG_TRACE names another file to use instead.
//
//	go test ./ingest/gotrace -run '^$' -bench . -benchtime 1x
//
// prints, for the same file in the same run, the bare x/exp/trace event
// rate (BenchmarkRead), ingest's (BenchmarkIngest) and their ratio
// (ingest-ratio, in BenchmarkIngest). internal/tracebench runs each in a
// process of its own, for peak RSS. For CPU profiles:
//
//	go test ./ingest/gotrace -run '^$' -bench '^BenchmarkIngestOnly$' -benchtime 1x -cpuprofile cpu.out

const bigTraceSize = 220 << 20

func bigTrace(b *testing.B) string {
	b.Helper()
	if p := os.Getenv("LEAKSCOPE_BIG_TRACE"); p != "" {
		return p
	}
	path := filepath.Join(os.TempDir(), "leakscope-gotrace-bench-"+strconv.Itoa(bigTraceSize>>20)+"MB.trace")
	if st, err := os.Stat(path); err == nil && st.Size() >= bigTraceSize {
		return path
	}
	b.Logf("generating %s (about 30 s)", path)
	tmp := path + ".tmp"
	cmd := exec.Command("go", "run", "./testdata/bigprog", "-out", tmp, "-size", strconv.Itoa(bigTraceSize))
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("testdata/bigprog: %v\n%s", err, out)
	}
	if err := os.Rename(tmp, path); err != nil {
		b.Fatal(err)
	}
	return path
}

// readAll is the bare x/exp/trace loop ingest is measured against.
func readAll(path string) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	r, err := trace.NewReader(f)
	if err != nil {
		return 0, err
	}
	var n int64
	for {
		_, err := r.ReadEvent()
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
		n++
	}
}

func peakRSSMB() float64 {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return float64(ru.Maxrss) / 1024 // Linux reports KiB
}

// BenchmarkRead measures bare x/exp/trace reading.
func BenchmarkRead(b *testing.B) {
	path := bigTrace(b)
	var rate float64
	for b.Loop() {
		start := time.Now()
		n, err := readAll(path)
		if err != nil {
			b.Fatal(err)
		}
		rate = float64(n) / time.Since(start).Seconds()
	}
	b.ReportMetric(rate, "events/s")
	b.ReportMetric(peakRSSMB(), "peak-rss-MB")
}

// BenchmarkIngest measures, on the same file in the same run, bare
// reading and Ingest in pairs (with -benchtime Nx, N pairs, the order
// alternating, each phase starting from a collected heap so that neither
// sweeps the other's garbage). It reports both event rates of the median
// pair, the median of the pairs' event-rate ratios (ingest-ratio), the
// median ratio of CPU time spent (cpu-ratio: bare CPU / ingest CPU; with
// N cores ingest can reach at most N times it, printed as cpu-ceiling),
// how long the first trace_goroutines batch took to reach the disk, and
// the size of the tables against the trace's. Peak RSS needs a process
// per phase: see internal/tracebench, which `make bench` runs.
func BenchmarkIngest(b *testing.B) {
	path := bigTrace(b)
	st, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	var ratios, cpuRatios, bareRates, rates, firsts []float64
	var tables int64
	var events int64
	for i := 0; b.Loop(); i++ {
		var bareWall, bareCPU, wall, cpu time.Duration
		bare := func() {
			runtime.GC()
			start, c0 := time.Now(), cpuTime()
			n, err := readAll(path)
			if err != nil {
				b.Fatal(err)
			}
			events = n
			bareWall, bareCPU = time.Since(start), cpuTime()-c0
		}
		ingest := func() {
			dir := filepath.Join(b.TempDir(), "b.lsb")
			w, err := bundle.Create(dir, bundle.NewManifest("bench", "bench"), memory.DefaultAllocator)
			if err != nil {
				b.Fatal(err)
			}
			f, err := os.Open(path)
			if err != nil {
				b.Fatal(err)
			}
			runtime.GC()
			start, c0 := time.Now(), cpuTime()
			done := make(chan struct{})
			firstCh := make(chan time.Duration, 1)
			go watchFirstRows(dir, start, done, firstCh)
			a := bundle.Artifact{Name: "raw/bench.trace"}
			err = Ingest(w, f, &a, Options{})
			f.Close()
			if cerr := w.Close(); err == nil {
				err = cerr
			}
			wall, cpu = time.Since(start), cpuTime()-c0
			close(done)
			firsts = append(firsts, (<-firstCh).Seconds())
			if err != nil {
				b.Fatal(err)
			}
			if a.Status != bundle.StatusComplete {
				b.Fatalf("status %s: %s", a.Status, a.Detail)
			}
			if tables, err = tableBytes(dir); err != nil {
				b.Fatal(err)
			}
		}
		if i%2 == 0 {
			bare()
			ingest()
		} else {
			ingest()
			bare()
		}
		ratios = append(ratios, bareWall.Seconds()/wall.Seconds())
		cpuRatios = append(cpuRatios, bareCPU.Seconds()/cpu.Seconds())
		bareRates = append(bareRates, float64(events)/bareWall.Seconds())
		rates = append(rates, float64(events)/wall.Seconds())
		b.Logf("pair %d: bare %v (%v CPU), ingest %v (%v CPU): ratio %.3f", i+1, bareWall.Round(time.Millisecond), bareCPU.Round(time.Millisecond),
			wall.Round(time.Millisecond), cpu.Round(time.Millisecond), ratios[len(ratios)-1])
	}
	b.ReportMetric(benchstat.Median(bareRates), "bare-events/s")
	b.ReportMetric(benchstat.Median(rates), "events/s")
	b.ReportMetric(benchstat.Median(ratios), "ingest-ratio")
	b.ReportMetric(benchstat.Median(cpuRatios), "cpu-ratio")
	b.ReportMetric(min(1, float64(runtime.GOMAXPROCS(0))*benchstat.Median(cpuRatios)), "cpu-ceiling")
	b.ReportMetric(benchstat.Median(firsts), "first-rows-s")
	b.ReportMetric(float64(tables)/float64(st.Size()), "tables/trace")
}

// tableBytes sums the sizes of a bundle's tables.
func tableBytes(dir string) (int64, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.arrow"))
	if err != nil {
		return 0, err
	}
	var n int64
	for _, p := range files {
		st, err := os.Stat(p)
		if err != nil {
			return 0, err
		}
		n += st.Size()
	}
	return n, nil
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// watchFirstRows reports how long after start trace_goroutines.arrow first
// held a record batch on disk (the first answer a reader could get).
func watchFirstRows(dir string, start time.Time, done <-chan struct{}, out chan<- time.Duration) {
	path := filepath.Join(dir, "trace_goroutines.arrow")
	t := time.NewTicker(5 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-done:
			out <- time.Since(start)
			return
		case <-t.C:
			// A stream holding only its schema is a few hundred bytes; a
			// flushed batch makes it larger.
			if st, err := os.Stat(path); err == nil && st.Size() > 1024 {
				out <- time.Since(start)
				return
			}
		}
	}
}

// BenchmarkIngestOnly ingests the big trace and nothing else, so that
// peak-rss-MB is ingest's own. Run it in a process of its own on traces of
// different sizes to compare peaks, e.g.
//
//	LEAKSCOPE_BIG_TRACE=/tmp/small.trace go test ./ingest/gotrace -run '^$' -bench '^BenchmarkIngestOnly$' -benchtime 1x
func BenchmarkIngestOnly(b *testing.B) {
	path := bigTrace(b)
	var a bundle.Artifact
	var wall time.Duration
	for b.Loop() {
		dir := filepath.Join(b.TempDir(), "b.lsb")
		w, err := bundle.Create(dir, bundle.NewManifest("bench", "bench"), memory.DefaultAllocator)
		if err != nil {
			b.Fatal(err)
		}
		f, err := os.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		a = bundle.Artifact{Name: "raw/bench.trace"}
		err = Ingest(w, f, &a, Options{})
		f.Close()
		if cerr := w.Close(); err == nil {
			err = cerr
		}
		wall = time.Since(start)
		if err != nil {
			b.Fatal(err)
		}
	}
	st, _ := os.Stat(path)
	b.ReportMetric(float64(st.Size())/(1<<20), "trace-MB")
	b.ReportMetric(float64(wall.Nanoseconds())/1e9, "ingest-s")
	b.ReportMetric(peakRSSMB(), "peak-rss-MB")
}

// BenchmarkGoToolTrace measures `go tool trace -http=127.0.0.1:0 FILE` on
// the big trace: seconds until it has parsed the trace ("Splitting trace
// for viewer", parsed-s) and until it serves ("Trace viewer is listening",
// listening-s), capped at 5 minutes (a capped value is reported as the
// cap). Compare with BenchmarkIngest's first-rows-s. It is slow, so it
// runs only with LEAKSCOPE_BENCH_GOTOOLTRACE=1.
func BenchmarkGoToolTrace(b *testing.B) {
	if os.Getenv("LEAKSCOPE_BENCH_GOTOOLTRACE") == "" {
		b.Skip("set LEAKSCOPE_BENCH_GOTOOLTRACE=1 to run go tool trace on the big trace")
	}
	path := bigTrace(b)
	const capAt = 5 * time.Minute
	// Run the tool binary itself, so that killing it leaves no child.
	tool, err := exec.Command("go", "tool", "-n", "trace").Output()
	if err != nil {
		b.Fatal(err)
	}
	var parsed, listening time.Duration
	for b.Loop() {
		parsed, listening = capAt, capAt
		cmd := exec.Command(strings.TrimSpace(string(tool)), "-http=127.0.0.1:0", path)
		cmd.Env = append(os.Environ(), "BROWSER=true")
		stderr, err := cmd.StderrPipe()
		if err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		lines := make(chan string)
		go func() {
			defer close(lines)
			buf := make([]byte, 4096)
			var acc []byte
			for {
				n, err := stderr.Read(buf)
				acc = append(acc, buf[:n]...)
				for {
					i := bytes.IndexByte(acc, '\n')
					if i < 0 {
						break
					}
					lines <- string(acc[:i])
					acc = acc[i+1:]
				}
				if err != nil {
					return
				}
			}
		}()
		timeout := time.After(capAt)
	wait:
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					break wait
				}
				if strings.Contains(l, "Splitting trace for viewer") {
					parsed = time.Since(start)
				}
				if strings.Contains(l, "listening on") {
					listening = time.Since(start)
					break wait
				}
			case <-timeout:
				break wait
			}
		}
		cmd.Process.Kill()
		cmd.Wait()
	}
	b.ReportMetric(parsed.Seconds(), "parsed-s")
	b.ReportMetric(listening.Seconds(), "listening-s")
}
