package analysis

import (
	"strings"

	"github.com/leakscope/leakscope/ingest/bundle"
)

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
