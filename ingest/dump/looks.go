package dump

import "bytes"

// preambles start the lines a crash writes before its first goroutine.
var preambles = [][]byte{
	[]byte("panic: "),
	[]byte("fatal error: "),
	[]byte("SIGQUIT: quit"),
	[]byte("SIGABRT: abort"),
	[]byte("SIGSEGV: segmentation violation"),
	[]byte("SIGBUS: bus error"),
	[]byte("SIGILL: illegal instruction"),
	[]byte("SIGTRAP: trace/breakpoint trap"),
	[]byte("SIGFPE: floating-point exception"),
	[]byte("fatal: morestack on g0"),
}

// preambleWindow is how far into head a crash preamble is looked for.
const preambleWindow = 4 << 10

// Looks reports whether head, the first bytes of a file, looks like a
// goroutine dump or crash traceback: it holds a goroutine header line, or
// one of its first 4 KiB of lines starts a crash preamble ("panic: ",
// "fatal error: ", "SIGQUIT: quit", ...) followed, within head, by a
// "PC=0x" line or a line starting "goroutine " (which may be cut off at
// the end of head). It only inspects head and never fails.
func Looks(head []byte) bool {
	var h header
	preamble := false
	for off := 0; off < len(head); {
		line := head[off:]
		complete := false
		if i := bytes.IndexByte(line, '\n'); i >= 0 {
			line = line[:i]
			complete = true
		}
		start := off
		off += len(line) + 1
		line = bytes.TrimSuffix(line, []byte("\r"))
		if complete && parseHeader(line, &h) {
			return true
		}
		if preamble && (bytes.HasPrefix(line, []byte("PC=0x")) || bytes.HasPrefix(line, goroutinePrefix)) {
			return true
		}
		if start < preambleWindow && !preamble {
			for _, p := range preambles {
				if bytes.HasPrefix(line, p) {
					preamble = true
					break
				}
			}
		}
	}
	return false
}
