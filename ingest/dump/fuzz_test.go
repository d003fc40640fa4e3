package dump

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// FuzzReader checks that the reader never panics, that Next returns a
// goroutine exactly when it returns no error, and that an input yielding
// no goroutine and no race report ends in an error wrapping
// ErrNoGoroutines.
func FuzzReader(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.txt")
	for _, name := range files {
		if data, err := os.ReadFile(name); err == nil && len(data) < 64<<10 {
			f.Add(data)
		}
	}
	// The envelopes and forms of logs: CRI with split lines, Docker's
	// json-file, kubectl's timestamps, a test's indented log, a race
	// report, a crash's register dump, cgo frames.
	f.Add([]byte("2026-12-01T08:00:00.1Z stderr F goroutine 7 [chan send]:\n2026-12-01T08:00:00.2Z stdout F hello\n2026-12-01T08:00:00.3Z stderr P main.f(0x1\n2026-12-01T08:00:00.4Z stderr F , 0x2)\n2026-12-01T08:00:00.5Z stderr F \t/x.go:3 +0x1\n"))
	f.Add([]byte(`{"log":"goroutine 1 [running]:\n","stream":"stderr"}` + "\n" + `{"log":"main.main()\n","stream":"stderr"}` + "\n" + `{"log":"\t/x.go:1 +0x1\n","stream":"stderr"}` + "\n"))
	f.Add([]byte("2026-12-01T08:00:00.123456789Z goroutine 1 [running]:\n2026-12-01T08:00:00.123456789Z main.main()\n2026-12-01T08:00:00.123456789Z \t/x.go:1 +0x1\n"))
	f.Add([]byte("    x_test.go:12: goroutine 4 [running]:\n        main.f(0x1)\n        \t/x.go:11 +0x45\n        \n--- PASS: TestX (0.00s)\n"))
	f.Add([]byte("==================\nWARNING: DATA RACE\nWrite at 0x00c0000881d8 by goroutine 9:\n  main.f()\n      /x.go:26 +0x33\n\nPrevious read at 0x00c0000881d8 by main goroutine:\n  main.main()\n      /x.go:27 +0x104\n\nGoroutine 9 (running) created at:\n  main.main()\n      /x.go:26 +0xf9\n==================\nFound 1 data race(s)\nexit status 66"))
	f.Add([]byte("goroutine 0 gp=0x1 m=0 mp=0x2 [idle]:\nruntime.futex(0x1)\n\t/go/sys.s:557 +0x21 fp=0x1 sp=0x2 pc=0x3\nrax    0xca\nrip    0x46b1a1\n"))
	f.Add([]byte("goroutine 1 [syscall]:\nruntime.cgocall(0x1)\n\t/go/cgocall.go:167 +0x4b\n??\n\t??:0 pc=0x7f5d3c0ad6b8\ncrash\n\t/src/crash.c:5 pc=0x4a1c3d\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		rd := NewReader(bytes.NewReader(data))
		n := 0
		for i := 0; ; i++ {
			g, err := rd.Next()
			if (g == nil) == (err == nil) {
				t.Fatalf("Next returned goroutine %v and error %v", g, err)
			}
			if err == io.EOF {
				if n == 0 && rd.RaceCount() == 0 {
					t.Fatalf("io.EOF without any goroutine or race")
				}
				break
			}
			if err != nil {
				if !errors.Is(err, ErrNoGoroutines) {
					t.Fatalf("unexpected error kind: %v", err)
				}
				if g2, err2 := rd.Next(); g2 != nil || err2 != err {
					t.Fatalf("error not sticky: %v then %v", err, err2)
				}
				break
			}
			n++
			if g.Line < 1 || g.Line > rd.Lines() {
				t.Fatalf("goroutine line %d outside 1..%d", g.Line, rd.Lines())
			}
			if i > len(data) {
				t.Fatalf("more goroutines than bytes")
			}
		}
		if rd.Truncated() != (rd.TruncationDetail() != "") {
			t.Fatalf("truncated %v with detail %q", rd.Truncated(), rd.TruncationDetail())
		}
	})
}

// FuzzLooks checks that Looks never panics and accepts whatever starts
// with a goroutine header line.
func FuzzLooks(f *testing.F) {
	f.Add([]byte("goroutine 1 [running]:\n"))
	f.Add([]byte("SIGQUIT: quit\nPC=0x1 m=0 sigcode=0\n"))
	f.Add([]byte("panic: x\n\ngoroutine 1 [running]:\n"))
	f.Add([]byte("\x1f\x8b\x08"))
	f.Fuzz(func(t *testing.T, head []byte) {
		Looks(head)
		if !Looks(append([]byte("goroutine 7 [chan send]:\n"), head...)) {
			t.Fatalf("a leading header was not recognised")
		}
	})
}
