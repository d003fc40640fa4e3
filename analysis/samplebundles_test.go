package analysis_test

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/leakscope/leakscope/analysis"
	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/ingest/schema"
	"github.com/leakscope/leakscope/samples"
)

// TestCommittedSampleBundles analyses the sample bundles recorded from the
// sample programs (cmd/leakscope/bundles, with pprof, traces and eBPF) and checks
// them against each program's declared leaks: every planted leak in the top
// ranks, no other suspect, and none blamed on the profiler's own
// allocations.
func TestCommittedSampleBundles(t *testing.T) {
	dirs, err := filepath.Glob("../cmd/leakscope/bundles/*.lsb")
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no sample bundles found (%v)", err)
	}
	for _, dir := range dirs {
		name := strings.TrimSuffix(filepath.Base(dir), ".lsb")
		t.Run(name, func(t *testing.T) {
			truth, err := samples.Load(filepath.Join("..", "samples", name))
			if err != nil {
				t.Fatal(err)
			}
			b, err := bundle.Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
			defer mem.AssertSize(t, 0)
			rep, err := analysis.Analyze(b, mem, analysis.Options{})
			if err != nil {
				t.Fatal(err)
			}
			r := evaluate(name, truth, rep)
			if r.found != r.leaks || r.fp != 0 {
				t.Errorf("found %d of %d planted leaks (missed %v), %d false suspects %v", r.found, r.leaks, r.missed, r.fp, r.extra)
			}
			for _, s := range rep.Suspects {
				if strings.HasPrefix(s.Location, "net/http/pprof.") || strings.HasPrefix(s.Location, "runtime/trace.") {
					t.Errorf("suspect %s blames the profiler itself: %s", s.ID, s.Location)
				}
			}
		})
	}
}

// TestSampleBundlesMatchSamples: the committed sample bundles keep the
// source of the sample programs as they are now (make generate records
// them again after a change): every kept function's file hash and text
// equal the current file's, and every suspect's quoted line is in it.
func TestSampleBundlesMatchSamples(t *testing.T) {
	dirs, err := filepath.Glob("../cmd/leakscope/bundles/*.lsb")
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no sample bundles found (%v)", err)
	}
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			b, err := bundle.Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
			defer mem.AssertSize(t, 0)
			kept := 0
			err = b.ReadTable(schema.TableSourceCode, mem, func(rec arrow.Record) error {
				col := func(name string) arrow.Array { return rec.Column(rec.Schema().FieldIndices(name)[0]) }
				files, status := bundle.NewStrings(col(schema.ColFile)), bundle.NewStrings(col(schema.ColStatus))
				text, sha := col(schema.ColText).(*array.String), col(schema.ColFileSHA256).(*array.String)
				start := col(schema.ColStartLine).(*array.Int64)
				for i := 0; i < int(rec.NumRows()); i++ {
					rel, ok := samplePath(files.Value(i))
					if !ok || status.Value(i) != schema.SourceOK {
						continue
					}
					kept++
					data, err := os.ReadFile(rel)
					if err != nil {
						t.Errorf("%s: %v", rel, err)
						continue
					}
					if sum := sha256.Sum256(data); hex.EncodeToString(sum[:]) != sha.Value(i) {
						t.Errorf("%s changed since the bundle was recorded: run make generate", rel)
						continue
					}
					lines := strings.Split(string(data), "\n")
					got := strings.Split(text.Value(i), "\n")
					from := int(start.Value(i)) - 1
					if from < 0 || from+len(got) > len(lines) || strings.Join(lines[from:from+len(got)], "\n") != text.Value(i) {
						t.Errorf("%s: kept text at line %d differs from the file", rel, from+1)
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if kept == 0 {
				t.Fatal("no sample source kept in the bundle: run make generate")
			}
			rep, err := analysis.Analyze(b, mem, analysis.Options{})
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range rep.Suspects {
				if _, sample := samplePath(s.File); sample && (s.Source == nil || s.Source.Status != analysis.SourceOK) {
					t.Errorf("%s at %s:%d: source %+v", s.ID, s.File, s.Line, s.Source)
				}
			}
		})
	}
}

// samplePath maps a build path of a sample's file (…/samples/NAME/x.go)
// to the file in this checkout.
func samplePath(file string) (string, bool) {
	i := strings.LastIndex(file, "/samples/")
	if i < 0 {
		return "", false
	}
	return filepath.Join("..", "samples", filepath.FromSlash(file[i+len("/samples/"):])), true
}
