package analysis

import (
	"fmt"
	"strings"
	"time"

	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/leakscope/leakscope/analysis/internal/tables"
	"github.com/leakscope/leakscope/ingest/bundle"
)

// loaded is the first stage's result: every table the analysis uses,
// read once and folded into one population of goroutine sites, stacks,
// profile series and spans.
type loaded struct {
	b       *bundle.Bundle
	st      *stackTable
	d       *dumpData
	prof    *tables.ProfileData
	metrics map[string][]Point
	// metricWindows are the trace windows the metric series were
	// sampled in (by the metrics table's sources).
	metricWindows []Window
	pop           *population
	tg            map[int64]*tables.TraceG
	spans         []*tables.SpanRec
	ix            *spanIndex
	tgroups       map[traceKey]*traceGroup

	// sites are the goroutine groups, from the richest source the bundle
	// has (dumps, else goroutine profiles, else trace windows), with
	// their counts laid on the snapshot times ts.
	sites []*site
	ts    []int64
	// hist is the agent's history before the first dump (see addHistory).
	hist history
	// leaks is the last goroutineleak profile's count per location;
	// leakTotal its sum (nil, 0 without such a profile).
	leaks     map[Frame]int64
	leakTotal int64
	// src is the source code kept in the bundle; periods the heap
	// profiles' sampling periods by snapshot time.
	src     *sourceCode
	periods map[int64]int64
	// windows are the times the trace windows cover.
	windows []window
	inputs  *InputSummary
	// detail is the latest dump snapshot goroutine by goroutine (nil
	// without dumps).
	detail *snapDetail

	races    []Race
	warnings []string
	// lib reads library source for the attribution (see libSource).
	lib *libSource
	// prog is the program as Go: the bundle's files and the libraries'
	// source, read with types when the wait-for reasoning first asks.
	prog *programSource
}

// load reads the bundle's tables and builds the goroutine sites; userCode
// are the user's own code prefixes (see [Options.UserCode]).
func load(b *bundle.Bundle, mem memory.Allocator, userCode []string, source extraSource, bg *budget) (*loaded, error) {
	in := &loaded{b: b, warnings: []string{}}
	if err := in.readTables(mem, userCode, source, bg); err != nil {
		return nil, err
	}
	in.warnings = append(in.warnings, timeWarnings(b.Manifest)...)
	in.buildSites()
	in.leaks, in.leakTotal = leakSites(in.prof, in.st)
	if in.d.rows > 0 {
		if err := bg.check("load"); err != nil {
			return nil, err
		}
		var err error
		if in.detail, err = readDetail(b, mem, in.d, in.st, in.sites); err != nil {
			return nil, err
		}
		in.detail.allAsleep = allAsleepCrash(b.Manifest, in.detail.ts)
		if in.detail.truncated {
			in.warnings = append(in.warnings, fmt.Sprintf("the latest snapshot has more than %d goroutines: wait-for reasoning (lock cycles, unreachable waits) skipped", maxDetail))
		}
	}
	in.inputs = inputSummary(in)
	return in, nil
}

// readTables reads stacks, dumps, profile samples, metrics, the goroutine
// population (dumps, traces, eBPF) and spans.
func (in *loaded) readTables(mem memory.Allocator, userCode []string, source extraSource, bg *budget) error {
	b := in.b
	steps := []func() error{
		func() (err error) { in.st, err = loadStacks(b, mem, userCode); return err },
		func() (err error) {
			if in.d, err = readDumps(b, mem, false); err != nil {
				return err
			}
			in.warnings = append(in.warnings, cutWarnings(b.Manifest, in.d.cut)...)
			if in.d.partial != nil {
				in.warnings = append(in.warnings, fmt.Sprintf("goroutines table truncated: %v", in.d.partial))
			}
			return nil
		},
		func() (err error) { in.prof, err = tables.ReadSamples(b, mem); return err },
		func() (err error) { in.metrics, in.metricWindows, err = readMetrics(b, mem); return err },
		func() (err error) { in.pop, in.tg, err = loadPopulation(b, mem, in.st, in.d); return err },
		func() (err error) { in.spans, err = tables.ReadSpans(b, mem); return err },
		func() (err error) { in.races, err = readRaces(b, mem, in.st); return err },
		func() (err error) { in.src, err = readSourceCode(b, mem, source); return err },
	}
	for _, step := range steps {
		if err := bg.check("load"); err != nil {
			return err
		}
		if err := step(); err != nil {
			return err
		}
	}
	files, err := readSourceFiles(b, mem)
	if err != nil {
		return err
	}
	in.prog = newProgramSource(append(files, source.files...), in.st, b.Manifest.Target.GoVersion)
	in.periods = tables.HeapPeriods(b.Manifest)
	in.ix = newSpanIndex(in.spans, b.Manifest.End.UnixNano())
	in.tgroups = traceGroups(in.tg, in.st)
	in.windows = traceWindows(b.Manifest, in.tg)
	return nil
}

// buildSites picks the goroutine sites from the richest source available
// and says so when it is not the dumps.
func (in *loaded) buildSites() {
	switch {
	case in.d.rows > 0:
		in.sites, in.ts = buildSites(in.d, in.st), in.d.snapshots
		in.addHistory()
	case len(in.prof.GorTS) > 0:
		in.sites, in.ts = sitesFromProfile(in.prof.Goroutine, in.prof.GorTS, in.st), in.prof.GorTS
		in.warnings = append(in.warnings, "no goroutine dumps: groups come from goroutine profile counts, without wait times or creators")
	case len(in.prof.LeakTS) > 0:
		in.sites, in.ts = sitesFromProfile(in.prof.Leak, in.prof.LeakTS, in.st), in.prof.LeakTS
		in.warnings = append(in.warnings, "only the goroutineleak profile: groups are the goroutines it marked leaked, without wait times, creators or the goroutines it did not mark")
	case len(in.tgroups) > 0:
		in.sites, in.ts = sitesFromTrace(in.tgroups, in.st)
		in.warnings = append(in.warnings, "no goroutine dumps or profiles: groups come from goroutines alive at the end of the trace")
	}
	if len(in.ts) == 1 && !in.historyUsed() {
		in.warnings = append(in.warnings, "only one goroutine snapshot: growth cannot be measured, only long waits and the runtime's leak marks")
	}
}

// cutWarnings names the dumps that were cut short: those left out of the
// snapshots (cut, see cutDumps), or, when every dump was cut, that the
// counts are lower bounds.
func cutWarnings(m bundle.Manifest, cut map[int64]*bundle.Artifact) []string {
	var out, kept []string
	for _, a := range m.Artifacts {
		if a.Kind != bundle.SourceDump || a.Status != bundle.StatusTruncated {
			continue
		}
		what := fmt.Sprintf("%s at %s (%s)", a.Name, clockTime(a.Time), a.Detail)
		if cut[a.Time.UnixNano()] != nil {
			out = append(out, fmt.Sprintf("dump %s was cut short: it lists only the goroutines before the cut, so it is left out of counts and growth fits, which use the whole dumps", what))
		} else {
			kept = append(kept, what)
		}
	}
	if len(kept) > 0 {
		out = append(out, fmt.Sprintf("every dump was cut short (%s): counts are lower bounds, and a fall between snapshots may be the cut", strings.Join(kept, "; ")))
	}
	return out
}

// timeWarnings says when snapshot times are not real: files that shared a
// time and were put in argument order, or several dumps timed only by
// their files' modification times.
func timeWarnings(m bundle.Manifest) []string {
	var order, mtime []string
	for _, a := range m.Artifacts {
		switch {
		case a.TimeBasis == bundle.TimeOrder:
			order = append(order, a.Name)
		case a.TimeBasis == bundle.TimeMtime && (a.Kind == bundle.SourceDump || a.Kind == bundle.SourcePprof):
			mtime = append(mtime, a.Name)
		}
	}
	var out []string
	if len(order) > 0 {
		out = append(out, fmt.Sprintf("%d snapshots have no real time (%s): they shared a time with another file and were placed after it in argument order, so rates across them are not real; ingest them again with --at", len(order), strings.Join(order, ", ")))
	}
	if len(mtime) > 1 {
		out = append(out, fmt.Sprintf("the times of %d snapshots come from their files' modification times, which a copy or a checkout changes; give real times with ingest --at", len(mtime)))
	}
	return out
}

// config is [Options] with the defaults filled in.
type config struct {
	rules    []Rule
	minScore float64
	maxGoids int
	now      time.Time
	userCode []string
	timeout  time.Duration
	maxHeap  int64
}

// CaptureStart is when the capture itself began: its first artifact that
// is not the node agent's history ([bundle.RoleHistory]), the manifest's
// start for a bundle without history (whose start is its earliest data,
// the history's when it has one), and its end for a bundle of history
// alone. Every view that says when a capture began says this.
func CaptureStart(m bundle.Manifest) time.Time {
	var own time.Time
	history := false
	for _, a := range m.Artifacts {
		if a.Time.IsZero() {
			continue
		}
		if a.Role == bundle.RoleHistory {
			history = true
			continue
		}
		if own.IsZero() || a.Time.Before(own) {
			own = a.Time
		}
	}
	switch {
	case !history:
		return m.Start
	case own.IsZero():
		return m.End
	}
	return own
}

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
