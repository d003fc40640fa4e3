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
// no goroutine ends in an error wrapping ErrNoGoroutines or a SyntaxError.
func FuzzReader(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.txt")
	for _, name := range files {
		if data, err := os.ReadFile(name); err == nil && len(data) < 64<<10 {
			f.Add(data)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		rd := NewReader(bytes.NewReader(data))
		n := 0
		for i := 0; ; i++ {
			g, err := rd.Next()
			if (g == nil) == (err == nil) {
				t.Fatalf("Next returned goroutine %v and error %v", g, err)
			}
			if err == io.EOF {
				if n == 0 {
					t.Fatalf("io.EOF without any goroutine")
				}
				break
			}
			if err != nil {
				if n == 0 && !errors.Is(err, ErrNoGoroutines) && !IsSyntax(err) {
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
