package ingest

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/klauspost/compress/zstd"
	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/ingest/gotrace"
	"github.com/leakscope/leakscope/ingest/schema"
)

func zst(b []byte) []byte {
	var out bytes.Buffer
	zw, _ := zstd.NewWriter(&out)
	zw.Write(b)
	zw.Close()
	return out.Bytes()
}

// TestCompressed ingests a real dump, trace and heap profile gzipped and
// zstd-compressed: each reads as its plain form does, and raw/ keeps the
// compressed original byte for byte.
func TestCompressed(t *testing.T) {
	heap, dump, tr := realArtifacts(t)
	var plainHeap bytes.Buffer
	zr, _ := gzip.NewReader(bytes.NewReader(heap))
	plainHeap.ReadFrom(zr)
	for _, c := range []struct {
		name  string
		plain []byte
		kind  string
	}{{"dump.txt", dump, "dump"}, {"trace.out", tr, "trace"}, {"heap.pb", plainHeap.Bytes(), "pprof"}} {
		dir := filepath.Join(t.TempDir(), "c.lsb")
		want, err := File(dir, writeFile(t, c.name, c.plain), Options{})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		for ext, data := range map[string][]byte{".gz": gz(c.plain), ".zst": zst(c.plain)} {
			a, err := File(dir, writeFile(t, c.name+ext, data), Options{})
			if err != nil {
				t.Errorf("%s%s: %v", c.name, ext, err)
				continue
			}
			if a.Kind != c.kind || a.Rows != want.Rows || a.Status != want.Status {
				t.Errorf("%s%s: kind %s, %d rows, %s; plain: %s, %d rows, %s", c.name, ext, a.Kind, a.Rows, a.Status, want.Kind, want.Rows, want.Status)
			}
			if raw, _ := os.ReadFile(filepath.Join(dir, a.Name)); !bytes.Equal(raw, data) {
				t.Errorf("%s%s: raw copy differs from the original (%d of %d bytes)", c.name, ext, len(raw), len(data))
			}
		}
		if c.kind == "trace" {
			checkCompressedTransitions(t, dir)
		}
	}
}

// checkCompressedTransitions: the bundle holds one trace three times,
// plain, gzipped and zstd-compressed; decoded on demand, every goroutine
// changes state as often in each.
func checkCompressedTransitions(t *testing.T, dir string) {
	t.Helper()
	b, err := bundle.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	var goids []int64
	err = b.ReadTable(schema.TableTraceGoroutines, memory.DefaultAllocator, func(rec arrow.Record) error {
		ids := rec.Column(0).(*array.Int64)
		for i := 0; i < ids.Len(); i++ {
			goids = append(goids, ids.Value(i))
		}
		return nil
	})
	if err != nil || len(goids) == 0 {
		t.Fatalf("trace goroutines: %d, %v", len(goids), err)
	}
	trs, err := Transitions(b, goids, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	per := map[int64]int{}
	for _, tr := range trs {
		per[tr.Goid]++
	}
	// Three windows of the same trace: each goroutine's count divides by 3.
	for g, n := range per {
		if n%3 != 0 {
			t.Errorf("goroutine %d: %d transitions over three copies of one trace", g, n)
		}
	}
	if len(per) == 0 {
		t.Error("no transitions decoded")
	}
	if _, err := gotrace.TransitionsFrom(b, nil, goids, 0, 0); err == nil || !strings.Contains(err.Error(), "compressed") {
		t.Errorf("without a decompressor: %v, want it to say the trace is compressed", err)
	}
}

// TestDecompressionBomb ingests a zstd file that expands far past the
// limit: it is refused as too large while streaming, and the bundle is
// unchanged.
func TestDecompressionBomb(t *testing.T) {
	_, dump, _ := realArtifacts(t)
	dir := filepath.Join(t.TempDir(), "b.lsb")
	if _, err := File(dir, writeFile(t, "dump.txt", dump), Options{}); err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, dir)
	big := bytes.Repeat(dump, (64<<20)/len(dump)+1) // 64 MiB of dumps
	bomb := zst(big)
	if len(bomb)*50 > len(big) {
		t.Fatalf("bomb of %d bytes for %d: not much of a bomb", len(bomb), len(big))
	}
	_, err := File(dir, writeFile(t, "bomb.txt.zst", bomb), Options{MaxDecompressed: 8 << 20})
	if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "bomb.txt.zst") {
		t.Fatalf("bomb: %v, want a too-large error naming the file", err)
	}
	if after := snapshot(t, dir); after != before {
		t.Errorf("bundle changed:\n before %s\n after  %s", before, after)
	}
}

// TestTracebackDeepInLog ingests an application log of more than 64 KiB
// with a real goroutine dump after it: detection does not stop at the
// first bytes, and every goroutine is read.
func TestTracebackDeepInLog(t *testing.T) {
	var log bytes.Buffer
	for i := 0; log.Len() < 100<<10; i++ {
		fmt.Fprintf(&log, "2026-12-01T08:00:%02dZ INFO controller: reconciled default/item-%d in %dms\n", i%60, i, i%17)
	}
	var d bytes.Buffer
	pprof.Lookup("goroutine").WriteTo(&d, 2)
	want := bytes.Count(d.Bytes(), []byte("\ngoroutine ")) + 1
	data := append(log.Bytes(), d.Bytes()...)
	if Detect(data[:sniffLen]) != KindLog {
		t.Fatalf("the log's first 64 KiB detected as %q", Detect(data[:sniffLen]))
	}
	dir := filepath.Join(t.TempDir(), "l.lsb")
	for _, name := range []string{"app.log", "app.log.gz"} {
		in := data
		if strings.HasSuffix(name, ".gz") {
			in = gz(data)
		}
		a, err := File(dir, writeFile(t, name, in), Options{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if a.Kind != "dump" || a.Rows < int64(want)-2 || a.Rows > int64(want) {
			t.Errorf("%s: %s with %d rows, the dump has %d goroutines", name, a.Kind, a.Rows, want)
		}
	}
	_, err := File(dir, writeFile(t, "plain.log", log.Bytes()), Options{})
	if !errors.Is(err, ErrUnknownKind) || !strings.Contains(err.Error(), "none of its") {
		t.Errorf("a log without a traceback: %v", err)
	}
}

// TestUnknownFormats checks that a refusal names what the file is.
func TestUnknownFormats(t *testing.T) {
	for data, want := range map[string]string{
		"PK\x03\x04rest":         "zip archive",
		"\xfd7zXZ\x00\x00":       "xz-compressed",
		"\x7fELF\x02\x01\x01":    "ELF",
		"\x00\x01\x02\x03binary": "binary data starting 00 01 02 03",
		"--- heapz 1 ---\nformat = java\nresolution = bytes\n": "Java",
	} {
		_, err := File(filepath.Join(t.TempDir(), "u.lsb"), writeFile(t, "x", []byte(data)), Options{})
		if !errors.Is(err, ErrUnknownKind) || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want it named %q", data, err, want)
		}
	}
}

// TestLegacyProfilesDetected ingests files in the legacy forms pprof reads
// (google/pprof's own test profiles, from the module cache): detection
// takes Go's old binary CPU profiles and contention and threadz text as
// profiles, and refuses Java's naming them.
func TestLegacyProfilesDetected(t *testing.T) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/google/pprof").Output()
	if err != nil {
		t.Fatal(err)
	}
	td := filepath.Join(strings.TrimSpace(string(out)), "profile", "testdata")
	dir := filepath.Join(t.TempDir(), "legacy.lsb")
	for _, name := range []string{"go.crc32.cpu", "gobench.cpu", "cppbench.contention", "cppbench.thread", "gobench.heap"} {
		a, err := File(dir, filepath.Join(td, name), Options{})
		if err != nil || a.Kind != "pprof" || a.Rows == 0 {
			t.Errorf("%s: %v (%+v)", name, err, a)
		}
	}
	for _, name := range []string{"java.cpu", "java.heap", "java.contention"} {
		if _, err := File(dir, filepath.Join(td, name), Options{}); !errors.Is(err, ErrUnknownKind) || !strings.Contains(err.Error(), "Java") {
			t.Errorf("%s: %v, want it refused as Java", name, err)
		}
	}
}

// TestCompressedCut ingests compressed files cut short: a dump and a log
// keep their complete part and are marked truncated, saying the stream
// ends early; a profile, which must be whole, is refused.
func TestCompressedCut(t *testing.T) {
	heap, dump, _ := realArtifacts(t)
	dir := filepath.Join(t.TempDir(), "cut.lsb")
	// zstd decodes whole blocks (up to 128 KiB of content): give it a
	// dump followed by a megabyte of log that does not compress away.
	big := bytes.NewBuffer(append([]byte(nil), dump...))
	for i := 0; big.Len() < 1<<20; i++ {
		fmt.Fprintf(big, "I1201 08:00:00 request %d id=%x\n", i, sha256.Sum256([]byte{byte(i), byte(i >> 8), byte(i >> 16)}))
	}
	for name, data := range map[string][]byte{"dump.txt.gz": gz(dump), "log.txt.zst": zst(big.Bytes())} {
		cut := data[:len(data)*3/4]
		a, err := File(dir, writeFile(t, name, cut), Options{})
		if err != nil {
			t.Errorf("%s cut short: %v", name, err)
			continue
		}
		if a.Status != "truncated" || !strings.Contains(a.Detail, "stream ends early") || a.Rows == 0 {
			t.Errorf("%s cut short: %s, %d rows, %q", name, a.Status, a.Rows, a.Detail)
		}
	}
	if _, err := File(dir, writeFile(t, "heap.pb.gz", heap[:len(heap)*3/4]), Options{}); err == nil || !strings.Contains(err.Error(), "gzip") {
		t.Errorf("a cut profile: %v", err)
	}
}

// FuzzFile feeds arbitrary bytes to ingest as a file: it must never
// panic, and a refused file must leave no bundle behind (ingest created
// it) while an accepted one leaves a bundle that validates.
func FuzzFile(f *testing.F) {
	heap, dump, tr := realArtifacts(f)
	for _, seed := range [][]byte{heap, dump[:min(len(dump), 4096)], tr[:min(len(tr), 4096)], gz(dump[:min(len(dump), 2048)]), zst([]byte("goroutine 1 [running]:\nmain.main()\n\t/x.go:1 +0x1\n")),
		[]byte("2026-12-01T08:00:00Z stderr F goroutine 1 [running]:\n2026-12-01T08:00:00Z stderr F main.main()\n2026-12-01T08:00:00Z stderr F \t/x.go:1 +0x1\n"),
		[]byte("==================\nWARNING: DATA RACE\nRead at 0x01 by goroutine 7:\n  main.f()\n      /x.go:1 +0x1\n==================\n"),
		[]byte("--- mutex:\ncycles/second=1\nsampling period=1\n1 1 @ 0x2\n#\t0x1\tmain.f+0x1\t/x.go:3\n")} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		parent := t.TempDir()
		dir := filepath.Join(parent, "f.lsb")
		path := filepath.Join(parent, "input")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := File(dir, path, Options{MaxDecompressed: 16 << 20})
		if err != nil {
			if _, serr := os.Stat(dir); serr == nil {
				t.Fatalf("refused (%v) but left a bundle", err)
			}
			return
		}
		if _, err := bundle.Validate(dir); err != nil {
			t.Fatalf("accepted, but the bundle does not validate: %v", err)
		}
	})
}
