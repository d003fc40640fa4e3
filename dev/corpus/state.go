package corpus

import (
	"bytes"
	"errors"
	"io"
	"strings"

	"github.com/leakscope/leakscope/ingest/dump"
	"github.com/leakscope/leakscope/samples/blocking"
)

// parked is what the harness reads of one goroutine in a dump to decide
// whether a program is where its truth says.
type parked struct {
	state     string
	minutes   int64
	functions []string
}

// readDump parses a debug=2 dump or traceback with leakscope's own reader.
func readDump(b []byte) ([]parked, error) {
	r := dump.NewReader(bytes.NewReader(b))
	var out []parked
	for {
		g, err := r.Next()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		p := parked{state: g.State, minutes: g.WaitMinutes}
		for _, f := range g.Frames {
			p.functions = append(p.functions, f.Function)
		}
		out = append(out, p)
	}
}

// matches reports whether g is one of the goroutines w describes: its
// printed state starts with w.State and w.Function is among its frames.
func (g parked) matches(w blocking.Goroutines) bool {
	if !strings.HasPrefix(g.state, w.State) {
		return false
	}
	for _, f := range g.functions {
		if f == w.Function {
			return true
		}
	}
	return false
}

// present reports whether every entry of want has at least Count matching
// goroutines that have waited at least minMinutes.
func present(gs []parked, want []blocking.Goroutines, minMinutes int64) bool {
	for _, w := range want {
		n := 0
		for _, g := range gs {
			if g.matches(w) && g.minutes >= minMinutes {
				n++
			}
		}
		if n < w.Count {
			return false
		}
	}
	return true
}

// triggerSet is what must be present before a program is captured: its
// blocked goroutines and their consequences, or a control's parked
// look-alikes.
func triggerSet(t blocking.Truth) []blocking.Goroutines {
	out := append([]blocking.Goroutines(nil), t.Blocked...)
	out = append(out, t.Consequences...)
	return append(out, t.Parked...)
}
