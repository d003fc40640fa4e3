package analysis_test

import (
	"bytes"
	"fmt"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/leakscope/leakscope/analysis"
	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/ingest/dump"
	"github.com/leakscope/leakscope/ingest/srclines"
)

// waitShapeSizes are the goroutine counts the wait-shape benchmarks run.
var waitShapeSizes = []int{1_000, 10_000, 100_000}

var shapeProg = &testProg{name: "shapeprog"}

// BenchmarkAnalyzeWaitShapes analyses one dump of testdata/shapeprog for
// each shape and size, with the program's source kept (its waits read as
// Go) and without (decided from the frames' words): many goroutines
// waiting on one object in different ways, where pairing every waiter
// with every other costs N².
//   - pool: N workers on one jobs channel, half in a plain receive,
//     half in a select;
//   - shared: N goroutines holding one struct, parked on it in eight
//     ways;
//   - mixed: N Cond waiters at one line, each on a Cond of its own, half
//     with a sleeping signaller: with source, a site parted in two;
//   - bounded: N Cond waiters, each on its controller's queue, one in a
//     hundred controllers with a sleeping signaller of its own queue:
//     with source, a suspect whose waiters are stuck but for a bound.
//
// The program is read as Go once per process (its files' digest keys a
// cache): the first sub-benchmark, first-read, pays that read, and the
// sizes after it compare the analysis alone.
func BenchmarkAnalyzeWaitShapes(b *testing.B) {
	b.Run("first-read/pool/source=true/goroutines=1000", func(b *testing.B) {
		benchAnalyze(b, waitShapeBundle(b, "pool", 1_000, true), func(*analysis.Report) error { return nil })
	})
	for _, shape := range []string{"pool", "shared", "mixed", "bounded"} {
		for _, src := range []bool{true, false} {
			for _, n := range waitShapeSizes {
				name := fmt.Sprintf("%s/source=%v/goroutines=%d", shape, src, n)
				b.Run(name, func(b *testing.B) {
					dir := waitShapeBundle(b, shape, n, src)
					benchAnalyze(b, dir, func(rep *analysis.Report) error {
						if len(rep.Suspects)+len(rep.LookAlikes) == 0 {
							return fmt.Errorf("%s: no suspect and no look-alike for %d parked goroutines", name, n)
						}
						if shape == "mixed" && src {
							return partedHalf(rep, n)
						}
						if shape == "bounded" && src {
							return boundedStuck(rep, n)
						}
						return nil
					})
				})
			}
		}
	}
}

var waitShapeBundles = map[string]*benchBundle{}

// waitShapeBundle writes (once per process) the bundle of one shape and
// size: the dump shapeprog writes of itself, ingested as `leakscope
// ingest` does, with its source kept when src is set.
func waitShapeBundle(b *testing.B, shape string, n int, src bool) string {
	key := fmt.Sprintf("shape-%s-%d-%v.lsb", shape, n, src)
	bb, ok := waitShapeBundles[key]
	if !ok {
		bin := shapeProg.build(b)
		bb = &benchBundle{name: key, write: func(dir string) error { return writeWaitShape(dir, bin, shape, n, src) }}
		waitShapeBundles[key] = bb
	}
	return bb.path(b)
}

func writeWaitShape(dir, bin, shape string, n int, src bool) error {
	out, err := exec.Command(bin, shape, fmt.Sprint(n)).Output()
	if err != nil {
		return fmt.Errorf("shapeprog %s %d: %w", shape, n, err)
	}
	w, err := bundle.Create(dir, bundle.NewManifest("shape", "bench"), memory.DefaultAllocator)
	if err != nil {
		return err
	}
	a := &bundle.Artifact{Name: filepath.Join("raw", "dump.txt"), Time: time.Now()}
	if err := dump.Ingest(w, bytes.NewReader(out), a); err != nil {
		return err
	}
	w.Update(func(m *bundle.Manifest) { m.Artifacts = append(m.Artifacts, *a) })
	if src {
		if _, err := srclines.Snapshot(w, memory.DefaultAllocator, srclines.Options{Source: "ingest"}); err != nil {
			return err
		}
	}
	return w.Close()
}

// partedHalf checks the mixed shape's report: the n/2 waiters without a
// signaller are one suspect of their own.
func partedHalf(rep *analysis.Report, n int) error {
	for _, s := range rep.Suspects {
		if s.Location == "main.pair.func1" && s.Count == int64(n/2) {
			return nil
		}
	}
	return fmt.Errorf("mixed/%d: no suspect of the %d waiters without a signaller", n, n/2)
}

// boundedStuck checks the bounded shape's suspect: all n waiters, stuck
// but for the one in a hundred whose controller signals.
func boundedStuck(rep *analysis.Report, n int) error {
	for _, s := range rep.Suspects {
		if s.Location == "main.(*queue).get" && s.Count == int64(n) {
			return nil
		}
	}
	return fmt.Errorf("bounded/%d: no suspect of the %d waiters", n, n)
}
