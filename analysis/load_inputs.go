package analysis

import (
	"fmt"
	"time"
)

// inputSummary says what the bundle's goroutine inputs allowed the
// verdicts to use, and what one more input would add.
func inputSummary(in *loaded) *InputSummary {
	sum := &InputSummary{Snapshots: len(in.d.snapshots), Allowed: []string{}, Next: []string{}}
	if n := len(in.d.snapshots); n >= 2 {
		sum.SpanSeconds = round(float64(in.d.snapshots[n-1]-in.d.snapshots[0])/1e9, 1)
	}
	sum.Traceback = hasRuntimeFrames(in)
	sum.LeakProfile = len(in.prof.LeakTS) > 0
	sum.Trace = len(in.tg) > 0
	var waited bool
	for _, s := range in.sites {
		waited = waited || s.maxWait >= 1
	}
	allow := func(f string, a ...any) { sum.Allowed = append(sum.Allowed, fmt.Sprintf(f, a...)) }
	next := func(f string, a ...any) { sum.Next = append(sum.Next, fmt.Sprintf(f, a...)) }
	switch {
	case sum.Snapshots == 0:
	case sum.Snapshots == 1:
		allow("stuck from one snapshot: the wait kind, what each goroutine waits on and who holds it (the wait-for graph from the frames' argument words)")
	default:
		allow("stuck from %d snapshots over %s: the same goroutines parked at the same place (persistence), and growth", sum.Snapshots, time.Duration(sum.SpanSeconds*1e9).Round(100*time.Millisecond))
	}
	if sum.Traceback {
		allow("channels and semaphores waited on, from the runtime's frames of a traceback")
	}
	if waited {
		allow("how long goroutines have waited, by the runtime's count")
	}
	if sum.LeakProfile {
		allow("the runtime's proof that goroutines can never wake (goroutineleak profile); it cannot see objects reachable from package-level variables, the wait-for graph can")
	}
	if sum.Trace {
		allow("goroutines created and never ended during a trace window")
	}
	if sum.Snapshots == 1 {
		next("a second dump 10 s later (curl …/debug/pprof/goroutine?debug=2 again, or leakscope capture --url URL --duration 20s --interval 10s): shows which goroutines stay parked at the same place and which move, and whether groups grow")
	}
	if sum.Snapshots >= 1 && !waited && sum.SpanSeconds < 60 {
		next("a dump once the goroutines have waited a minute or more: the runtime then prints how long each has waited")
	}
	if sum.Snapshots >= 1 && !sum.Traceback {
		next("a SIGQUIT traceback (kill -QUIT PID; the process exits): its runtime frames name the channel each goroutine waits on")
	}
	if !sum.LeakProfile {
		next("the goroutineleak profile (…/debug/pprof/goroutineleak; Go 1.27, or Go 1.26 built with GOEXPERIMENT=goroutineleakprofile): the runtime's own proof of which goroutines can never wake")
	}
	if !sum.Trace {
		next("a trace window (leakscope capture --url URL --trace-window 5s): every goroutine created, blocked and ended while it runs")
	}
	return sum
}

// hasRuntimeFrames reports whether the goroutine stacks show the runtime's
// own frames (runtime.gopark): a crash or SIGQUIT traceback, where the
// channel and semaphore words waited on are printed.
func hasRuntimeFrames(in *loaded) bool {
	for _, s := range in.sites {
		for _, f := range s.frames {
			if f.Function == "runtime.gopark" {
				return true
			}
		}
	}
	return false
}
