package bundle

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/klauspost/compress/zstd"
	"github.com/leakscope/leakscope/ingest/schema"
)

var updateArchiveSeeds = flag.Bool("update-archive-seeds", false, "rewrite testdata/fuzz/FuzzUnpack seeds")

// makeBundle writes a small real bundle with goroutines, metrics and a raw
// artifact and returns its directory.
func makeBundle(t testing.TB, parent string) string {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	dir := filepath.Join(parent, "small.lsb")
	m := NewManifest("cap-1", "test")
	m.Node = "node-a"
	w, err := Create(dir, m, mem)
	if err != nil {
		t.Fatal(err)
	}
	sid, err := w.StackID([]StackFrame{{Function: "main.leak", File: "leak.go", Line: 7}, {Function: "main.main", File: "main.go", Line: 3}})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 50 {
		w.Append(schema.Goroutine{SnapshotTS: 1e18, Goid: int64(i + 1), State: "chan send", StackID: sid})
		w.Append(schema.Metric{TS: 1e18 + int64(i), Name: "goroutines", Value: float64(i)})
	}
	if _, _, err := w.CopyRaw("goroutine.txt", strings.NewReader("goroutine 1 [running]:\n")); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return dir
}

func rowCounts(t testing.TB, dir string) map[string]int64 {
	t.Helper()
	b, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	tables, err := b.Tables(memory.NewGoAllocator())
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	for _, ti := range tables {
		out[ti.Name] = ti.Rows
	}
	return out
}

func TestPackUnpackRoundTrip(t *testing.T) {
	src := makeBundle(t, t.TempDir())
	want := rowCounts(t, src)
	if want[schema.TableGoroutines] != 50 || want[schema.TableMetrics] != 50 {
		t.Fatalf("source rows %v", want)
	}
	for _, format := range []string{FormatTarZstd, FormatTarGzip} {
		t.Run(format, func(t *testing.T) {
			var buf bytes.Buffer
			if err := Pack(src, &buf, format); err != nil {
				t.Fatal(err)
			}
			dst := filepath.Join(t.TempDir(), "got.lsb")
			m, err := Unpack(&buf, dst, Limits{})
			if err != nil {
				t.Fatal(err)
			}
			if m.CaptureID != "cap-1" || m.Node != "node-a" {
				t.Errorf("manifest %+v", m)
			}
			got := rowCounts(t, dst)
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("rows %v, want %v", got, want)
			}
			raw, err := os.ReadFile(filepath.Join(dst, RawDir, "goroutine.txt"))
			if err != nil || string(raw) != "goroutine 1 [running]:\n" {
				t.Errorf("raw artifact %q %v", raw, err)
			}
			entries, _ := os.ReadDir(filepath.Dir(dst))
			if len(entries) != 1 {
				t.Errorf("parent holds %d entries, want only the bundle", len(entries))
			}
		})
	}
}

func TestFormatFromName(t *testing.T) {
	for name, want := range map[string]string{"a.tar.zst": FormatTarZstd, "A.TGZ": FormatTarGzip, "b.tar.gz": FormatTarGzip, "c.zip": "", "d.tzst": FormatTarZstd} {
		if got := FormatFromName(name); got != want {
			t.Errorf("FormatFromName(%q) = %q, want %q", name, got, want)
		}
	}
}

// entry is one tar entry of a handmade archive.
type entry struct {
	name, link string
	typ        byte
	body       []byte
	size       int64 // header size when it differs from len(body)
}

// tarOf builds a tar stream from entries.
func tarOf(t testing.TB, entries []entry) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		typ := e.typ
		if typ == 0 {
			typ = tar.TypeReg
		}
		size := int64(len(e.body))
		if e.size != 0 {
			size = e.size
		}
		if typ != tar.TypeReg {
			size = 0
		}
		if err := tw.WriteHeader(&tar.Header{Name: e.name, Linkname: e.link, Typeflag: typ, Size: size, Mode: 0o644, Format: tar.FormatPAX}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(e.body); err != nil && !errors.Is(err, tar.ErrWriteTooLong) {
			t.Fatal(err)
		}
	}
	tw.Flush()
	return buf.Bytes()
}

func gz(b []byte) []byte {
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	w.Write(b)
	w.Close()
	return buf.Bytes()
}

func zst(b []byte) []byte {
	var buf bytes.Buffer
	w, _ := zstd.NewWriter(&buf)
	w.Write(b)
	w.Close()
	return buf.Bytes()
}

// zeroReader yields n zero bytes.
type zeroReader struct{ n int64 }

func (z *zeroReader) Read(p []byte) (int, error) {
	if z.n <= 0 {
		return 0, io.EOF
	}
	k := min(int64(len(p)), z.n)
	clear(p[:k])
	z.n -= k
	return int(k), nil
}

// bomb is a zstd tar holding one raw file of n zero bytes beside a valid
// manifest.
func bomb(t testing.TB, manifest []byte, n int64) []byte {
	var buf bytes.Buffer
	zw, _ := zstd.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	tw.WriteHeader(&tar.Header{Name: ManifestFile, Size: int64(len(manifest)), Mode: 0o644, Typeflag: tar.TypeReg})
	tw.Write(manifest)
	tw.WriteHeader(&tar.Header{Name: "raw/zeros", Size: n, Mode: 0o644, Typeflag: tar.TypeReg})
	if _, err := io.Copy(tw, &zeroReader{n}); err != nil {
		t.Fatal(err)
	}
	tw.Close()
	zw.Close()
	return buf.Bytes()
}

func TestUnpackRefusesHostileArchives(t *testing.T) {
	src := makeBundle(t, t.TempDir())
	manifest, _ := os.ReadFile(filepath.Join(src, ManifestFile))
	goroutines, _ := os.ReadFile(filepath.Join(src, "goroutines.arrow"))
	metrics, _ := os.ReadFile(filepath.Join(src, "metrics.arrow"))
	var good bytes.Buffer
	if err := Pack(src, &good, FormatTarGzip); err != nil {
		t.Fatal(err)
	}
	mf := entry{name: "b.lsb/" + ManifestFile, body: manifest}

	cases := map[string]struct {
		data []byte
		lim  Limits
		want string
	}{
		"traversal":         {data: gz(tarOf(t, []entry{mf, {name: "b.lsb/../../evil", body: []byte("x")}})), want: "path traversal"},
		"traversal raw":     {data: gz(tarOf(t, []entry{mf, {name: "b.lsb/raw/../../x", body: []byte("x")}})), want: "path traversal"},
		"absolute":          {data: gz(tarOf(t, []entry{{name: "/etc/evil", body: []byte("x")}})), want: "absolute path"},
		"symlink":           {data: gz(tarOf(t, []entry{mf, {name: "b.lsb/raw/passwd", typ: tar.TypeSymlink, link: "/etc/passwd"}})), want: "links are not allowed"},
		"hardlink":          {data: gz(tarOf(t, []entry{mf, {name: "b.lsb/raw/passwd", typ: tar.TypeLink, link: "/etc/passwd"}})), want: "links are not allowed"},
		"device":            {data: gz(tarOf(t, []entry{mf, {name: "b.lsb/raw/null", typ: tar.TypeChar}})), want: "special file"},
		"fifo":              {data: gz(tarOf(t, []entry{mf, {name: "b.lsb/raw/p", typ: tar.TypeFifo}})), want: "special file"},
		"unknown file":      {data: gz(tarOf(t, []entry{mf, {name: "b.lsb/run.sh", body: []byte("#!/bin/sh")}})), want: "not a bundle file"},
		"nested dir":        {data: gz(tarOf(t, []entry{mf, {name: "b.lsb/raw/sub/x", body: []byte("x")}})), want: "not a bundle file"},
		"other dir":         {data: gz(tarOf(t, []entry{mf, {name: "b.lsb/etc/", typ: tar.TypeDir}})), want: "unexpected directory"},
		"two tops":          {data: gz(tarOf(t, []entry{mf, {name: "c.lsb/manifest.json", body: manifest}})), want: "outside the archive's top directory"},
		"duplicate":         {data: gz(tarOf(t, []entry{mf, mf})), want: "appears twice"},
		"no manifest":       {data: gz(tarOf(t, []entry{{name: "b.lsb/metrics.arrow", body: metrics}})), want: "no manifest.json"},
		"bad manifest":      {data: gz(tarOf(t, []entry{{name: "manifest.json", body: []byte("{nope")}})), want: "not a bundle manifest"},
		"garbage table":     {data: gz(tarOf(t, []entry{mf, {name: "b.lsb/metrics.arrow", body: bytes.Repeat([]byte("garbage!"), 100)}})), want: "table metrics"},
		"wrong schema":      {data: gz(tarOf(t, []entry{mf, {name: "b.lsb/metrics.arrow", body: goroutines}})), want: "column 0"},
		"not an archive":    {data: []byte("this is plain text, not a bundle archive at all"), want: "not a .tar.zst or .tar.gz"},
		"empty":             {data: nil, want: "empty"},
		"plain tar":         {data: tarOf(t, []entry{mf}), want: "not a .tar.zst or .tar.gz"},
		"gzip not tar":      {data: gz([]byte("hello, this is not a tar stream but it is long enough to matter ........................................................................................................................................................................................................................................................................................................................................................................................................................................................................................")), want: "read entry"},
		"truncated":         {data: good.Bytes()[:good.Len()/2], want: "bad bundle archive"},
		"truncated entry":   {data: gz(tarOf(t, []entry{mf, {name: "b.lsb/raw/x", body: []byte("abc"), size: 1000}})), want: "bad bundle archive"},
		"size bomb":         {data: bomb(t, manifest, 64<<20), lim: Limits{MaxBytes: 8 << 20}, want: "holds more than 8388608 bytes"},
		"file count bomb":   {data: gz(tarOf(t, append([]entry{mf}, manyRaw(50)...))), lim: Limits{MaxFiles: 20}, want: "more than 20 entries"},
		"big manifest":      {data: gz(tarOf(t, []entry{{name: "manifest.json", body: []byte("{}"), size: maxManifestBytes + 1}})), want: "manifest.json is"},
		"control in name":   {data: gz(tarOf(t, []entry{mf, {name: "b.lsb/raw/a\x01b", body: []byte("x")}})), want: "not a bundle file"},
		"backslash in name": {data: gz(tarOf(t, []entry{mf, {name: `b.lsb\..\x`, body: []byte("x")}})), want: "bad entry name"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			parent := t.TempDir()
			dst := filepath.Join(parent, "x.lsb")
			m, err := Unpack(bytes.NewReader(c.data), dst, c.lim)
			if err == nil {
				t.Fatalf("accepted: %+v", m)
			}
			if !errors.Is(err, ErrArchive) {
				t.Errorf("error %v does not wrap ErrArchive", err)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q does not mention %q", err, c.want)
			}
			if entries, _ := os.ReadDir(parent); len(entries) != 0 {
				t.Errorf("left behind %v", entries)
			}
		})
	}
}

func manyRaw(n int) []entry {
	out := make([]entry, n)
	for i := range out {
		out[i] = entry{name: fmt.Sprintf("b.lsb/raw/f%d", i), body: []byte("x")}
	}
	return out
}

func TestUnpackRootlessAndExisting(t *testing.T) {
	src := makeBundle(t, t.TempDir())
	manifest, _ := os.ReadFile(filepath.Join(src, ManifestFile))
	goroutines, _ := os.ReadFile(filepath.Join(src, "goroutines.arrow"))
	data := zst(tarOf(t, []entry{{name: "./", typ: tar.TypeDir}, {name: "./manifest.json", body: manifest}, {name: "./goroutines.arrow", body: goroutines}}))
	dst := filepath.Join(t.TempDir(), "r.lsb")
	if _, err := Unpack(bytes.NewReader(data), dst, Limits{}); err != nil {
		t.Fatal(err)
	}
	if got := rowCounts(t, dst)[schema.TableGoroutines]; got != 50 {
		t.Errorf("goroutines rows %d, want 50", got)
	}
	if _, err := Unpack(bytes.NewReader(data), dst, Limits{}); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Errorf("unpacking over an existing bundle: %v", err)
	}
}

// FuzzUnpack checks that Unpack never panics, and that it either installs
// a bundle that opens or fails and leaves nothing behind.
func FuzzUnpack(f *testing.F) {
	src := makeBundle(f, f.TempDir())
	var a, b bytes.Buffer
	Pack(src, &a, FormatTarGzip)
	Pack(src, &b, FormatTarZstd)
	f.Add(a.Bytes())
	f.Add(b.Bytes())
	if *updateArchiveSeeds {
		writeSeed(f, "gz", a.Bytes())
		writeSeed(f, "zst", b.Bytes())
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		parent := t.TempDir()
		dst := filepath.Join(parent, "f.lsb")
		// Room is asked for as bytes are written, never more than a
		// step past them, from a budget that may run out.
		var reserved int64
		reserve := func(n int64) error {
			if reserved+n > 1<<20 {
				return errors.New("no room")
			}
			reserved += n
			return nil
		}
		_, err := Unpack(bytes.NewReader(data), dst, Limits{MaxBytes: 32 << 20, MaxFiles: 200, Reserve: reserve})
		if err == nil && reserved != DirSize(dst) {
			t.Fatalf("reserved %d bytes for a bundle of %d", reserved, DirSize(dst))
		}
		entries, _ := os.ReadDir(parent)
		if err != nil {
			if len(entries) != 0 {
				t.Fatalf("failed (%v) but left %v", err, entries)
			}
			return
		}
		if _, err := Open(dst); err != nil {
			t.Fatalf("installed a bundle that does not open: %v", err)
		}
	})
}

func writeSeed(t testing.TB, name string, data []byte) {
	dir := filepath.Join("testdata", "fuzz", "FuzzUnpack")
	os.MkdirAll(dir, 0o755)
	content := fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", data)
	if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
