// Command profbench measures pprof ingest beside profile.Parse alone on the
// same large profile, each in a process of its own so that peak RSS is its
// own, for `make bench`:
//
//	go run ./dev/profbench [-mode parse|ingest] [-file PROFILE]
//
// Without -file it uses the benchmark profile of package bigprof (200,000
// samples), written once to os.TempDir()/leakscope-prof-bench.pb.gz.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/google/pprof/profile"
	"github.com/leakscope/leakscope/dev/bigprof"
	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/ingest/profiles"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "profbench:", err)
		os.Exit(1)
	}
}

func run() error {
	mode := flag.String("mode", "ingest", "parse (profile.Parse alone) or ingest (into a bundle)")
	file := flag.String("file", "", "profile to read instead of the generated one")
	flag.Parse()
	path := *file
	if path == "" {
		path = filepath.Join(os.TempDir(), "leakscope-prof-bench.pb.gz")
		if _, err := os.Stat(path); err != nil {
			data, err := bigprof.Profile()
			if err != nil {
				return err
			}
			if err := os.WriteFile(path, data, 0o644); err != nil {
				return err
			}
		}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	start := time.Now()
	var rows int64
	switch *mode {
	case "parse":
		p, err := profile.Parse(bytes.NewReader(data))
		if err != nil {
			return err
		}
		rows = int64(len(p.Sample))
	case "ingest":
		dir, err := os.MkdirTemp("", "profbench")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		w, err := bundle.Create(filepath.Join(dir, "b.lsb"), bundle.NewManifest("bench", "profbench"), memory.DefaultAllocator)
		if err != nil {
			return err
		}
		a := &bundle.Artifact{Name: "heap", Time: time.Now()}
		if err := profiles.Ingest(w, bytes.NewReader(data), a); err != nil {
			return err
		}
		if err := w.Close(); err != nil {
			return err
		}
		rows = a.Rows
	default:
		return fmt.Errorf("unknown -mode %q (parse or ingest)", *mode)
	}
	wall := time.Since(start)
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	mb := float64(len(data)) / 1e6
	fmt.Printf("profile %s: %s, %.1f MB gzipped, %d samples\n", *mode, path, mb, rows)
	fmt.Printf("  wall %.2fs: %.1f MB/s; peak RSS %.0f MB\n", wall.Seconds(), mb/wall.Seconds(), float64(ru.Maxrss)/1024)
	return nil
}
