package analysis

import (
	"fmt"
	"strings"

	"github.com/leakscope/leakscope/analysis/internal/tables"
	"github.com/leakscope/leakscope/ingest/bundle"
)

// sigFrames are the calls a goroutine sending a signal is in, with the
// position of the signal among their printed words (-1: not printed as a
// word, an interface).
var sigFrames = map[string]int{
	"syscall.Kill":                          1,
	"syscall.Tgkill":                        2,
	"os.(*Process).pidfdSendSignal":         1,
	"internal/syscall/unix.PidFDSendSignal": 1,
	"os.(*Process).signal":                  -1,
	"os.(*Process).Signal":                  -1,
}

// sigQuit is SIGQUIT's number on the platforms Go prints tracebacks for.
const sigQuit = 3

// dumpingFrame reports, for one frame's printed arguments, whether the
// goroutine is sending the process the signal that makes the runtime
// print its traceback: SIGQUIT when the signal is printed, any signal
// when it is not (the traceback was printed meanwhile). It returns the
// basis, "" when the frame is no such call.
func dumpingFrame(fn, args string) string {
	pos, ok := sigFrames[fn]
	if !ok {
		return ""
	}
	if pos < 0 {
		return fmt.Sprintf("it is in %s as the dump is taken", fn)
	}
	if v, ok := tables.WordAt(args, pos); ok {
		if v != sigQuit {
			return ""
		}
		return fmt.Sprintf("it is in %s sending signal %d (SIGQUIT)", fn, v)
	}
	return fmt.Sprintf("it is in %s as the dump is taken", fn)
}

// isDumpingStack reports the goroutines that take the dump rather than
// do the program's work, by their frames alone: the test runner's alarm
// (testing.(*M).startAlarm's timer, which panics with "test timed out"
// and prints every goroutine).
func isDumpingStack(frames []Frame) bool {
	for _, f := range frames {
		if f.Function == "testing.(*M).startAlarm.func1" {
			return true
		}
	}
	return false
}

// allAsleepMessage is the runtime's fatal error when its deadlock check
// (checkdead) finds no goroutine able to run, no thread in a system call
// or in the network poller, and no timer pending on any P. Only then
// does it print every goroutine and exit, so in that traceback a select
// or receive has no timer case that could still fire, whatever its
// source says or does not say.
const allAsleepMessage = "all goroutines are asleep - deadlock!"

// allAsleepCrash names the dump of snapshot ts whose traceback follows
// the runtime's all-asleep fatal error; "" when there is none.
func allAsleepCrash(m bundle.Manifest, ts int64) string {
	for _, a := range m.Artifacts {
		if a.Kind != bundle.SourceDump || !strings.HasPrefix(a.Fatal, allAsleepMessage) {
			continue
		}
		if at := a.Time; (at.IsZero() && ts == 0) || (!at.IsZero() && at.UnixNano() == ts) {
			return a.Name
		}
	}
	return ""
}
