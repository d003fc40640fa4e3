// Command dumpbench measures goroutine-dump parsing and ingest on a large
// dump and prints throughput and peak RSS, for `make bench`:
//
//	go run ./dev/dumpbench [-n 1000000] [-mode parse|ingest] [-file DUMP] [-cpuprofile F] [-heapprofile F]
//
// Without -file it uses the dump the benchmarks cache under
// os.TempDir()/leakscope-dump-bench, generating it on first use (a real
// SIGQUIT crash of a program holding n goroutines; several minutes).
// Peak RSS is the process's ru_maxrss, which includes the Go runtime.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/leakscope/leakscope/dev/benchstat"
	"github.com/leakscope/leakscope/dev/dumpgen"
	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/ingest/dump"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "dumpbench:", err)
		os.Exit(1)
	}
}

func run() error {
	n := flag.Int("n", 1_000_000, "goroutines in the generated dump")
	mode := flag.String("mode", "ingest", "parse (reader only) or ingest (into a bundle)")
	file := flag.String("file", "", "dump to read instead of the cached generated one")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of the parse or ingest to this file")
	heapProfile := flag.String("heapprofile", "", "write the heap profile at the peak of the heap to this file")
	flag.Parse()
	path := *file
	if path == "" {
		var err error
		path, err = dumpgen.Cached(*n, func(f string, a ...any) { fmt.Fprintf(os.Stderr, f+"\n", a...) })
		if err != nil {
			return err
		}
	}
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	if *cpuProfile != "" {
		stop, err := benchstat.ProfileCPU(*cpuProfile)
		if err != nil {
			return err
		}
		defer stop()
	}
	if *heapProfile != "" {
		defer benchstat.ProfilePeak(*heapProfile)()
	}
	start := time.Now()
	var count int64
	var status string
	var tableMB float64
	switch *mode {
	case "parse":
		count, status, err = parseAll(f)
	case "ingest":
		count, status, tableMB, err = ingestAll(f, path)
	default:
		err = fmt.Errorf("unknown -mode %q", *mode)
	}
	if err != nil {
		return err
	}
	el := time.Since(start)
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	mb := float64(st.Size()) / 1e6
	fmt.Printf("dump %s: %s, %.1f MB, %d goroutines (%s)\n", *mode, path, mb, count, status)
	fmt.Printf("  wall %.2fs: %.1f MB/s, %.0f goroutines/s\n", el.Seconds(), mb/el.Seconds(), float64(count)/el.Seconds())
	fmt.Printf("  cpu  %.2fs: %.1f MB/s, %.0f goroutines/s (per CPU-second; wall time suffers on a loaded machine)\n", cpu.Seconds(), mb/cpu.Seconds(), float64(count)/cpu.Seconds())
	fmt.Printf("  peak RSS %.1f MB\n", float64(ru.Maxrss)/1024)
	if tableMB > 0 {
		fmt.Printf("  goroutines table %.1f MB (%.3f of the dump)\n", tableMB, tableMB/mb)
	}
	return nil
}

// parseAll reads every goroutine of the dump in f with the reader alone.
func parseAll(f *os.File) (count int64, status string, err error) {
	rd := dump.NewReader(f)
	for {
		_, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return 0, "", err
		}
		count++
	}
	status = "complete"
	if rd.Truncated() {
		status = "truncated"
	}
	return count, status, nil
}

// ingestAll ingests the dump in f into a bundle in a temporary directory
// and returns its rows, status and the goroutines table's size in MB.
func ingestAll(f *os.File, path string) (count int64, status string, tableMB float64, err error) {
	dir, err := os.MkdirTemp("", "dumpbench")
	if err != nil {
		return 0, "", 0, err
	}
	defer os.RemoveAll(dir)
	w, err := bundle.Create(filepath.Join(dir, "b.lsb"), bundle.NewManifest("bench", "dumpbench"), memory.DefaultAllocator)
	if err != nil {
		return 0, "", 0, err
	}
	a := &bundle.Artifact{Name: filepath.Base(path), Time: time.Now()}
	if err := dump.Ingest(w, f, a); err != nil {
		w.Abort()
		return 0, "", 0, err
	}
	if err := w.Close(); err != nil {
		return 0, "", 0, err
	}
	if st, err := os.Stat(filepath.Join(dir, "b.lsb", "goroutines.arrow")); err == nil {
		tableMB = float64(st.Size()) / 1e6
	}
	return a.Rows, a.Status, tableMB, nil
}
