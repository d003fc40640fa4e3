package gotrace

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v15/arrow/memory"
	"golang.org/x/exp/trace"
)

// batches splits a trace into its batches (header first), as the
// framer sees them.
func batches(t *testing.T, data []byte) [][]byte {
	t.Helper()
	out := [][]byte{data[:headerLen]}
	for pos := headerLen; pos < len(data); {
		start := pos
		if data[pos] == evEndOfGeneration {
			out = append(out, data[pos:pos+1])
			pos++
			continue
		}
		pos++
		var size uint64
		for i := 0; i < 4; i++ {
			v, n := binary.Uvarint(data[pos:])
			if n <= 0 {
				t.Fatalf("bad batch header at %d", start)
			}
			size = v
			pos += n
		}
		pos += int(size)
		out = append(out, data[start:pos])
	}
	return out
}

func eventBatch(gen, m, ts, size uint64) []byte {
	b := []byte{evEventBatch}
	for _, v := range []uint64{gen, m, ts, size} {
		b = binary.AppendUvarint(b, v)
	}
	return b
}

func TestCorrupt(t *testing.T) {
	rec := record(t)
	full, err := os.ReadFile(rec.window1)
	if err != nil {
		t.Fatal(err)
	}
	bs := batches(t, full)
	head := bs[0]
	join := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	// The first event batch of the second generation, and its index.
	var gen2 int
	for i, b := range bs[1:] {
		if b[0] == evEventBatch {
			if g, _ := binary.Uvarint(b[1:]); g == 2 && gen2 == 0 {
				gen2 = i + 1
			}
		}
	}
	if gen2 == 0 {
		t.Fatal("no second generation")
	}
	badEvent := bytes.Clone(full)
	{
		// Give the first event of a batch of the first generation an
		// event type that does not exist.
		off := headerLen
		for _, b := range bs[1:gen2] {
			if b[0] == evEventBatch && len(b) > 12 {
				h := b[1:]
				for i := 0; i < 4; i++ {
					_, n := binary.Uvarint(h)
					h = h[n:]
				}
				if len(h) > 0 && h[0] != evStrings && h[0] != evStacks && h[0] != evFrequency && h[0] != evSync {
					badEvent[off+len(b)-len(h)] = 0x7e
					break
				}
			}
			off += len(b)
		}
	}
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	for _, tc := range []struct {
		name, want string
		data       []byte
	}{
		{"header then garbage", "byte 16: expected a batch", join(head, []byte("this is not an execution trace at all"))},
		{"garbage after the trace", "expected a batch", join(full, []byte("\x00\x00trailing junk"))},
		{"huge batch", "the runtime writes at most", join(head, eventBatch(1, 1, 1, 1<<30), []byte("xx"))},
		{"generation 0", "generation 0", join(head, eventBatch(0, 1, 1, 2), []byte("xx"))},
		{"generations interleaved", "inside generation", join(join(bs[:gen2+1]...), bs[1], join(bs[gen2+1:]...))},
		{"generation skipped", "follows generation", join(join(bs[:gen2]...), skipGen(bs[gen2]), join(bs[gen2+1:]...))},
		{"bad event in a complete generation", "does not decode", badEvent},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, a, err := ingestBytes(t, mem, tc.data)
			if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want ErrCorrupt saying %q", err, tc.want)
			}
			if a.Status != "" {
				t.Errorf("status %q set for a refused trace", a.Status)
			}
			t.Log(err)
		})
	}
}

// skipGen rewrites an event batch header to claim the generation after
// its own.
func skipGen(b []byte) []byte {
	g, n := binary.Uvarint(b[1:])
	out := append([]byte{b[0]}, binary.AppendUvarint(nil, g+1)...)
	return append(out, b[1+n:]...)
}

// TestGoFuzzCorpus feeds the inputs of x/exp/trace's own fuzz corpus (the
// reader's crashers over the years): each must be refused with the
// reason, none accepted as "cut short", unless x/exp/trace itself reads it
// to the end without an error, and then it must be accepted.
func TestGoFuzzCorpus(t *testing.T) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "golang.org/x/exp").Output()
	if err != nil {
		t.Fatalf("locate golang.org/x/exp: %v", err)
	}
	dir := filepath.Join(strings.TrimSpace(string(out)), "trace", "testdata", "fuzz", "FuzzReader")
	entries, err := os.ReadDir(dir)
	if err != nil || len(entries) == 0 {
		t.Fatalf("fuzz corpus %s: %v", dir, err)
	}
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	for _, e := range entries {
		data := readFuzzInput(t, filepath.Join(dir, e.Name()))
		_, a, err := ingestBytes(t, mem, data)
		switch {
		case err == nil && bareReads(data):
			t.Logf("%s: read to the end by x/exp/trace too: accepted (%s, %d rows)", e.Name(), a.Status, a.Rows)
		case err == nil:
			t.Errorf("%s accepted (%s, %d rows)", e.Name(), a.Status, a.Rows)
		case bareReads(data):
			// closing-unknown-region: 71 bytes, one generation with no
			// string or stack table, which go tool trace reads.
			t.Errorf("%s: read to the end by x/exp/trace, refused: %v", e.Name(), err)
		case errors.Is(err, ErrCorrupt), errors.Is(err, ErrIncomplete), errors.Is(err, ErrUnsupported), errors.Is(err, ErrNotTrace):
			t.Logf("%s: %v", e.Name(), err)
		default:
			t.Errorf("%s: unexpected error %v", e.Name(), err)
		}
	}
}

// readFuzzInput reads a "go test fuzz v1" file holding one []byte.
func readFuzzInput(t *testing.T, path string) []byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if s, ok := strings.CutPrefix(line, "[]byte("); ok {
			v, err := strconv.Unquote(strings.TrimSuffix(s, ")"))
			if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			return []byte(v)
		}
	}
	t.Fatalf("%s: no []byte value", path)
	return nil
}

// bareReads reports whether x/exp/trace reads data to its end.
func bareReads(data []byte) bool {
	r, err := trace.NewReader(bytes.NewReader(data))
	if err != nil {
		return false
	}
	for {
		if _, err := r.ReadEvent(); err != nil {
			return err == io.EOF
		}
	}
}
