package ingest

import (
	"bytes"
	"errors"
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
