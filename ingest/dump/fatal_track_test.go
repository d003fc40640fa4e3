package dump

import (
	"math/rand"
	"testing"
)

// TestFatalTrackAddsUp: the track of an input split anywhere and added up
// in order is the track of the whole input, on random sequences of
// blocks, fatal and other preambles, crash output and noise.
func TestFatalTrackAddsUp(t *testing.T) {
	lines := [][]byte{[]byte("fatal error: all goroutines are asleep - deadlock!"), []byte("fatal error: other"), []byte("SIGQUIT: quit"),
		[]byte("runtime stack:"), []byte("PC=0x46b3a1 m=0 sigcode=0"), []byte("some log line"), nil}
	r := rand.New(rand.NewSource(1))
	for round := range 20000 {
		seq := make([][]byte, r.Intn(9))
		for i := range seq {
			seq[i] = lines[r.Intn(len(lines))]
		}
		feed := func(f *fatalTrack, part [][]byte) {
			for _, l := range part {
				if l == nil {
					f.block()
				} else {
					f.line(l)
				}
			}
		}
		var whole fatalTrack
		feed(&whole, seq)
		var sum fatalTrack
		for at := 0; at < len(seq); {
			end := at + 1 + r.Intn(len(seq)-at)
			var part fatalTrack
			feed(&part, seq[at:end])
			sum.add(part)
			at = end
		}
		if sum.fatal() != whole.fatal() {
			t.Fatalf("round %d: %q: parts add to %q, the whole gives %q", round, seq, sum.fatal(), whole.fatal())
		}
	}
}

// TestFatalHeadsItsTraceback: the all-asleep message counts only for the
// traceback it heads: not for a live SIGQUIT dump after it, not for
// goroutines before it, not when other output separates it from its
// goroutines; a trailing preamble that heads nothing changes nothing.
func TestFatalHeadsItsTraceback(t *testing.T) {
	const (
		fatal = "fatal error: all goroutines are asleep - deadlock!\n\n"
		g1    = "goroutine 1 [chan receive]:\nmain.main()\n\t/x/main.go:3 +0x1\n\n"
		g7    = "goroutine 7 [select]:\nmain.loop()\n\t/x/main.go:9 +0x1\n\n"
	)
	for name, c := range map[string]struct{ in, want string }{
		"a crash":                   {fatal + g1 + g7 + "exit status 2\n", "all goroutines are asleep - deadlock!"},
		"thread stacks between":     {fatal + "runtime stack:\nruntime.throw({0x4b8f6c?, 0x0?})\n\t/go/src/runtime/panic.go:1101 +0x48\n\n" + g1, "all goroutines are asleep - deadlock!"},
		"a SIGQUIT dump after":      {fatal + "\nSIGQUIT: quit\nPC=0x46b3a1 m=0 sigcode=0\n\n" + g1 + g7, ""},
		"a line anywhere before":    {"log: starting\n" + fatal + "log: request served\n" + g1, ""},
		"goroutines before":         {g7 + fatal + g1, ""},
		"a trailing preamble":       {fatal + g1 + "fatal error: second\n", "all goroutines are asleep - deadlock!"},
		"an earlier crash, then it": {"panic: boom\n\n" + g7 + "exit status 2\n" + fatal + g1, ""},
	} {
		for _, o := range []readOptions{{}, {workers: 2, chunk: 16, maxCarry: 1 << 20}} {
			if got := readWith([]byte(c.in), o).fatal; got != c.want {
				t.Errorf("%s (%+v): Fatal = %q, want %q", name, o, got, c.want)
			}
		}
	}
}
