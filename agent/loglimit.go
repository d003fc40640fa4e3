package agent

import (
	"fmt"
	"sync"
	"time"
)

// What an alert's sender controls — how many notifications, alerts and
// labels — must not control how much the agent logs: a flood of alerts
// that match nothing wrote 3.6 MB of log in 7 s. Lines about alerts the
// agent does nothing with are logged at most once per logQuietEvery per
// kind, each cut to maxAlertLogLine bytes, and the next line says how
// many were left out.

// logQuietEvery is the least time between two lines of one kind.
const logQuietEvery = 10 * time.Second

// maxAlertLogLine bounds a line about an alert (its labels are the
// sender's).
const maxAlertLogLine = 1024

// logLimit remembers, per kind of line, when one was last logged and how
// many were left out since. It is safe for concurrent use.
type logLimit struct {
	mu   sync.Mutex
	last map[string]time.Time
	held map[string]int
}

// logQuiet logs a line of kind unless one was logged less than
// logQuietEvery ago.
func (a *Agent) logQuiet(kind, format string, args ...any) {
	l := &a.quiet
	now := time.Now()
	l.mu.Lock()
	if l.last == nil {
		l.last, l.held = map[string]time.Time{}, map[string]int{}
	}
	if t, ok := l.last[kind]; ok && now.Sub(t) < logQuietEvery {
		l.held[kind]++
		l.mu.Unlock()
		return
	}
	held := l.held[kind]
	l.last[kind], l.held[kind] = now, 0
	l.mu.Unlock()
	msg := fmt.Sprintf(format, args...)
	if len(msg) > maxAlertLogLine {
		msg = msg[:maxAlertLogLine] + "… (cut)"
	}
	if held > 0 {
		msg += fmt.Sprintf(" (%d more %s lines since the last were not logged)", held, kind)
	}
	a.logf("%s", msg)
}
