package dump

import (
	"bytes"
	"strings"
)

// A "fatal error: " line is the runtime's reason for the crash whose
// traceback it heads: "all goroutines are asleep - deadlock!" says that no
// goroutine of that traceback could run. It says nothing of goroutines
// printed before it, or after another traceback began (a SIGQUIT dump
// later in the same log), and a log line that happens to start so heads
// nothing when other output comes before the next goroutine. fatalTrack
// follows the input's tracebacks to keep the message only when it heads
// the traceback of every goroutine read.
//
// It sees, in input order: goroutine blocks, the first lines of crash
// output (preambles: "fatal error: ", "panic: ", "SIGQUIT: quit", …), and
// other non-blank lines between blocks, which are either more crash
// output (thread stacks, register dumps, "[signal …]") or not (noise).
// The traceback of the latest goroutines is headed by the last preamble
// before them (cur); a preamble no goroutine has followed yet waits
// (pend). Tracks of consecutive parts of the input add up (add), so the
// parser workers of par.go each keep one for their chunk.
type fatalTrack struct {
	cur, pend preamble
	// Of the whole part: whether it holds blocks, and whether noise came
	// before its first block or preamble.
	anyBlocks, noiseLead bool
}

// preamble is a preamble line read: its fatal message ("" for another
// kind of crash), whether goroutines came before it, and whether noise
// came between it and its first goroutine.
type preamble struct {
	seen                bool
	msg                 string
	blocksBefore, noise bool
}

// maxFatal bounds the fatal error message kept.
const maxFatal = 256

var fatalPrefix = []byte("fatal error: ")

// block notes a goroutine block's start.
func (f *fatalTrack) block() {
	if f.pend.seen {
		f.cur, f.pend = f.pend, preamble{}
	}
	f.anyBlocks = true
}

// line notes a non-blank line between blocks.
func (f *fatalTrack) line(text []byte) {
	switch {
	case isPreamble(text):
		msg := ""
		if m, ok := bytes.CutPrefix(text, fatalPrefix); ok {
			m = bytes.TrimSpace(m)
			msg = strings.ToValidUTF8(string(m[:min(len(m), maxFatal)]), "?")
		}
		f.pend = preamble{seen: true, msg: msg, blocksBefore: f.anyBlocks}
	case crashOutput(text):
	case f.pend.seen:
		f.pend.noise = true
	case !f.cur.seen && !f.anyBlocks:
		f.noiseLead = true
	}
}

// add adds o, the track of the input right after f's.
func (f *fatalTrack) add(o fatalTrack) {
	empty := !f.pend.seen && !f.anyBlocks // nothing in f but noise, if anything
	o.cur.blocksBefore = o.cur.blocksBefore || f.anyBlocks
	o.pend.blocksBefore = o.pend.blocksBefore || f.anyBlocks
	if f.pend.seen {
		f.pend.noise = f.pend.noise || o.noiseLead
	}
	switch {
	case o.cur.seen:
		f.cur = o.cur
	case o.anyBlocks && f.pend.seen:
		f.cur = f.pend
	}
	if o.pend.seen || o.anyBlocks {
		f.pend = o.pend
	}
	if empty {
		f.noiseLead = f.noiseLead || o.noiseLead
	}
	f.anyBlocks = f.anyBlocks || o.anyBlocks
}

// fatal is the message of the fatal error heading the traceback of every
// goroutine read, "" when there is none.
func (f *fatalTrack) fatal() string {
	if c := f.cur; c.seen && !c.blocksBefore && !c.noise {
		return c.msg
	}
	return ""
}

func isPreamble(line []byte) bool {
	for _, p := range preambles {
		if bytes.HasPrefix(line, p) {
			return true
		}
	}
	return false
}

// crashOutput recognises the lines a crash writes between its preamble
// and its first goroutine: thread stacks ("runtime stack:", frames and
// their locations), the signal and PC lines, register dumps, runtime
// diagnostics.
func crashOutput(line []byte) bool {
	for _, p := range crashLines {
		if bytes.HasPrefix(line, p) {
			return true
		}
	}
	return looksLikeFrame(line) || registerLine(line) || funcLine(line)
}

// funcLine recognises a frame's function line of a thread stack
// ("runtime.throw({0x4b8f6c?, 0x0?})"): a name without spaces, then
// arguments in parentheses closing the line.
func funcLine(line []byte) bool {
	i := bytes.IndexByte(line, '(')
	return i > 0 && bytes.HasSuffix(line, []byte(")")) && bytes.IndexByte(line[:i], ' ') < 0
}

var crashLines = [][]byte{[]byte("runtime stack:"), []byte("PC=0x"), []byte("[signal "), []byte("signal arrived during"),
	[]byte("runtime: "), []byte("\t"), []byte("goroutine "), []byte("created by "), []byte("...additional frames elided..."), []byte("[recovered")}
