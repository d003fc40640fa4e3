package export

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/apache/arrow/go/v15/parquet/file"
	"github.com/apache/arrow/go/v15/parquet/pqarrow"
	"github.com/leakscope/leakscope/analysis"
	"github.com/leakscope/leakscope/cmd/leakscope/bundles"
	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/ingest/schema"
)

// sampleBundle copies one embedded sample bundle to a temporary directory.
func sampleBundle(t *testing.T, name string) *bundle.Bundle {
	t.Helper()
	sub, err := fs.Sub(bundles.FS, name)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), name)
	if err := os.CopyFS(dir, sub); err != nil {
		t.Fatal(err)
	}
	b, err := bundle.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// readParquet reads a whole Parquet file back as an Arrow table.
func readParquet(t *testing.T, path string) arrow.Table {
	t.Helper()
	r, err := file.OpenParquetFile(path, false)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	fr, err := pqarrow.NewFileReader(r, pqarrow.ArrowReadProperties{BatchSize: 1 << 16}, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := fr.ReadTable(context.Background())
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	t.Cleanup(tbl.Release)
	return tbl
}

func TestParquetTablesMatchBundle(t *testing.T) {
	b := sampleBundle(t, "operator-sim.lsb")
	out := t.TempDir()
	c, err := Parquet(b, out, Options{})
	if err != nil {
		t.Fatal(err)
	}
	wantDir := filepath.Join(out, "node="+b.Manifest.Node, "capture="+b.Manifest.CaptureID)
	if c.Dir != wantDir {
		t.Errorf("capture dir %s, want %s", c.Dir, wantDir)
	}
	written := map[string]Table{}
	for _, tb := range c.Tables {
		written[tb.Name] = tb
	}
	checkTablesExported(t, b, written)
	checkSuspectsTable(t, b, written[TableSuspects].Path)
	caps := readParquet(t, written[TableCaptures].Path)
	if caps.NumRows() != 1 {
		t.Errorf("captures: %d rows, want 1", caps.NumRows())
	}
}

// checkTablesExported checks that every table of b is in written with
// its rows, plain (not dictionary-encoded) columns and the current schema.
func checkTablesExported(t *testing.T, b *bundle.Bundle, written map[string]Table) {
	infos, err := b.Tables(memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	for _, ti := range infos {
		tb, ok := written[ti.Name]
		if !ok {
			t.Errorf("table %s not exported", ti.Name)
			continue
		}
		tbl := readParquet(t, tb.Path)
		if tbl.NumRows() != ti.Rows || tb.Rows != ti.Rows {
			t.Errorf("%s: parquet has %d rows (reported %d), bundle %d", ti.Name, tbl.NumRows(), tb.Rows, ti.Rows)
		}
		for _, f := range tbl.Schema().Fields() {
			if f.Type.ID() == arrow.DICTIONARY {
				t.Errorf("%s.%s is still dictionary-encoded", ti.Name, f.Name)
			}
		}
		// Every export of a table has the current columns, also from a
		// bundle written before some were added.
		var got, want []string
		for _, f := range tbl.Schema().Fields() {
			got = append(got, f.Name)
		}
		for _, f := range schema.Schemas[ti.Name].Fields() {
			want = append(want, f.Name)
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s columns %q, want %q", ti.Name, got, want)
		}
	}
}

// checkSuspectsTable checks that the exported suspects table at path
// holds the report's suspects, in its order, unknown values null.
func checkSuspectsTable(t *testing.T, b *bundle.Bundle, path string) {
	rep, err := analysis.Analyze(b, memory.DefaultAllocator, analysis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	sus := readParquet(t, path)
	if int(sus.NumRows()) != len(rep.Suspects) || len(rep.Suspects) == 0 {
		t.Fatalf("suspects: %d rows, report has %d", sus.NumRows(), len(rep.Suspects))
	}
	col := func(name string) arrow.Array {
		idx := sus.Schema().FieldIndices(name)
		if len(idx) != 1 {
			t.Fatalf("suspects has no column %s", name)
		}
		return sus.Column(idx[0]).Data().Chunk(0)
	}
	for i, s := range rep.Suspects {
		if got := col("id").ValueStr(i); got != s.ID {
			t.Errorf("row %d: id %s, want %s", i, got, s.ID)
		}
		if got := col("location").ValueStr(i); got != s.Location {
			t.Errorf("row %d: location %s, want %s", i, got, s.Location)
		}
		if got := col("score").ValueStr(i); got == "" {
			t.Errorf("row %d: no score", i)
		}
		// Unknown is null, not 0.
		if rb := col("retained_bytes"); rb.IsNull(i) != (s.RetainedBytes == 0) {
			t.Errorf("row %d: retained_bytes %s, report %d", i, rb.ValueStr(i), s.RetainedBytes)
		}
		if v := col("verdict"); v.IsNull(i) != (s.Verdict == "") || (s.Verdict != "" && v.ValueStr(i) != s.Verdict) {
			t.Errorf("row %d: verdict %s, report %q", i, v.ValueStr(i), s.Verdict)
		}
		if o := col("origin"); o.IsNull(i) != (s.Origin == nil) || (s.Origin != nil && o.ValueStr(i) != s.Origin.Function) {
			t.Errorf("row %d: origin %s, report %+v", i, o.ValueStr(i), s.Origin)
		}
		if on := col("onset"); on.IsNull(i) != (s.Onset == nil || s.Onset.At.IsZero()) {
			t.Errorf("row %d: onset %s, report %+v", i, on.ValueStr(i), s.Onset)
		}
		if inc := col("incident"); inc.IsNull(i) != (s.Incident == "") || (s.Incident != "" && inc.ValueStr(i) != s.Incident) {
			t.Errorf("row %d: incident %s, report %q", i, inc.ValueStr(i), s.Incident)
		}
	}
}

// TestParquetReplaces checks that exporting a capture again replaces its
// directory and leaves no temporary behind.
func TestParquetReplaces(t *testing.T) {
	b := sampleBundle(t, "timeout-send.lsb")
	out := t.TempDir()
	for i := 0; i < 2; i++ {
		if _, err := Parquet(b, out, Options{}); err != nil {
			t.Fatal(err)
		}
	}
	var dirs []string
	filepath.WalkDir(out, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() && d.Name() == WorkDir {
			return fs.SkipDir
		}
		if err == nil && d.IsDir() && p != out {
			dirs = append(dirs, strings.TrimPrefix(p, out+"/"))
		}
		return nil
	})
	if len(dirs) != 2 || !strings.HasPrefix(dirs[0], "node=") || !strings.Contains(dirs[1], "/capture=") {
		t.Errorf("directories after two exports: %q", dirs)
	}
	if left := leftovers(t, out); len(left) > 0 {
		t.Errorf("temporaries after two exports: %q", left)
	}
}

func TestHiveEscape(t *testing.T) {
	for in, want := range map[string]string{
		"node-1.example": "node-1.example",
		"a/b=c":          "a%2Fb%3Dc",
		"x y%":           "x%20y%25",
	} {
		if got := hiveEscape(in); got != want {
			t.Errorf("hiveEscape(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestParquetTrigger exports a capture an alert started: captures.parquet
// holds the alert's name, labels and firing time, and the report's
// sentence of it; a capture started by hand has nulls there.
func TestParquetTrigger(t *testing.T) {
	b := sampleBundle(t, "timeout-send.lsb")
	fired := time.Date(2026, 12, 6, 9, 41, 7, 0, time.UTC)
	b.Manifest.Trigger = &bundle.Trigger{Source: bundle.TriggerAlert, Node: "vm", At: fired.Add(20 * time.Second),
		Alert: &bundle.Alert{Name: "GoroutineGrowthFast", StartsAt: fired, Labels: map[string]string{"alertname": "GoroutineGrowthFast", "job": "svc"}}}
	for _, tc := range []struct {
		trigger *bundle.Trigger
		want    string
	}{{b.Manifest.Trigger, `alert GoroutineGrowthFast ["alertname=GoroutineGrowthFast","job=svc"] 2026-12-06 09:41:07Z`}, {nil, "(null) (null) (null)"}} {
		b.Manifest.Trigger = tc.trigger
		c, err := Parquet(b, t.TempDir(), Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, tb := range c.Tables {
			if tb.Name != TableCaptures {
				continue
			}
			caps := readParquet(t, tb.Path)
			col := func(name string) arrow.Array {
				idx := caps.Schema().FieldIndices(name)
				if len(idx) != 1 {
					t.Fatalf("captures.parquet has no column %s", name)
				}
				return caps.Column(idx[0]).Data().Chunk(0)
			}
			got := fmt.Sprintf("%s %s %s", col("alert").ValueStr(0), col("alert_labels").ValueStr(0), col("alert_fired_at").ValueStr(0))
			if tc.trigger != nil {
				got = col("trigger").ValueStr(0) + " " + got
			}
			if !strings.HasPrefix(got, tc.want) {
				t.Errorf("captures.parquet trigger columns %q, want %q", got, tc.want)
			}
			text := col("trigger_text").ValueStr(0)
			if tc.trigger != nil && !strings.HasPrefix(text, "Alertmanager alert GoroutineGrowthFast (job=svc), firing since 2026-12-06 09:41:07.000 UTC") {
				t.Errorf("trigger_text %q", text)
			}
		}
	}
}
