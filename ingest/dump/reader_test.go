package dump

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

// TestGolden parses every testdata/<case>.txt and compares a rendering of
// the goroutines with testdata/<case>.golden.
func TestGolden(t *testing.T) {
	inputs, err := filepath.Glob("testdata/*.txt")
	if err != nil || len(inputs) == 0 {
		t.Fatalf("no golden inputs: %v", err)
	}
	for _, in := range inputs {
		name := strings.TrimSuffix(filepath.Base(in), ".txt")
		t.Run(name, func(t *testing.T) {
			f, err := os.Open(in)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			got := render(f)
			golden := strings.TrimSuffix(in, ".txt") + ".golden"
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test ./ingest/dump -update)", err)
			}
			if got != string(want) {
				t.Errorf("%s: rendering differs from %s:\n%s", in, golden, diff(string(want), got))
			}
		})
	}
}

// diff shows the first differing line.
func diff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(w) || i < len(g); i++ {
		var a, b string
		if i < len(w) {
			a = w[i]
		}
		if i < len(g) {
			b = g[i]
		}
		if a != b {
			return "line " + strconv.Itoa(i+1) + ":\nwant: " + a + "\ngot:  " + b
		}
	}
	return "(equal)"
}

// readAll parses s and returns clones of its goroutines and the final error
// (nil at a clean end).
func readAll(s string) (*Reader, []*Goroutine, error) {
	rd := NewReader(strings.NewReader(s))
	var gs []*Goroutine
	for {
		g, err := rd.Next()
		if err == io.EOF {
			return rd, gs, nil
		}
		if err != nil {
			return rd, gs, err
		}
		gs = append(gs, g.Clone())
	}
}

func TestSpecificFields(t *testing.T) {
	data, err := os.ReadFile("testdata/go126_extras.txt")
	if err != nil {
		t.Fatal(err)
	}
	_, gs, err := readAll(string(data))
	if err != nil {
		t.Fatal(err)
	}
	if len(gs) != 5 {
		t.Fatalf("got %d goroutines, want 5", len(gs))
	}
	g := gs[3]
	if g.ID != 23 || g.State != "select" || !g.LockedToThread || g.Labels != `handler=items,request=GET /x, "y"]:` || g.Ancestors != 1 || len(g.Frames) != 3 {
		t.Errorf("goroutine 23 parsed as %+v", g)
	}
	if gs[1].State != "chan receive (durable)" || gs[1].Bubble != 3 || gs[1].CreatorGoid != 20 {
		t.Errorf("goroutine 21 parsed as %+v", gs[1])
	}
	if gs[2].State != "chan send (leaked)" || gs[2].WaitMinutes != 14 {
		t.Errorf("goroutine 22 parsed as %+v", gs[2])
	}
	cgo := gs[4]
	if cgo.Frames[0].Function != "non-Go function" || cgo.Frames[4].File != "C:/Users/dev/My App/cgo.go" || cgo.Frames[4].Line != 14 {
		t.Errorf("goroutine 24 frames %+v", cgo.Frames)
	}
	// Argument text per frame, as printed; ancestors' frames keep none.
	for i, want := range [][]string{
		{""},
		{""},
		{"0x1f2c4e0a0060?"},
		{"{0x5d6a28?, 0x1f2c4e012000?}", "{0x5d69f0?, 0x6c6f60?}, {{0x1f2c4e00e0c0?, 0x0?, 0x0?}}, 0x5d4158", ""},
		{"", "", "0x4a1b20, 0xc000051f58", "0x3c", ""},
	} {
		var got []string
		for _, f := range gs[i].Frames {
			got = append(got, f.Args)
		}
		if !slices.Equal(got, want) {
			t.Errorf("goroutine %d frame args %q, want %q", gs[i].ID, got, want)
		}
	}
	if c := gs[3].Clone(); c.Frames[0].Args != gs[3].Frames[0].Args {
		t.Errorf("clone lost the frame args")
	}
}

func TestInlined(t *testing.T) {
	data, err := os.ReadFile("testdata/go121_debug2.txt")
	if err != nil {
		t.Fatal(err)
	}
	_, gs, err := readAll(string(data))
	if err != nil {
		t.Fatal(err)
	}
	var inl, not int
	for _, g := range gs {
		for _, f := range g.Frames {
			if f.Inlined {
				inl++
				if f.Function != "main.forever" {
					t.Errorf("%s marked inlined", f.Function)
				}
			} else {
				not++
			}
		}
	}
	if inl != 1 || not == 0 {
		t.Errorf("inlined %d, not %d", inl, not)
	}
}

func TestTruncated(t *testing.T) {
	data, err := os.ReadFile("testdata/truncated_tail.txt")
	if err != nil {
		t.Fatal(err)
	}
	rd, gs, err := readAll(string(data))
	if err != nil {
		t.Fatal(err)
	}
	if len(gs) != 4 || gs[3].ID != 101668 || !rd.Truncated() || !strings.Contains(rd.TruncationDetail(), "goroutine 101669") {
		t.Fatalf("%d goroutines, truncated=%v %q", len(gs), rd.Truncated(), rd.TruncationDetail())
	}
	// The same text with its last line complete but no frame location.
	cut := string(data[:strings.LastIndex(string(data), "\t")])
	rd, gs, err = readAll(cut)
	if err != nil || len(gs) != 4 || !rd.Truncated() {
		t.Fatalf("cut after function line: %d goroutines, truncated=%v, err %v", len(gs), rd.Truncated(), err)
	}
	// Cut right after a complete block: nothing is truncated.
	whole := string(data[:strings.Index(string(data), "\n\ngoroutine 101669")+1])
	rd, gs, err = readAll(whole)
	if err != nil || len(gs) != 4 || rd.Truncated() {
		t.Fatalf("whole blocks: %d goroutines, truncated=%v, err %v", len(gs), rd.Truncated(), err)
	}
}

// TestRuntimeCap checks that a dump of exactly 64 MiB is taken as cut off
// by the runtime even when its last line is complete.
func TestRuntimeCap(t *testing.T) {
	block := "goroutine 7 [chan send]:\nmain.leak(0x1)\n\t/src/leak.go:12 +0x2d\ncreated by main.run in goroutine 1\n\t/src/leak.go:8 +0x6a\n\n"
	n := RuntimeCap/len(block) - 1
	head := strings.Repeat(block, n) + "goroutine 8 [chan send]:\n"
	// Fill the last block with frames up to exactly the cap; its last
	// line is complete.
	frame := "main.f()\n\t/x.go:1 +0x1\n"
	room := RuntimeCap - len(head)
	k := room/len(frame) - 1
	rest := room - k*len(frame) - len("g()\n\t") - len(":1\n")
	s := head + strings.Repeat(frame, k) + "g()\n\t" + strings.Repeat("a", rest) + ":1\n"
	if len(s) != RuntimeCap {
		t.Fatalf("could not build an input of exactly %d bytes (%d)", RuntimeCap, len(s))
	}
	rd, gs, err := readAll(s)
	if err != nil {
		t.Fatal(err)
	}
	if len(gs) != n || !rd.Truncated() || !strings.Contains(rd.TruncationDetail(), "64 MiB") {
		t.Fatalf("%d goroutines (want %d), truncated=%v %q", len(gs), n, rd.Truncated(), rd.TruncationDetail())
	}
}

func TestBadInput(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		contains string // in the error text
	}{
		{name: "empty", in: ""},
		{name: "binary", in: "\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff\x00\x01\xfe\n\x00goroutine"},
		{name: "log only", in: "panic: boom\n\nexit status 2\n"},
		{name: "header only", in: "goroutine 1 [running]:", contains: "cut off inside the header line of goroutine 1"},
		{name: "missing location", in: "goroutine 3 [select]:\nmain.f()\nmain.g()\n\t/x.go:1 +0x1\n", contains: `goroutine 3 (line 1) ended at line 3 by a line that is not the frame's file:line "main.g()"`},
		{name: "long line", in: "goroutine 3 [select]:\nmain.f(" + strings.Repeat("0x1, ", 300000) + ")\n\t/x.go:1\n", contains: "longer than 1 MiB"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, gs, err := readAll(tc.in)
			if err == nil {
				t.Fatalf("no error, %d goroutines", len(gs))
			}
			if !errors.Is(err, ErrNoGoroutines) {
				t.Errorf("error %v does not wrap ErrNoGoroutines", err)
			}
			if !strings.Contains(err.Error(), tc.contains) {
				t.Errorf("error %q does not contain %q", err, tc.contains)
			}
		})
	}
}

// TestInterrupted checks that a line of other output inside a goroutine
// block ends the block, keeps what it had and says so.
func TestInterrupted(t *testing.T) {
	in := "goroutine 1 [running]:\nmain.main()\n\t/x.go:3 +0x1\n\ngoroutine 17 [chan send]:\nmain.f()\n\t/x.go:9 +0x1\nfoo\nmain.g()\n\t/x.go:1 +0x1\n\n" +
		"goroutine 18 [select]:\nmain.h(0x1)\nlevel=info msg=interleaved\n\t/x.go:5 +0x1\n"
	rd, gs, err := readAll(in)
	if err != nil {
		t.Fatal(err)
	}
	if len(gs) != 2 || gs[1].ID != 17 || len(gs[1].Frames) != 1 {
		t.Fatalf("goroutines %+v", gs)
	}
	notes := rd.Notes()
	for _, want := range []string{"1 goroutine blocks ended", "goroutine 18 (line 12) ended at line 14", "2 stack lines found outside"} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes %q lack %q", notes, want)
		}
	}
}

// TestNoiseBetweenBlocks checks that log lines around and between blocks
// are skipped, CRLF line ends accepted and long noise lines tolerated.
func TestNoiseBetweenBlocks(t *testing.T) {
	in := "I0101 12:00:00 server.go:10] ready\r\n" + strings.Repeat("x", 3<<20) + "\r\n" +
		"goroutine 5 [chan send]:\r\nmain.f()\r\n\t/x.go:3 +0x1\r\ncreated by main.g in goroutine 1\r\n\t/x.go:9 +0x2\r\n" +
		"E0101 12:00:01 server.go:20] next\r\n" +
		"goroutine 6 [sleep, 2 minutes]:\r\ntime.Sleep(0x1)\r\n\t/go/time.go:1 +0x1\r\n\r\nbye\r\n"
	rd, gs, err := readAll(in)
	if err != nil {
		t.Fatal(err)
	}
	if len(gs) != 2 || gs[0].ID != 5 || gs[0].CreatedBy.File != "/x.go" || gs[1].WaitMinutes != 2 || rd.SkippedLines() != 4 {
		t.Fatalf("got %d goroutines, skipped %d: %+v", len(gs), rd.SkippedLines(), gs)
	}
}

func TestLooks(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want bool
	}{
		{"goroutine 1 [running]:\nmain.main()\n", true},
		{"log line\ngoroutine 18 gp=0xc000002380 m=nil [chan send, 5 minutes, locked to thread]:\n", true},
		{"SIGQUIT: quit\nPC=0x46b1a1 m=0 sigcode=0\n\ngorout", true},
		{"panic: boom\n\ngoroutine 1 [r", true},
		{"panic: boom\n", false},
		{"goroutine 1 [running]:", false},
		{"", false},
		{"\x1f\x8b\x08\x00", false},
		{"go 1.23 trace\x00\x00", false},
		{"package main\n\nfunc main() { panic(\"x\") }\n", false},
	} {
		if got := Looks([]byte(tc.in)); got != tc.want {
			t.Errorf("Looks(%q) = %v, want %v", tc.in, got, tc.want)
		}
	}
	for _, name := range []string{"go118_debug2.txt", "panic_go120.txt", "sigquit_crash.txt", "go126_real_sigquit.txt"} {
		data, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		if !Looks(data[:min(len(data), 512)]) {
			t.Errorf("Looks(%s) = false", name)
		}
	}
}

// TestCgoFrames reads frames the way a cgo symbolizer has the runtime
// print them (runtime.printOneCgoTraceback): a C function name without
// parentheses, "??" for one it could not name, and "file:line pc=0x..."
// or "?? :0" where the file is unknown.
func TestCgoFrames(t *testing.T) {
	in := "goroutine 1 gp=0xc000002380 m=0 mp=0x6a5f20 [syscall, locked to thread]:\n" +
		"runtime.cgocall(0x4a1c30, 0xc00006af40)\n\t/usr/local/go/src/runtime/cgocall.go:167 +0x4b fp=0xc00006af18 sp=0xc00006aee0 pc=0x40566b\n" +
		"??\n\t??:0 pc=0x7f5d3c0ad6b8\n" +
		"crash\n\t/src/crash.c:5 pc=0x4a1c3d\n" +
		"??()\n\t?? :0 +0x7f5d3c0ad6b8\n" +
		"main._Cfunc_crash()\n\t_cgo_gotypes.go:39 +0x3f fp=0xc00006af40 sp=0xc00006af18 pc=0x4a1b9f\n" +
		"main.main()\n\t/app/main.go:12 +0x17 fp=0xc00006af50 sp=0xc00006af40 pc=0x4a1bd7\n"
	rd, gs, err := readAll(in)
	if err != nil || len(gs) != 1 || rd.Truncated() {
		t.Fatalf("%d goroutines, err %v, truncated %v", len(gs), err, rd.Truncated())
	}
	var got []string
	for _, f := range gs[0].Frames {
		got = append(got, fmt.Sprintf("%s@%s:%d", f.Function, f.File, f.Line))
	}
	want := "runtime.cgocall@/usr/local/go/src/runtime/cgocall.go:167 ??@??:0 crash@/src/crash.c:5 ??@??:0 main._Cfunc_crash@_cgo_gotypes.go:39 main.main@/app/main.go:12"
	if strings.Join(got, " ") != want {
		t.Errorf("frames\n%s\nwant\n%s", strings.Join(got, " "), want)
	}
}

// TestLastLine checks what a last line without a newline means: a line
// that ends a block ("exit status 2") or other output leaves the last
// goroutine complete; the start of a frame or header means the input was
// cut.
func TestLastLine(t *testing.T) {
	block := "goroutine 1 [running]:\nmain.main()\n\t/x.go:3 +0x1\n"
	for _, tc := range []struct {
		tail      string
		truncated bool
		n         int
	}{
		{"exit status 2", false, 1},
		{"FAIL\texample.com/x\t0.1s", false, 1},
		{"level=info msg=bye", false, 1},
		{"\x00\x01\x02 binary junk", false, 1},
		{"rax    0xca", false, 1},
		{"main.f(0x1", true, 0},
		{"\t/x.go:1", false, 1}, // a location with no function before it is not this block's
		{"created by main.g in gorout", true, 0},
		{"\ngoroutine 55", true, 1},
		{"\ngoroutine 55 [chan se", true, 1},
		{"\ngorou", true, 1},
		{"\nI1201 08:00:00 last log line", false, 1},
	} {
		rd, gs, err := readAll(block + tc.tail)
		if err != nil && tc.n > 0 {
			t.Errorf("%q: %v", tc.tail, err)
			continue
		}
		if len(gs) != tc.n || rd.Truncated() != tc.truncated {
			t.Errorf("%q: %d goroutines, truncated %v (%s); want %d, %v", tc.tail, len(gs), rd.Truncated(), rd.TruncationDetail(), tc.n, tc.truncated)
		}
		if strings.Contains(rd.TruncationDetail(), "mid-line") && !strings.HasPrefix(tc.tail, "main.f") && !strings.HasPrefix(tc.tail, "created") {
			t.Errorf("%q reported as cut mid-line: %s", tc.tail, rd.TruncationDetail())
		}
	}
}

// TestLabelsGo127 reads Go 1.27's header labels, after the brackets and
// quoted only where needed.
func TestLabelsGo127(t *testing.T) {
	in := "goroutine 7 [chan receive, 3 minutes] {app: svc, \"req id\": \"a, b}\", v: 1.2/x_y}:\nmain.f()\n\t/x.go:1 +0x1\n"
	_, gs, err := readAll(in)
	if err != nil || len(gs) != 1 {
		t.Fatalf("%d goroutines, %v", len(gs), err)
	}
	if g := gs[0]; g.Labels != "app=svc,req id=a, b},v=1.2/x_y" || g.State != "chan receive" || g.WaitMinutes != 3 {
		t.Errorf("parsed %+v", g)
	}
}

// TestNoFinalNewline: a traceback whose last frame's location ends the
// input without a newline is whole (panicparse reads it); one cut before
// the pc, or inside it, may continue and is cut off.
func TestNoFinalNewline(t *testing.T) {
	head := "panic: boom\n\ngoroutine 1 [running]:\nmain.main()\n\t/tmp/x.go:5 +0x1d\nmain.init.0()\n"
	for _, tc := range []struct {
		tail      string
		truncated bool
		n         int
	}{
		{"\t/tmp/y.go:12 +0x2f", false, 1},
		{"\t/tmp/y.go:12 +0x", true, 0},
		{"\t/tmp/y.go:12", true, 0},
		{"\t/tmp/y.go:", true, 0},
		{"\t/tmp/y.go:12 +0x2g", true, 0},
	} {
		rd, gs, err := readAll(head + tc.tail)
		if err != nil && tc.n > 0 {
			t.Errorf("%q: %v", tc.tail, err)
			continue
		}
		if len(gs) != tc.n || rd.Truncated() != tc.truncated {
			t.Errorf("%q: %d goroutines, truncated %v (%s); want %d, %v", tc.tail, len(gs), rd.Truncated(), rd.TruncationDetail(), tc.n, tc.truncated)
			continue
		}
		if tc.n == 1 {
			if fs := gs[0].Frames; len(fs) != 2 || fs[1].File != "/tmp/y.go" || fs[1].Line != 12 {
				t.Errorf("%q: frames %+v", tc.tail, fs)
			}
		}
	}
}
