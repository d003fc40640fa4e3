package ingest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/ingest/schema"
)

func TestNameTime(t *testing.T) {
	utc := func(s string) time.Time {
		v, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			t.Fatal(err)
		}
		return v.UTC()
	}
	for _, c := range []struct {
		name string
		want string // RFC 3339; "" = no time
	}{
		{"goroutine-dump-20261130T115743.315Z.txt", "2026-11-30T11:57:43.315Z"},
		{"heap-20261130T115743.321Z.pb.gz", "2026-11-30T11:57:43.321Z"},
		{"/some/dir/trace-20261130T115743Z.out", "2026-11-30T11:57:43Z"},
		{"goroutines-2024-05-06T07:08:09Z.txt", "2024-05-06T07:08:09Z"},
		{"goroutines-2024-05-06T07:08:09.5+02:00.txt", "2024-05-06T05:08:09.5Z"},
		{"dump_2024-05-06_07-08-09.txt", "2024-05-06T07:08:09Z"},
		{"dump 2024-05-06 07.08.09-0130.txt", "2024-05-06T08:38:09Z"},
		{"heap.1714979289.pb.gz", "2024-05-06T07:08:09Z"},
		{"heap-1714979289123.pb.gz", "2024-05-06T07:08:09.123Z"},
		{"goroutine.txt", ""},
		{"dump-pid4242.txt", ""},
		{"core-1234567890123456789012.txt", ""}, // too many digits for a Unix time
		{"dump-2024-13-06T07:08:09Z.txt", ""},   // no month 13
		{"dump-9999999999.txt", ""},             // year 2286
	} {
		got, detail, ok := NameTime(c.name)
		if c.want == "" {
			if ok {
				t.Errorf("%s: read %v (%s), want no time", c.name, got, detail)
			}
			continue
		}
		if !ok || !got.Equal(utc(c.want)) {
			t.Errorf("%s: got %v ok=%v (%s), want %s", c.name, got, ok, detail, c.want)
		}
	}
}

func TestParseTime(t *testing.T) {
	want := time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC)
	for _, s := range []string{"2024-05-06T07:08:09Z", "2024-05-06T09:08:09+02:00", "1714979289", "20240506T070809Z"} {
		got, err := ParseTime(s)
		if err != nil || !got.Equal(want) {
			t.Errorf("%s: %v %v", s, got, err)
		}
	}
	if _, err := ParseTime("yesterday"); err == nil || !strings.Contains(err.Error(), "RFC 3339") {
		t.Errorf("bad time: %v", err)
	}
}

// TestIngestTimeBasis ingests dumps whose modification times are all the
// same (as after a git clone): each keeps the time in its name, a copy
// inside a capture's raw/ keeps the capture's exact time, one without a
// name time falls back to mtime, ties stay separate snapshots in argument
// order, and --at wins over everything.
func TestIngestTimeBasis(t *testing.T) {
	_, dumpData, _ := realArtifacts(t)
	in := t.TempDir()
	mtime := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	n := 0
	put := func(name string) string {
		p := filepath.Join(in, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		// Distinct content: the bundle refuses a file it already holds.
		n++
		data := append(append([]byte{}, dumpData...), fmt.Sprintf("\ngoroutine %d [running]:\nmain.f()\n\t/x/main.go:%d +0x1\n", 900000+n, n)...)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		os.Chtimes(p, mtime, mtime)
		return p
	}
	// A capture bundle's raw file with its manifest.
	capDir := filepath.Join(in, "cap.lsb")
	exact := time.Date(2026, 11, 30, 11, 57, 43, 315123456, time.UTC)
	m := bundle.NewManifest("cap", "test")
	m.Artifacts = []bundle.Artifact{{Name: "raw/goroutine-dump-20261130T115743.315Z.txt", Kind: "dump", Time: exact}}
	w, err := bundle.Create(capDir, m, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	w.Close()

	dir := filepath.Join(t.TempDir(), "out.lsb")
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	steps := []struct {
		path  string
		at    time.Time
		want  time.Time
		basis string
	}{
		{put("goroutine-dump-20261130T115749.316Z.txt"), time.Time{}, time.Date(2026, 11, 30, 11, 57, 49, 316e6, time.UTC), bundle.TimeFileName},
		{put("cap.lsb/raw/goroutine-dump-20261130T115743.315Z.txt"), time.Time{}, exact, bundle.TimeCapture},
		{put("plain-a.txt"), time.Time{}, mtime, bundle.TimeMtime},
		{put("plain-b.txt"), time.Time{}, mtime.Add(time.Nanosecond), bundle.TimeOrder},
		{put("plain-c.txt"), time.Time{}, mtime.Add(2 * time.Nanosecond), bundle.TimeOrder},
		{put("plain-d.txt"), at, at, bundle.TimeGiven},
	}
	for _, s := range steps {
		a, err := File(dir, s.path, Options{At: s.at})
		if err != nil {
			t.Fatal(err)
		}
		if !a.Time.Equal(s.want) || a.TimeBasis != s.basis {
			t.Errorf("%s: time %v basis %q (%s), want %v %q", filepath.Base(s.path), a.Time, a.TimeBasis, a.TimeDetail, s.want, s.basis)
		}
	}
	b, err := bundle.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(b.Manifest.Artifacts); n != len(steps) {
		t.Fatalf("%d artifacts", n)
	}
	if d := b.Manifest.Artifacts[3].TimeDetail; !strings.Contains(d, "plain-a.txt") || !strings.Contains(d, "argument order") {
		t.Errorf("tie detail %q", d)
	}
	// Every file is its own snapshot.
	ts := map[int64]bool{}
	readGoroutineSnapshots(t, dir, ts)
	if len(ts) != len(steps) {
		t.Errorf("%d distinct snapshots in the goroutines table, want %d", len(ts), len(steps))
	}
}

// readGoroutineSnapshots adds the goroutines table's snapshot times to ts.
func readGoroutineSnapshots(t *testing.T, dir string, ts map[int64]bool) {
	t.Helper()
	b, err := bundle.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	err = b.ReadTable(schema.TableGoroutines, memory.DefaultAllocator, func(rec arrow.Record) error {
		col := rec.Column(int(rec.Schema().FieldIndices(schema.ColSnapshotTS)[0])).(*array.Timestamp)
		for i := 0; i < col.Len(); i++ {
			ts[int64(col.Value(i))] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
