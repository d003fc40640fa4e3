package capture

import (
	"fmt"
	"github.com/leakscope/leakscope/internal/format"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/leakscope/leakscope/ingest/bundle"
)

// progress writes the live status line and one-off notices. On a terminal
// the status line is redrawn in place; elsewhere it is printed every
// nonTTYEvery. It is safe for concurrent use.
type progress struct {
	mu       sync.Mutex
	w        io.Writer
	tty      bool
	shown    bool // a status line is on screen (tty)
	lastLine time.Time
}

const nonTTYEvery = 10 * time.Second

func newProgress(w io.Writer) *progress {
	p := &progress{w: w}
	if f, ok := w.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			p.tty = true
		}
	}
	return p
}

// Notef prints a notice on its own line.
func (p *progress) Notef(format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.clear()
	fmt.Fprintf(p.w, "capture: "+format+"\n", args...)
}

// Status shows the current status line.
func (p *progress) Status(line string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.tty {
		fmt.Fprintf(p.w, "\r\x1b[K%s", line)
		p.shown = true
		return
	}
	if time.Since(p.lastLine) >= nonTTYEvery {
		fmt.Fprintln(p.w, line)
		p.lastLine = time.Now()
	}
}

// Done removes the status line.
func (p *progress) Done() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.clear()
}

func (p *progress) clear() {
	if p.tty && p.shown {
		fmt.Fprint(p.w, "\r\x1b[K")
		p.shown = false
	}
}

// statusLine is the live one-line summary.
func (c *capturer) statusLine() string {
	var b strings.Builder
	el := time.Since(c.start).Truncate(time.Second)
	if c.opts.Duration > 0 {
		fmt.Fprintf(&b, "[%v/%v]", el, c.opts.Duration)
	} else {
		fmt.Fprintf(&b, "[%v, Ctrl-C to stop]", el)
	}
	c.mu.Lock()
	for _, k := range []string{"dump", "cpu", "trace"} {
		if st := c.stats[k]; st != nil {
			fmt.Fprintf(&b, " %s %d", k, st.Artifacts)
			if st.Errors > 0 {
				fmt.Fprintf(&b, " (%d failed)", st.Errors)
			}
		}
	}
	c.mu.Unlock()
	if c.ebpf != nil {
		st := c.ebpf.stats()
		rate := float64(st.Events) / max(time.Since(c.start).Seconds(), 1e-3)
		fmt.Fprintf(&b, " ebpf %d ev (%.0f/s, %d dropped)", st.Events, rate, st.Dropped)
	}
	fmt.Fprintf(&b, " bundle %s", format.Bytes(float64(bundle.DirSize(c.w.Dir()))))
	return b.String()
}
