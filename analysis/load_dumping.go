package analysis

import "fmt"

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
	if v, ok := wordAt(args, pos); ok {
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
