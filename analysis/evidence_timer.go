package analysis

// waitAt reads the statement a parked goroutine waits at (its location
// frame's line) from the kept source.
func (c *sourceCode) waitAt(frames []Frame, kind string) *waitStmt {
	loc, _ := locationFrame(frames)
	return c.stmtAt(loc, kind)
}

// timerWait says whether a timer can end a select or receive: yes when
// one of the statement's own cases receives from time.After, time.Tick,
// or the C of a Timer or Ticker (not one just stopped); a timer
// elsewhere in the function does not count. Maybe when the kept source
// cannot say: the statement is not known (source absent, changed, does
// not parse) or a case receives the C of a value whose type the
// declaration does not show. Maybe counts as a timer wait, so a missing
// source never makes a goroutine stuck that its source would show live
// (a retry loop on time.After); it only leaves undecided what the
// source would have judged. The standard library's own waits, whose
// source is not kept, are taken as they are: no.
func timerWait(w *waitStmt, frames []Frame) tri {
	t := w.timer()
	if t == triMaybe && w.kind == "" {
		if loc, _ := locationFrame(frames); isStd(loc) {
			return triNo
		}
	}
	return t
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
