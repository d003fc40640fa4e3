package tables

import (
	"fmt"
	"sort"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/ingest/schema"
)

// probeCoverage is when the eBPF goroutine probes were attached (the
// probe_windows table). A capture detaches them between windows to stay
// within its CPU budget: a goroutine they saw created and not exit may
// then have exited unseen.
type probeCoverage struct {
	windows []probeSpan // by start; none: attached throughout
}

// probeSpan is one window, in wall-clock nanoseconds.
type probeSpan struct {
	start, end int64
	toEnd      bool // attached until the capture ended
}

// readProbeCoverage reads the goroutine probes' windows.
func readProbeCoverage(b *bundle.Bundle, mem memory.Allocator) (probeCoverage, error) {
	var cov probeCoverage
	err := b.ReadTable(schema.TableProbeWindows, mem, func(rec arrow.Record) error {
		c := cols{rec: rec}
		probes, start, end := c.str(schema.ColProbes), c.i64(schema.ColStartTS), c.i64(schema.ColEndTS)
		var toEnd *array.Boolean
		if i := c.idx(schema.ColToEnd); i >= 0 {
			toEnd, _ = rec.Column(i).(*array.Boolean)
		}
		for r := 0; r < int(rec.NumRows()); r++ {
			if probes(r) == schema.ProbesGoroutines {
				cov.windows = append(cov.windows, probeSpan{start: start(r), end: end(r), toEnd: toEnd != nil && toEnd.Value(r)})
			}
		}
		return nil
	})
	if err := bundle.Tolerate(err); err != nil {
		return probeCoverage{}, fmt.Errorf("read %s: %w", schema.TableProbeWindows, err)
	}
	sort.Slice(cov.windows, func(i, j int) bool { return cov.windows[i].start < cov.windows[j].start })
	return cov, nil
}

// lostAfter returns, for a goroutine the probes saw created at ts and not
// exit, the end of the window that saw it when the probes were detached
// after it (its fate unknown from then on), and 0 when they stayed
// attached until the capture ended (it was alive at the end).
func (c probeCoverage) lostAfter(ts int64) int64 {
	if len(c.windows) == 0 {
		return 0
	}
	i := sort.Search(len(c.windows), func(i int) bool { return c.windows[i].end >= ts })
	if i == len(c.windows) {
		i-- // after the last window: the probes' last events, delivered late
	}
	w := c.windows[i]
	if w.toEnd && i == len(c.windows)-1 {
		return 0
	}
	return w.end
}
