package capture

import (
	"sync"
	"sync/atomic"

	"github.com/leakscope/leakscope/ingest/bundle"
)

// firstAnswer runs [Options.FirstDump] once, after the first complete
// dump is in the bundle, while the capture goes on.
type firstAnswer struct {
	done atomic.Bool
	wg   sync.WaitGroup
}

// afterDump is called for every dump artifact; the first complete one
// records the source of the functions its frames name (without it, a
// select or receive in the program's code is undecided, and the first
// answer would hold no stuck verdict), flushes the tables, so a reader
// sees the dump and the history before it, and starts the callback.
func (c *capturer) afterDump(a bundle.Artifact) {
	if c.opts.FirstDump == nil || a.Status != bundle.StatusComplete || !c.first.done.CompareAndSwap(false, true) {
		return
	}
	c.snapshotSources()
	if err := c.w.Flush(); err != nil {
		c.logf("first answer: %v", err)
		return
	}
	c.first.wg.Go(func() { c.opts.FirstDump(c.opts.Out) })
}
