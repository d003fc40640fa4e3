// Package parquetjs checks that leakscope's Parquet exports open in an
// independent Parquet implementation, hyparquet for JavaScript, run under
// node: every file, with the bundle's row counts, a root schema element
// that is not REPEATED, and valid UTF-8 in every string.
package parquetjs

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/leakscope/leakscope/cmd/leakscope/bundles"
	"github.com/leakscope/leakscope/dev/bundletest"
	"github.com/leakscope/leakscope/export"
	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/ingest/schema"
)

type jsFile struct {
	Rows           int64          `json:"rows"`
	MetadataRows   int64          `json:"metadata_rows"`
	RootRepetition *string        `json:"root_repetition"`
	InvalidUTF8    int            `json:"invalid_utf8"`
	Nulls          map[string]int `json:"nulls"`
}

// readJS reads Parquet files with hyparquet.
func readJS(t *testing.T, paths []string) map[string]jsFile {
	t.Helper()
	out, err := exec.Command("node", append([]string{"read.mjs"}, paths...)...).Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			t.Fatalf("node: %v\n%s", err, ee.Stderr)
		}
		t.Fatalf("node: %v", err)
	}
	var got map[string]jsFile
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("decode node output %q: %v", out, err)
	}
	return got
}

// badNameBundle writes a bundle whose goroutines wait in a function whose
// name is not valid UTF-8, growing over three snapshots.
func badNameBundle(t *testing.T) *bundle.Bundle {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "bad.lsb")
	w := bundletest.New(t, dir, bundle.NewManifest("bad-utf8", "test"), memory.DefaultAllocator)
	sid := w.Stack(
		bundle.StackFrame{Function: "main.leak\xff\xfe", File: "/src/ma\xc3in.go", Line: 7},
		bundle.StackFrame{Function: "main.main", File: "/src/main.go", Line: 3},
	)
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano()
	goid := int64(1)
	for snap := range 3 {
		ts := start + int64(snap)*int64(time.Minute)
		for range 10 * (snap + 1) {
			goid++
			w.Add(schema.Goroutine{SnapshotTS: ts, Goid: goid, State: "chan send", WaitMinutes: int64(snap), StackID: sid,
				CreatorGoid: 1, CreatorFunction: "main.spawn\x80", Source: "raw/dump.txt", FrameArgs: []string{"0xc0000\xff", "0x1"}})
		}
		w.Flush()
	}
	return w.Open()
}

func TestHyparquetReadsEveryExport(t *testing.T) {
	if _, err := os.Stat("node_modules/hyparquet"); err != nil {
		t.Fatal("hyparquet for node is not installed: run `make deps` (npm ci in dev/parquetjs)")
	}
	bs := append(sampleBundles(t), badNameBundle(t))
	want, wantNulls := exportAll(t, bs, t.TempDir())
	var paths []string
	for p := range want {
		paths = append(paths, p)
	}
	checkHyparquetReads(t, readJS(t, paths), want, wantNulls)
	if len(paths) < 5*len(bs) {
		t.Errorf("only %d files for %d bundles", len(paths), len(bs))
	}
	fmt.Fprintf(os.Stderr, "hyparquet read %d files of %d bundles\n", len(paths), len(bs))
}

// sampleBundles opens a copy of every committed sample bundle.
func sampleBundles(t *testing.T) []*bundle.Bundle {
	var bs []*bundle.Bundle
	entries, err := fs.ReadDir(bundles.FS, ".")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !e.IsDir() || !strings.HasSuffix(e.Name(), ".lsb") {
			continue
		}
		sub, _ := fs.Sub(bundles.FS, e.Name())
		dir := filepath.Join(t.TempDir(), e.Name())
		if err := os.CopyFS(dir, sub); err != nil {
			t.Fatal(err)
		}
		b, err := bundle.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		bs = append(bs, b)
	}
	return bs
}

// exportAll exports every bundle of bs to out and returns the rows each
// exported file must hold, by path, and for each suspects file the
// suspects without retained bytes (null there).
func exportAll(t *testing.T, bs []*bundle.Bundle, out string) (want map[string]int64, wantNulls map[string]int) {
	want, wantNulls = map[string]int64{}, map[string]int{}
	for _, b := range bs {
		c, err := export.Parquet(b, out, export.Options{})
		if err != nil {
			t.Fatal(err)
		}
		infos, err := b.Tables(memory.DefaultAllocator)
		if err != nil {
			t.Fatal(err)
		}
		rows := map[string]int64{export.TableSuspects: int64(len(c.Report.Suspects)), export.TableCaptures: 1}
		for _, ti := range infos {
			rows[ti.Name] = ti.Rows
		}
		for _, tb := range c.Tables {
			if tb.Name == export.TableSuspects {
				for _, s := range c.Report.Suspects {
					if s.RetainedBytes == 0 {
						wantNulls[tb.Path]++
					}
				}
			}
			r, ok := rows[tb.Name]
			if !ok {
				t.Errorf("%s: exported table %s the bundle does not have", b.Dir, tb.Name)
			}
			want[tb.Path] = r
		}
	}
	return want, wantNulls
}

// checkHyparquetReads checks what hyparquet read of every file against
// the rows and nulls it must hold.
func checkHyparquetReads(t *testing.T, got map[string]jsFile, want map[string]int64, wantNulls map[string]int) {
	for p := range want {
		g, ok := got[p]
		switch {
		case !ok:
			t.Errorf("%s: hyparquet read nothing", p)
		case g.Rows != want[p] || g.MetadataRows != want[p]:
			t.Errorf("%s: hyparquet reads %d rows (metadata %d), the bundle has %d", p, g.Rows, g.MetadataRows, want[p])
		case g.RootRepetition != nil && *g.RootRepetition == "REPEATED":
			t.Errorf("%s: the root schema element is REPEATED", p)
		case g.InvalidUTF8 > 0:
			t.Errorf("%s: %d strings are not valid UTF-8", p, g.InvalidUTF8)
		}
		if n, ok := wantNulls[p]; ok && g.Nulls["retained_bytes"] != n {
			t.Errorf("%s: hyparquet reads %d null retained_bytes, the report leaves %d out", p, g.Nulls["retained_bytes"], n)
		}
	}
}
