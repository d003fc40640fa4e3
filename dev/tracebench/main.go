// Command tracebench measures trace ingest beside bare x/exp/trace reading
// of the same trace, each in a process of its own (so that peak RSS and
// CPU time are its own), in pairs whose order alternates, and prints the
// ratios for `make bench`:
//
//	go run ./dev/tracebench [-pairs 3] [-size 220] [-shape mixed] [-pace MBPS] [-via file|gotrace] [-file TRACE] [-workers N]
//
// Ingest is measured as leakscope ingest runs it (-via file: ingest.File,
// with content detection, the raw copy and the source snapshot), or the
// parser alone (-via gotrace: gotrace.Ingest). Without -file it uses a
// trace of testdata/bigprog of -size MB and -shape (mixed, spans: every
// goroutine with a task and a region, or goroutines: short goroutines
// without spans), paced at -pace MB a second (0: as fast as it goes; the
// pace sets how much a generation holds), generated once into
// os.TempDir() (the mixed one is the file BenchmarkIngest uses). Per pair
// it prints both wall times, event rates, CPU times and peak RSS; then
// the median over pairs of the event-rate ratio (ingest/bare), the CPU
// ratio (bare CPU / ingest CPU: with N cores, ingest can reach at most N
// times it), the peak-RSS ratio, and the size of the tables ingest wrote
// against the trace's, in all and per table. The load average is printed
// before and after: wall-clock ratios mean something only when the
// machine was quiet, CPU ratios hold either way.
package main

import (
	"bufio"
	"cmp"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	rtrace "runtime/trace"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/apache/arrow/go/v15/arrow/memory"
	"golang.org/x/exp/trace"

	"github.com/leakscope/leakscope/dev/benchstat"
	"github.com/leakscope/leakscope/ingest"
	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/ingest/gotrace"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "tracebench:", err)
		os.Exit(1)
	}
}

// result is what one child process reports.
type result struct {
	Events int64   `json:"events,omitempty"`
	Wall   float64 `json:"wall_s"`
	Tables int64   `json:"tables_bytes,omitempty"`
	// PerTable is the size of each table ingest wrote.
	PerTable map[string]int64 `json:"per_table,omitempty"`
	CPU      float64          `json:"-"`
	RSSMB    float64          `json:"-"`
}

func run() error {
	pairs := flag.Int("pairs", 3, "bare/ingest pairs to run, order alternating (0: generate the trace and stop)")
	size := flag.Int("size", 220, "size in MB of the generated trace")
	shape := flag.String("shape", "mixed", "shape of the generated trace: mixed, spans or goroutines")
	pace := flag.Float64("pace", 0, "MB a second the generated trace grows by at most (0: unpaced), which sets how much a generation holds")
	file := flag.String("file", "", "trace to read instead of the generated one")
	workers := flag.Int("workers", 0, "generations decoded at once (0: ingest's default)")
	via := flag.String("via", "file", "what is measured against bare reading: file (ingest.File, what leakscope ingest runs: content detection, the raw copy, the source snapshot) or gotrace (gotrace.Ingest alone)")
	child := flag.String("child", "", "bare, file or ingest (gotrace.Ingest), once, in this process (with -file)")
	heapProfile := flag.String("heapprofile", "", "with -child: write the heap profile at the peak of the heap to this file")
	cpuProfile := flag.String("cpuprofile", "", "with -child: write a CPU profile to this file")
	execTrace := flag.String("exectrace", "", "with -child: write an execution trace of the run to this file")
	flag.Parse()
	if *child != "" {
		return profiledChild(*child, *file, *workers, *cpuProfile, *heapProfile, *execTrace)
	}
	measured := map[string]string{"file": "file", "gotrace": "ingest"}[*via]
	if measured == "" {
		return fmt.Errorf("-via %q: want file or gotrace", *via)
	}
	if measured == "file" && *workers != 0 {
		return errors.New("-workers applies to -via gotrace only")
	}
	path := *file
	if path == "" {
		var err error
		if path, err = benchTrace(*size, *shape, *pace); err != nil {
			return err
		}
	}
	st, err := os.Stat(path)
	if err != nil {
		return err
	}
	if *pairs <= 0 {
		fmt.Printf("trace %s: %.1f MB\n", path, mb(st.Size()))
		return nil
	}
	fmt.Printf("trace %s: %.1f MB; GOMAXPROCS %d; ingest via %s; load average before: %s\n", path, mb(st.Size()), runtime.GOMAXPROCS(0), *via, loadAvg())
	var ratios, cpuRatios []float64
	var bareRSS, ingestRSS float64
	var tables int64
	var perTable map[string]int64
	for i := range *pairs {
		order := []string{"bare", measured}
		if i%2 == 1 {
			order = []string{measured, "bare"}
		}
		got := map[string]result{}
		for _, mode := range order {
			r, err := runProcess(mode, path, *workers)
			if err != nil {
				return err
			}
			got[mode] = r
		}
		b, in := got["bare"], got[measured]
		in.Events = b.Events // the trace's events, which bare reading counts
		ratio := b.Wall / in.Wall
		ratios = append(ratios, ratio)
		cpuRatios = append(cpuRatios, b.CPU/in.CPU)
		bareRSS, ingestRSS, tables = max(bareRSS, b.RSSMB), max(ingestRSS, in.RSSMB), in.Tables
		perTable = in.PerTable
		fmt.Printf("pair %d (%s first): bare %.2f s (%.2f M events/s, CPU %.2f s, peak RSS %.0f MB); ingest %.2f s (%.2f M events/s, CPU %.2f s, peak RSS %.0f MB); ingest/bare event rate %.3f, CPU ratio %.3f\n",
			i+1, order[0], b.Wall, float64(b.Events)/b.Wall/1e6, b.CPU, b.RSSMB, in.Wall, float64(in.Events)/in.Wall/1e6, in.CPU, in.RSSMB, ratio, b.CPU/in.CPU)
	}
	fmt.Printf("median of %d pairs: ingest-ratio %.3f (min %.3f, max %.3f); cpu-ratio %.3f (bare CPU / ingest CPU; on N cores ingest can reach at most N times it)\n",
		len(ratios), benchstat.Median(ratios), slices.Min(ratios), slices.Max(ratios), benchstat.Median(cpuRatios))
	fmt.Printf("peak RSS: ingest %.0f MB, bare %.0f MB: rss-ratio %.2f; tables %.1f MB = %.3f of the trace\n",
		ingestRSS, bareRSS, ingestRSS/bareRSS, mb(tables), float64(tables)/float64(st.Size()))
	fmt.Printf("tables:%s\n", tableSizes(perTable, st.Size()))
	fmt.Printf("load average after: %s\n", loadAvg())
	return nil
}

// profiledChild runs one child in this process, writing the profiles
// and execution trace whose file names are not empty.
func profiledChild(mode, path string, workers int, cpuProfile, heapProfile, execTrace string) error {
	if cpuProfile != "" {
		stop, err := benchstat.ProfileCPU(cpuProfile)
		if err != nil {
			return err
		}
		defer stop()
	}
	if heapProfile != "" {
		stop := benchstat.ProfilePeak(heapProfile)
		defer stop()
	}
	if execTrace != "" {
		stop, err := startTrace(execTrace)
		if err != nil {
			return err
		}
		defer stop()
	}
	return runChild(mode, path, workers)
}

// runProcess runs one child and adds its CPU time and peak RSS.
func runProcess(mode, path string, workers int) (result, error) {
	cmd := exec.Command(os.Args[0], "-child", mode, "-file", path, "-workers", strconv.Itoa(workers))
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return result{}, fmt.Errorf("%s: %w", mode, err)
	}
	var r result
	if err := json.Unmarshal(out, &r); err != nil {
		return result{}, fmt.Errorf("%s: %w (%q)", mode, err, out)
	}
	ps := cmd.ProcessState
	r.CPU = (ps.UserTime() + ps.SystemTime()).Seconds()
	if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
		r.RSSMB = float64(ru.Maxrss) / 1024 // KiB on Linux
	}
	return r, nil
}

// runChild reads or ingests the trace in this process and prints the
// result as JSON.
func runChild(mode, path string, workers int) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	var r result
	start := time.Now()
	switch mode {
	case "bare":
		tr, err := trace.NewReader(bufio.NewReader(f))
		if err != nil {
			return err
		}
		for {
			_, err := tr.ReadEvent()
			if err == io.EOF {
				break
			}
			if err != nil {
				return err
			}
			r.Events++
		}
	case "file":
		dir, err := os.MkdirTemp("", "tracebench")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		bdir := filepath.Join(dir, "b.lsb")
		a, err := ingest.File(bdir, path, ingest.Options{})
		if err != nil {
			return err
		}
		if a.Status != bundle.StatusComplete {
			return fmt.Errorf("ingest: %s: %s", a.Status, a.Detail)
		}
		r.Wall = time.Since(start).Seconds()
		if r.Tables, r.PerTable, err = tableBytes(bdir); err != nil {
			return err
		}
	case "ingest":
		dir, err := os.MkdirTemp("", "tracebench")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		bdir := filepath.Join(dir, "b.lsb")
		w, err := bundle.Create(bdir, bundle.NewManifest("bench", "tracebench"), memory.DefaultAllocator)
		if err != nil {
			return err
		}
		a := bundle.Artifact{Name: "raw/bench.trace"}
		err = gotrace.Ingest(w, f, &a, gotrace.Options{Workers: workers})
		if cerr := w.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
		if a.Status != bundle.StatusComplete {
			return fmt.Errorf("ingest: %s: %s", a.Status, a.Detail)
		}
		r.Wall = time.Since(start).Seconds()
		if r.Tables, r.PerTable, err = tableBytes(bdir); err != nil {
			return err
		}
	default:
		return fmt.Errorf("unknown mode %q", mode)
	}
	if r.Wall == 0 {
		r.Wall = time.Since(start).Seconds()
	}
	return json.NewEncoder(os.Stdout).Encode(r)
}

// tableBytes sums the sizes of a bundle's tables and returns each.
func tableBytes(dir string) (int64, map[string]int64, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.arrow"))
	if err != nil {
		return 0, nil, err
	}
	var n int64
	per := make(map[string]int64, len(files))
	for _, p := range files {
		st, err := os.Stat(p)
		if err != nil {
			return 0, nil, err
		}
		n += st.Size()
		per[strings.TrimSuffix(filepath.Base(p), ".arrow")] = st.Size()
	}
	return n, per, nil
}

// tableSizes lists the tables of at least 0.1 MB, largest first, each in
// MB and as a fraction of the trace's size.
func tableSizes(per map[string]int64, trace int64) string {
	names := make([]string, 0, len(per))
	for t, n := range per {
		if n >= 100<<10 {
			names = append(names, t)
		}
	}
	slices.SortFunc(names, func(a, b string) int {
		if c := cmp.Compare(per[b], per[a]); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	var sb strings.Builder
	for _, t := range names {
		fmt.Fprintf(&sb, " %s %.1f MB (%.3f)", t, mb(per[t]), float64(per[t])/float64(trace))
	}
	return sb.String()
}

// benchTrace returns the generated benchmark trace of size MB and shape,
// making it with testdata/bigprog the first time.
func benchTrace(size int, shape string, pace float64) (string, error) {
	name := "leakscope-gotrace-bench-" + strconv.Itoa(size) + "MB"
	if shape != "mixed" {
		name = "leakscope-gotrace-bench-" + shape + "-" + strconv.Itoa(size) + "MB"
	}
	if pace > 0 {
		name += "-" + strconv.FormatFloat(pace, 'f', -1, 64) + "MBps"
	}
	name += ".trace"
	path := filepath.Join(os.TempDir(), name)
	if st, err := os.Stat(path); err == nil && st.Size() >= int64(size)<<20 {
		return path, nil
	}
	mod, err := exec.Command("go", "env", "GOMOD").Output()
	if gomod := strings.TrimSpace(string(mod)); err != nil || gomod == "" || gomod == os.DevNull {
		return "", errors.New("run from inside the leakscope module to generate the trace, or pass -file")
	}
	prog := filepath.Join(filepath.Dir(strings.TrimSpace(string(mod))), "ingest", "gotrace", "testdata", "bigprog")
	fmt.Fprintf(os.Stderr, "tracebench: generating %s (%d MB, %s, pace %g MB/s) with %s\n", path, size, shape, pace, prog)
	tmp := path + ".tmp"
	cmd := exec.Command("go", "run", prog, "-out", tmp, "-size", strconv.Itoa(size<<20), "-shape", shape, "-pace", strconv.FormatFloat(pace, 'f', -1, 64))
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("generate trace: %w", err)
	}
	return path, os.Rename(tmp, path)
}

// startTrace writes an execution trace of this process to path until
// stop is called.
func startTrace(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := rtrace.Start(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { rtrace.Stop(); f.Close() }, nil
}

func loadAvg() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(data))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

func mb(n int64) float64 { return float64(n) / (1 << 20) }
