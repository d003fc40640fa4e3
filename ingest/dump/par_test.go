package dump

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/leakscope/leakscope/dev/dumpgen"
	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/ingest/schema"
)

// readerResult is everything a Reader tells of an input.
type readerResult struct {
	gs                        []*Goroutine
	err                       error
	lines, skipped, raceCount int
	bytes                     int64
	truncated                 bool
	detail, notes, fatal      string
	races                     []Race
	merged                    int // chunks the workers' parse was taken of
}

func readWith(data []byte, o readOptions) readerResult {
	return readFrom(bytes.NewReader(data), o)
}

func readFrom(r io.Reader, o readOptions) readerResult {
	rd := newReader(r, o)
	defer rd.stop()
	var res readerResult
	for {
		g, err := rd.Next()
		if err != nil {
			if err != io.EOF {
				res.err = err
			}
			break
		}
		res.gs = append(res.gs, g.Clone())
	}
	res.lines, res.skipped, res.raceCount, res.bytes = rd.Lines(), rd.SkippedLines(), rd.RaceCount(), rd.Bytes()
	res.truncated, res.detail, res.notes, res.fatal, res.races = rd.Truncated(), rd.TruncationDetail(), rd.Notes(), rd.Fatal(), rd.Races()
	if rd.par != nil {
		res.merged = rd.par.merged
	}
	return res
}

// sameAsSequential checks that reading data with o gives what the
// sequential reader gives, and returns how many chunks the workers'
// parse was taken of.
func sameAsSequential(t *testing.T, name string, data []byte, o readOptions) int {
	t.Helper()
	want := readWith(data, readOptions{})
	got := readWith(data, o)
	merged := got.merged
	got.merged = 0
	if fmt.Sprint(got.err) != fmt.Sprint(want.err) {
		t.Fatalf("%s %+v: error %v, want %v", name, o, got.err, want.err)
	}
	got.err, want.err = nil, nil
	if len(got.gs) != len(want.gs) {
		t.Fatalf("%s %+v: %d goroutines, want %d", name, o, len(got.gs), len(want.gs))
	}
	for i := range want.gs {
		if !reflect.DeepEqual(got.gs[i], want.gs[i]) {
			t.Fatalf("%s %+v: goroutine %d:\n%+v\nwant\n%+v", name, o, i, got.gs[i], want.gs[i])
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s %+v: reader says\n%+v\nwant\n%+v", name, o, got, want)
	}
	return merged
}

// parOptions are read options that cut inputs into many small chunks.
func parOptions() []readOptions {
	return []readOptions{
		{workers: 2, chunk: 1, maxCarry: 1},
		{workers: 2, chunk: 64, maxCarry: 256},
		{workers: 3, chunk: 300, maxCarry: 1 << 20},
		{workers: 2, chunk: 4096, maxCarry: 8192},
	}
}

// TestParallelSameAsSequential reads every test input with parser workers
// and small chunks and compares all the reader says with the sequential
// reader.
func TestParallelSameAsSequential(t *testing.T) {
	files, err := filepath.Glob("testdata/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatal(files, err)
	}
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		merged := 0
		for _, o := range parOptions() {
			merged += sameAsSequential(t, name, data, o)
		}
		if merged == 0 && len(data) > 1024 {
			t.Errorf("%s: no chunk was parsed by the workers", name)
		}
	}
}

// TestParallelRealInputs compares the parallel and sequential readers on
// real crash output: a panic after 100 KiB of log, as CRI, Docker and
// kubectl --timestamps store it, stdout interleaved, and SIGQUIT at
// GOTRACEBACK=crash (register dumps, goroutine 0 blocks).
func TestParallelRealInputs(t *testing.T) {
	out := logPanic(t)
	stdout := bytes.Repeat([]byte(`{"level":"info","msg":"request served","path":"/healthz"}`+"\n"), 400)
	var stamped bytes.Buffer
	for _, line := range strings.SplitAfter(string(out), "\n") {
		if line != "" {
			stamped.WriteString("2026-12-01T08:00:00.123456789Z " + line)
		}
	}
	crash := sigquitAt(t, "crash")
	inputs := map[string][]byte{
		"log then panic":  out,
		"cri":             cri(out, "stderr", 100),
		"cri interleaved": interleave(cri(out, "stderr", 16<<10), cri(stdout, "stdout", 16<<10)),
		"docker":          docker(out, "stderr"),
		"timestamps":      stamped.Bytes(),
		"crash":           crash,
		"crash indented":  indent(crash, "    "),
		"crash cut":       crash[:len(crash)*2/3],
	}
	for name, data := range inputs {
		merged := 0
		for _, o := range append(parOptions(), readOptions{workers: 2, chunk: 16 << 10, maxCarry: 32 << 10}) {
			merged += sameAsSequential(t, name, data, o)
		}
		if merged == 0 && (name == "log then panic" || name == "crash") {
			t.Errorf("%s: no chunk was parsed by the workers", name)
		}
	}
}

func indent(data []byte, by string) []byte {
	return []byte(by + strings.ReplaceAll(strings.TrimSuffix(string(data), "\n"), "\n", "\n"+by) + "\n")
}

// synthetic returns a generated SIGQUIT traceback of n goroutines.
func synthetic(t *testing.T, n int) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := dumpgen.Synthesize(&b, n); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestParallelLarge compares the parallel and sequential readers on a
// generated traceback of 20,000 goroutines, cut into chunks of several
// sizes.
func TestParallelLarge(t *testing.T) {
	data := synthetic(t, 20_000)
	for _, o := range []readOptions{ingestOptions(), {workers: 2, chunk: 64 << 10, maxCarry: 128 << 10}, {workers: 4, chunk: 2000, maxCarry: 4000}} {
		o.workers = max(o.workers, 2)
		if merged := sameAsSequential(t, "synthetic", data, o); merged == 0 {
			t.Errorf("%+v: no chunk was parsed by the workers", o)
		}
	}
}

// ingestTables ingests data with options o and returns what the bundle
// holds.
func ingestTables(t *testing.T, data []byte, o readOptions, mem memory.Allocator) ingested {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "b.lsb")
	w, err := bundle.Create(dir, bundle.NewManifest("test", "test"), mem)
	if err != nil {
		t.Fatal(err)
	}
	a := &bundle.Artifact{Name: "raw/crash.txt", Time: time.Unix(100, 0)}
	ierr := ingest(w, bytes.NewReader(data), a, o)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	var res ingested
	res.a, res.err = *a, fmt.Sprint(ierr)
	if ierr == nil {
		res.rows, res.frames, res.stacks = readRows(t, dir, mem)
	}
	return res
}

type ingested struct {
	a      bundle.Artifact
	err    string
	rows   []schema.Goroutine
	frames map[int64]schema.Frame
	stacks map[int64][]int64
}

// TestParallelIngestTables checks that Ingest writes the same tables
// (rows, stack and frame ids) and artifact with parser workers as without,
// for the generated traceback and every test input.
func TestParallelIngestTables(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	inputs := map[string][]byte{"synthetic": synthetic(t, 20_000)}
	files, _ := filepath.Glob("testdata/*.txt")
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		inputs[name] = data
	}
	for name, data := range inputs {
		want := ingestTables(t, data, readOptions{}, mem)
		for _, o := range []readOptions{{workers: 2, chunk: 4096, maxCarry: 8192}, {workers: 3, chunk: 100, maxCarry: 1 << 20}} {
			got := ingestTables(t, data, o, mem)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s %+v: ingest gave artifact %+v, error %s, %d rows, want %+v, %s, %d rows", name, o, got.a, got.err, len(got.rows), want.a, want.err, len(want.rows))
			}
		}
	}
}

// FuzzParallel checks that the parallel reader, cutting the input into
// chunks of a size taken from the input, says exactly what the sequential
// reader says.
func FuzzParallel(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.txt")
	for _, name := range files {
		if data, err := os.ReadFile(name); err == nil && len(data) < 64<<10 {
			f.Add(uint8(7), data)
		}
	}
	f.Add(uint8(0), []byte("goroutine 1 [running]:\nmain.main()\n\t/x.go:1 +0x1\n\ngoroutine 2 [chan send]:\nmain.f()\n\t/x.go:2 +0x1\n"))
	f.Add(uint8(3), []byte("==================\nWARNING: DATA RACE\nWrite at 0x00c0000881d8 by goroutine 9:\n  main.f()\n      /x.go:26 +0x33\n\ngoroutine 3 [running]:\nmain.f()\n\t/x.go:1 +0x1\n\nPrevious read at 0x00c0000881d8 by main goroutine:\n  main.main()\n      /x.go:27 +0x104\n==================\n"))
	f.Add(uint8(5), []byte("2026-12-01T08:00:00.1Z stderr P goroutine 7 [chan \n\ngoroutine 8 [running]:\n2026-12-01T08:00:00.2Z stderr F send]:\nmain.f()\n\t/x.go:1 +0x1\n"))
	f.Fuzz(func(t *testing.T, size uint8, data []byte) {
		c := int(size%64) + 1
		sameAsSequential(t, "fuzz", data, readOptions{workers: 2 + int(size/64)%2, chunk: c, maxCarry: c + int(size/128)*c})
	})
}

// failingReader returns its data a few bytes at a time, then err.
type failingReader struct {
	data []byte
	err  error
}

func (r *failingReader) Read(b []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, r.err
	}
	n := copy(b[:min(len(b), 1000)], r.data)
	r.data = r.data[n:]
	return n, nil
}

// TestParallelReadError checks that a read error ends the parallel reader
// where it ends the sequential one, with the same goroutines before it.
func TestParallelReadError(t *testing.T) {
	data := synthetic(t, 2000)
	fail := errors.New("disk on fire")
	for _, at := range []int{0, 10, len(data) / 3, len(data) - 1} {
		want := readFrom(&failingReader{data[:at], fail}, readOptions{})
		got := readFrom(&failingReader{data[:at], fail}, readOptions{workers: 2, chunk: 5000, maxCarry: 10000})
		if !errors.Is(got.err, fail) || fmt.Sprint(got.err) != fmt.Sprint(want.err) || len(got.gs) != len(want.gs) || got.lines != want.lines || got.bytes != want.bytes {
			t.Errorf("error at byte %d: %v after %d goroutines, %d lines, %d bytes; want %v after %d, %d, %d",
				at, got.err, len(got.gs), got.lines, got.bytes, want.err, len(want.gs), want.lines, want.bytes)
		}
	}
}

// TestParallelLongLines compares the readers on input with lines longer
// than the read buffer and than the longest line kept, between blocks
// and inside one.
func TestParallelLongLines(t *testing.T) {
	data := synthetic(t, 300)
	blocks := bytes.SplitAfter(data, []byte("\n\n"))
	var b bytes.Buffer
	for i, blk := range blocks {
		b.Write(blk)
		switch i {
		case 50:
			b.WriteString(strings.Repeat("x", 300<<10) + "\n\n")
		case 100:
			b.WriteString(strings.Repeat("y", 3<<20) + "\n\n")
		case 150:
			b.WriteString("goroutine 99999 [running]:\nmain.f(" + strings.Repeat("0x1, ", 100<<10) + "0x2)\n\t/x.go:1 +0x1\n\n")
		}
	}
	for _, o := range []readOptions{ingestOptions(), {workers: 2, chunk: 4096, maxCarry: 8192}, {workers: 2, chunk: 64 << 10, maxCarry: 8 << 20}} {
		o.workers = max(o.workers, 2)
		sameAsSequential(t, "long lines", b.Bytes(), o)
	}
}

// TestParallelResumes checks that the workers' parse is taken again after
// a stretch the reader read itself: a long line, a race report and a
// block that the splitter's cut falls inside of, in the middle of a
// generated traceback.
func TestParallelResumes(t *testing.T) {
	data := synthetic(t, 20_000)
	mid := bytes.Index(data[len(data)/2:], []byte("\n\ngoroutine ")) + len(data)/2 + 2
	race := "==================\nWARNING: DATA RACE\nWrite at 0x00c0000881d8 by goroutine 9:\n  main.f()\n      /x.go:26 +0x33\n==================\n"
	var b bytes.Buffer
	b.Write(data[:mid])
	b.WriteString(strings.Repeat("x", 300<<10) + "\n\n" + race)
	b.Write(data[mid:])
	o := readOptions{workers: 2, chunk: 64 << 10, maxCarry: 128 << 10}
	chunks := b.Len() / o.chunk
	if merged := sameAsSequential(t, "resumes", b.Bytes(), o); merged < chunks*3/4 {
		t.Errorf("the workers' parse was taken of %d chunks of about %d", merged, chunks)
	}
}
