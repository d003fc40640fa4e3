package profiles

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/google/pprof/profile"
	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/ingest/schema"
)

var (
	genOnce sync.Once
	genDir  string
	genErr  error
)

// realProfiles runs testdata/profgen, a real Go program, and returns the
// directory holding the profiles it wrote.
func realProfiles(t *testing.T) string {
	t.Helper()
	genOnce.Do(func() {
		genDir, genErr = os.MkdirTemp("", "leakscope-profgen")
		if genErr != nil {
			return
		}
		exe := filepath.Join(genDir, "profgen")
		build := exec.Command("go", "build", "-o", exe, "./testdata/profgen")
		build.Env = append(os.Environ(), "GOEXPERIMENT=goroutineleakprofile")
		if out, err := build.CombinedOutput(); err != nil {
			genErr = &exec.ExitError{Stderr: out}
			return
		}
		if out, err := exec.Command(exe, genDir).CombinedOutput(); err != nil {
			genErr = &exec.ExitError{Stderr: out}
		}
	})
	if genErr != nil {
		t.Fatalf("generate profiles: %v", genErr)
	}
	return genDir
}

func newBundle(t *testing.T, mem memory.Allocator) *bundle.Writer {
	t.Helper()
	w, err := bundle.Create(filepath.Join(t.TempDir(), "b.lsb"), bundle.NewManifest("test", "test"), mem)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// sums adds up every value column of the samples table per profile.
func sums(t *testing.T, dir string, mem memory.Allocator) map[string]map[string]int64 {
	t.Helper()
	b, err := bundle.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]int64{}
	err = b.ReadTable(schema.TableSamples, mem, func(rec arrow.Record) error {
		prof := bundle.NewStrings(rec.Column(1))
		for k, col := range schema.ValueColumns {
			vals := rec.Column(3 + k).(*array.Int64)
			for i := 0; i < vals.Len(); i++ {
				if vals.IsNull(i) {
					continue
				}
				m := out[prof.Value(i)]
				if m == nil {
					m = map[string]int64{}
					out[prof.Value(i)] = m
				}
				m[col] += vals.Value(i)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestIngestMatchesProfileParse(t *testing.T) {
	dir := realProfiles(t)
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	w := newBundle(t, mem)
	want := map[string]map[string]int64{}
	files := []string{"goroutine", "heap", "allocs", "cpu", "block", "mutex", "threadcreate", "goroutineleak"}
	for _, name := range files {
		path := filepath.Join(dir, name+".pb.gz")
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		a := &bundle.Artifact{Name: "raw/" + name, Time: time.Now()}
		err = Ingest(w, f, a)
		f.Close()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if a.Profile != name {
			t.Errorf("%s: recognised as %q", name, a.Profile)
		}
		p := parseFile(t, path)
		if a.Rows != int64(len(p.Sample)) {
			t.Errorf("%s: %d rows, profile has %d samples", name, a.Rows, len(p.Sample))
		}
		cols, err := valueColumns(p, name)
		if err != nil {
			t.Fatal(err)
		}
		want[name] = map[string]int64{}
		for _, s := range p.Sample {
			for i, c := range cols {
				want[name][c] += s.Value[i]
			}
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	got := sums(t, w.Dir(), mem)
	for _, name := range files {
		for col, v := range want[name] {
			if got[name][col] != v {
				t.Errorf("%s %s: samples table sums to %d, profile.Parse to %d", name, col, got[name][col], v)
			}
		}
	}
	if want["goroutineleak"]["count"] < 10 {
		t.Errorf("goroutineleak profile counts %d leaked goroutines, the program leaked 10", want["goroutineleak"]["count"])
	}
	if want["goroutine"]["count"] < 35 {
		t.Errorf("goroutine profile counts %d goroutines, the program parked at least 35", want["goroutine"]["count"])
	}
}

func parseFile(t *testing.T, path string) *profile.Profile {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p, err := profile.Parse(f)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestSharedDictionaryAndUngzipped(t *testing.T) {
	dir := realProfiles(t)
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	w := newBundle(t, mem)
	gz, _ := os.ReadFile(filepath.Join(dir, "heap.pb.gz"))
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		t.Fatal(err)
	}
	var plain bytes.Buffer
	plain.ReadFrom(zr)
	for i, data := range [][]byte{gz, plain.Bytes()} {
		a := &bundle.Artifact{Name: "heap", Time: time.Unix(int64(1000+i), 0)}
		if err := Ingest(w, bytes.NewReader(data), a); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	b, _ := bundle.Open(w.Dir())
	var stacks int
	b.Stacks(mem, func(schema.Stack) { stacks++ })
	p := parseFile(t, filepath.Join(dir, "heap.pb.gz"))
	distinct := map[string]bool{}
	for _, s := range p.Sample {
		var key []string
		for _, l := range s.Location {
			for _, ln := range l.Line {
				key = append(key, fmt.Sprintf("%s:%s:%d", ln.Function.Name, ln.Function.Filename, ln.Line))
			}
		}
		distinct[strings.Join(key, ";")] = true
	}
	if stacks != len(distinct) {
		t.Errorf("two copies of one profile made %d stacks, want %d (one per distinct stack)", stacks, len(distinct))
	}
	got := sums(t, w.Dir(), mem)
	var want int64
	for _, s := range p.Sample {
		want += s.Value[3]
	}
	if got["heap"]["inuse_space"] != 2*want {
		t.Errorf("inuse_space %d, want %d", got["heap"]["inuse_space"], 2*want)
	}
}

func TestLegacyTextProfile(t *testing.T) {
	dir := realProfiles(t)
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	w := newBundle(t, mem)
	f, _ := os.Open(filepath.Join(dir, "heap.txt"))
	defer f.Close()
	a := &bundle.Artifact{Name: "heap.txt", Time: time.Now()}
	if err := Ingest(w, f, a); err != nil {
		t.Fatal(err)
	}
	w.Close()
	if a.Rows == 0 {
		t.Error("legacy heap profile gave no rows")
	}
}

func TestBadProfiles(t *testing.T) {
	dir := realProfiles(t)
	good, _ := os.ReadFile(filepath.Join(dir, "heap.pb.gz"))
	cases := map[string]struct {
		data []byte
		want string
	}{
		"empty":           {nil, "empty file"},
		"truncated gzip":  {good[:len(good)/2], "truncated gzip"},
		"gzip header":     {[]byte("\x1f\x8b"), "gzip"},
		"not a profile":   {[]byte("hello, this is not a profile\n"), "not a valid pprof profile"},
		"protobuf no prf": {[]byte{0x0a, 0x02, 0x08, 0x01, 0xff, 0xff}, "pprof"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
			defer mem.AssertSize(t, 0)
			w := newBundle(t, mem)
			defer w.Close()
			err := Ingest(w, bytes.NewReader(c.data), &bundle.Artifact{Name: name})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want one mentioning %q", err, c.want)
			}
		})
	}
}
