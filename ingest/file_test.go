package ingest

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/leakscope/leakscope/ingest/bundle"
)

func writeFile(t *testing.T, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// snapshot records what a bundle holds: rows per table, artifacts, raw
// files.
func snapshot(t *testing.T, dir string) string {
	t.Helper()
	b, err := bundle.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	tables, err := b.Tables(memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := b.RawFiles()
	var sb strings.Builder
	for _, ti := range tables {
		sb.WriteString(ti.Name + "=" + strconv.FormatInt(ti.Rows, 10) + " ")
	}
	for _, a := range b.Manifest.Artifacts {
		sb.WriteString(a.Name + " ")
	}
	sb.WriteString(strings.Join(raw, ","))
	return sb.String()
}

func TestFileAllKinds(t *testing.T) {
	heap, dump, tr := realArtifacts(t)
	dir := filepath.Join(t.TempDir(), "all.lsb")
	want := map[string]string{"heap.pb.gz": "pprof", "dump.txt": "dump", "trace.out": "trace"}
	for name, data := range map[string][]byte{"heap.pb.gz": heap, "dump.txt": dump, "trace.out": tr} {
		a, err := File(dir, writeFile(t, name, data), Options{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if a.Kind != want[name] || a.Rows == 0 {
			t.Errorf("%s: kind %q rows %d", name, a.Kind, a.Rows)
		}
		raw, err := os.ReadFile(filepath.Join(dir, a.Name))
		if err != nil || string(raw) != string(data) {
			t.Errorf("%s: raw copy differs from the original (%v)", name, err)
		}
	}
	b, err := bundle.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Manifest.Artifacts) != 3 {
		t.Fatalf("manifest lists %d artifacts, want 3", len(b.Manifest.Artifacts))
	}
	for _, kind := range []string{bundle.SourcePprof, bundle.SourceDump, bundle.SourceTrace} {
		if !b.Manifest.HasSource(kind) {
			t.Errorf("manifest lacks source %s", kind)
		}
	}
}

func TestBadFileLeavesBundleUnchanged(t *testing.T) {
	heap, dump, tr := realArtifacts(t)
	dir := filepath.Join(t.TempDir(), "b.lsb")
	if _, err := File(dir, writeFile(t, "heap.pb.gz", heap), Options{}); err != nil {
		t.Fatal(err)
	}
	if _, err := File(dir, writeFile(t, "dump.txt", dump), Options{}); err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, dir)
	cases := map[string]struct {
		data []byte
		want string
	}{
		"empty.pb.gz": {nil, "empty file"},
		"cut.pb.gz":   {heap[:len(heap)*2/3], "gzip"},
		"garbage.bin": {[]byte("\x00\x01\x02 definitely not a profile"), "not a pprof profile"},
		"notes.txt":   {[]byte("meeting notes\n"), "not a pprof profile"},
		"badproto.pb": {[]byte{0x0a, 0x10, 0x08, 0x01}, "pprof"},
		"baddump.txt": {[]byte("goroutine 1 [running]:\nmain.main()\n\x01garbage{{{\n"), "goroutine 1 (line 1) ended at line 3"},
		// A real trace's header followed by garbage is corrupt, not cut
		// short (issue 13 item 9), plain or compressed.
		"garbage.trace":    {append(bytes.Clone(tr[:16]), "this is not an execution trace"...), "corrupt Go execution trace"},
		"garbage.trace.gz": {gz(append(bytes.Clone(tr[:16]), 0xff, 0x00, 0x13, 0x37)), "expected a batch"},
		"trailing.trace":   {append(bytes.Clone(tr), "\x00\x00junk"...), "corrupt Go execution trace"},
	}
	for name, c := range cases {
		path := writeFile(t, name, c.data)
		_, err := File(dir, path, Options{})
		if err == nil {
			t.Errorf("%s: accepted", name)
			continue
		}
		if !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %q should name the file and say %q", name, err, c.want)
		}
		if after := snapshot(t, dir); after != before {
			t.Errorf("%s: bundle changed:\n before %s\n after  %s", name, before, after)
		}
	}
	_, err := File(dir, writeFile(t, "x.bin", []byte("nope")), Options{})
	if !errors.Is(err, ErrUnknownKind) {
		t.Errorf("unknown kind error %v does not wrap ErrUnknownKind", err)
	}
	if _, err := File(filepath.Join(t.TempDir(), "missing-dir", "..", "y.lsb"), "/does/not/exist", Options{}); err == nil {
		t.Error("a missing file was accepted")
	}
}

// TestPlainTraceReadWhereItLies: a plain trace in a file is parsed where
// it lies (not streamed through memory) and copied under raw/ as it is
// parsed; the bundle holds what a streamed ingest of it holds, the raw
// copy and its SHA-256 are the file's from the reader's offset on,
// progress reaches the end, and ingesting it again is a duplicate.
func TestPlainTraceReadWhereItLies(t *testing.T) {
	_, _, tr := realArtifacts(t)
	streamed := filepath.Join(t.TempDir(), "streamed.lsb")
	if _, err := Reader(streamed, "trace.out", struct{ io.Reader }{bytes.NewReader(tr)}, bundle.Artifact{Size: int64(len(tr))}, Options{}); err != nil {
		t.Fatal(err)
	}
	path := writeFile(t, "trace.out", append([]byte("skip!"), tr...))
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Seek(5, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	var read int64
	dir := filepath.Join(t.TempDir(), "whole.lsb")
	a, err := Reader(dir, "trace.out", f, bundle.Artifact{Size: int64(len(tr))}, Options{Progress: func(n, _ int64) { read = n }})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := snapshot(t, dir), snapshot(t, streamed); got != want {
		t.Errorf("read where it lies: %s\nstreamed: %s", got, want)
	}
	raw, err := os.ReadFile(filepath.Join(dir, a.Name))
	if err != nil || !bytes.Equal(raw, tr) {
		t.Errorf("raw copy differs from the trace (%v)", err)
	}
	if sum := sha256.Sum256(tr); a.SHA256 != hex.EncodeToString(sum[:]) {
		t.Errorf("sha256 %s, want the trace's", a.SHA256)
	}
	if read != int64(len(tr)) {
		t.Errorf("progress reached %d of %d bytes", read, len(tr))
	}
	if _, err := File(dir, writeFile(t, "again.out", tr), Options{}); !errors.Is(err, ErrDuplicate) {
		t.Errorf("the same trace again: %v, want ErrDuplicate", err)
	}
}
