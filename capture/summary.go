package capture

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/internal/format"
)

// Summary describes a finished capture.
type Summary struct {
	// Bundle is the bundle directory.
	Bundle string
	// Start and End are the wall-clock bounds of the capture.
	Start, End time.Time
	// Reason says why the capture ended: [EndDuration], [EndInterrupted],
	// or why the target went away.
	Reason string
	// Sources are the manifest's sources as recorded at the end.
	Sources []bundle.Source
	// Rows is the number of rows written to each table.
	Rows map[string]int64
	// Artifacts is the number of originals kept under raw/ and RawBytes
	// their size; BundleBytes is the size of the whole bundle directory.
	Artifacts   int
	RawBytes    int64
	BundleBytes int64
	// Endpoints has the per-endpoint artifact counts, bytes and errors.
	Endpoints map[string]EndpointStats
	// EBPF has the event counts when the eBPF source ran.
	EBPF *EBPFStats
}

// EndpointStats counts what one pprof endpoint produced.
type EndpointStats struct {
	Artifacts int64
	Bytes     int64
	Errors    int64
	LastError string
}

// EBPFStats counts eBPF events.
type EBPFStats struct {
	Events  int64
	Dropped int64
	ByKind  map[string]int64
}

// Write prints the summary in a few human-readable lines.
func (s Summary) Write(w io.Writer) {
	d := s.End.Sub(s.Start).Round(100 * time.Millisecond)
	fmt.Fprintf(w, "captured %v into %s (%s): %s\n", d, s.Bundle, format.Bytes(float64(s.BundleBytes)), s.Reason)
	fmt.Fprintf(w, "  raw artifacts: %d, %s\n", s.Artifacts, format.Bytes(float64(s.RawBytes)))
	var eps []string
	for k := range s.Endpoints {
		eps = append(eps, k)
	}
	sort.Strings(eps)
	for _, k := range eps {
		e := s.Endpoints[k]
		fmt.Fprintf(w, "  %-14s %3d artifacts %10s", k, e.Artifacts, format.Bytes(float64(e.Bytes)))
		if e.Errors > 0 {
			fmt.Fprintf(w, "  %d failed (last: %s)", e.Errors, e.LastError)
		}
		fmt.Fprintln(w)
	}
	if s.EBPF != nil {
		rate := float64(s.EBPF.Events) / max(d.Seconds(), 1e-3)
		fmt.Fprintf(w, "  ebpf           %d events (%.0f/s), %d dropped", s.EBPF.Events, rate, s.EBPF.Dropped)
		var kinds []string
		for k := range s.EBPF.ByKind {
			kinds = append(kinds, k)
		}
		sort.Strings(kinds)
		for i, k := range kinds {
			sep := ", "
			if i == 0 {
				sep = ": "
			}
			fmt.Fprintf(w, "%s%s %d", sep, k, s.EBPF.ByKind[k])
		}
		fmt.Fprintln(w)
	}
	for _, src := range s.Sources {
		line := fmt.Sprintf("  source %-7s %s", src.Kind, src.Status)
		if src.Detail != "" {
			line += ": " + src.Detail
		}
		fmt.Fprintln(w, line)
	}
	var tables []string
	for t, n := range s.Rows {
		tables = append(tables, fmt.Sprintf("%s %d", t, n))
	}
	sort.Strings(tables)
	fmt.Fprintf(w, "  rows: %s\n", strings.Join(tables, ", "))
}

// finishManifest records the end time and every source's final status.
func (c *capturer) finishManifest() {
	gone := ""
	if g := c.gone.Load(); g != nil {
		gone = *g
	}
	drift, pairs := c.clock.drift()
	c.mu.Lock()
	stats := map[string]sourceStats{}
	for k, v := range c.stats {
		stats[k] = *v
	}
	c.mu.Unlock()
	c.w.Update(func(m *bundle.Manifest) {
		m.End = time.Now()
		m.Clock.Detail += fmt.Sprintf("; %d pairs, offset drift %d ns over the capture", pairs, drift)
		for i := range m.Sources {
			s := &m.Sources[i]
			if s.Kind == bundle.SourceEBPF {
				continue // set by the eBPF source
			}
			if s.Counters == nil {
				s.Counters = map[string]int64{}
			}
			var good, bad int64
			var lastErr string
			for k, st := range stats {
				if sourceOfKey(k) != s.Kind {
					continue
				}
				s.Counters[k+"_artifacts"] = st.Artifacts
				s.Counters[k+"_bytes"] = st.Bytes
				if st.Errors > 0 {
					s.Counters[k+"_errors"] = st.Errors
					lastErr = st.LastError
				}
				good += st.Artifacts
				bad += st.Errors
			}
			if s.Kind == bundle.SourcePprof && c.leakGone.Load() {
				s.Settings["profiles"] = "goroutine,heap,allocs"
				s.Detail = "goroutineleak profile not served by the target runtime"
			}
			if s.Status != bundle.StatusRunning {
				continue
			}
			switch {
			case good == 0 && bad > 0:
				s.Status, s.Detail = bundle.StatusFailed, joinNote(s.Detail, "no artifact was usable; last error: "+lastErr)
				continue
			case bad > 0:
				s.Detail = joinNote(s.Detail, fmt.Sprintf("%d of %d artifacts failed; last error: %s", bad, good+bad, lastErr))
			}
			if gone != "" {
				s.Status = bundle.StatusTruncated
				s.Detail = strings.TrimPrefix(s.Detail+"; ", "; ") + "capture ended early: " + gone
			} else {
				s.Status = bundle.StatusComplete
			}
		}
		if c.ebpf != nil {
			c.ebpf.finish(m, gone)
		}
	})
}

func joinNote(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

// sourceOfKey maps a stats key (endpoint profile or kind) to its source.
func sourceOfKey(k string) string {
	switch k {
	case bundle.SourceDump, bundle.SourceTrace:
		return k
	}
	return bundle.SourcePprof
}

// summary builds the Summary from the closed bundle.
func (c *capturer) summary(reason string) Summary {
	m := c.w.Manifest()
	s := Summary{
		Bundle:    c.w.Dir(),
		Start:     m.Start,
		End:       m.End,
		Reason:    reason,
		Sources:   m.Sources,
		Rows:      c.w.Rows(),
		Artifacts: len(m.Artifacts),
		Endpoints: map[string]EndpointStats{},
	}
	for _, a := range m.Artifacts {
		s.RawBytes += a.Size
	}
	s.BundleBytes = bundle.DirSize(c.w.Dir())
	c.mu.Lock()
	for k, v := range c.stats {
		s.Endpoints[k] = EndpointStats(*v)
	}
	c.mu.Unlock()
	if c.ebpf != nil {
		st := c.ebpf.stats()
		s.EBPF = &st
	}
	return s
}
