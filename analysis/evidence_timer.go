package analysis

import "strings"

// waitAt reads the statement a parked goroutine waits at (its location
// frame's line) from the kept source.
func (c *sourceCode) waitAt(frames []Frame, kind string) *waitStmt {
	loc, _ := locationFrame(frames)
	return c.stmtAt(loc, kind)
}

// timerWait reports a select or receive that a timer will end: one of the
// statement's own cases receives from time.After, time.Tick, or the C of
// a Timer or Ticker (not one just stopped). A timer elsewhere in the
// function does not count. The C of a value whose type the declaration
// does not show is taken as a timer's.
func timerWait(w *waitStmt) bool {
	return w.kind != "" && w.timer() != triNo
}

// signalWait reports a receive or select on a channel signal.Notify
// feeds in the same declaration; without the statement (source absent or
// changed), main.main while the process has a signal loop (the usual
// run-until-signalled idiom).
func signalWait(w *waitStmt, frames []Frame, signals bool) bool {
	if w.kind != "" {
		return w.has(caseSignal)
	}
	loc, _ := locationFrame(frames)
	return signals && loc.Function == "main.main"
}

// goBefore reports whether a Go version ("go1.22.5", "devel go1.24-…")
// is older than go1.minor; false when it cannot tell.
func goBefore(version string, minor int) bool {
	i := strings.Index(version, "go1.")
	if i < 0 {
		return false
	}
	n, rest := 0, version[i+len("go1."):]
	for j := 0; j < len(rest) && rest[j] >= '0' && rest[j] <= '9'; j++ {
		n = 10*n + int(rest[j]-'0')
	}
	return n > 0 && n < minor
}
