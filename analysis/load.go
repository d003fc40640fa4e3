package analysis

import (
	"fmt"

	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/leakscope/leakscope/ingest/bundle"
)

// loaded is the first stage's result: every table the analysis uses,
// read once and folded into one population of goroutine sites, stacks,
// profile series and spans.
type loaded struct {
	b       *bundle.Bundle
	st      *stackTable
	d       *dumpData
	prof    *profileData
	metrics map[string][]Point
	pop     *population
	tg      map[int64]*traceG
	spans   []*spanRec
	ix      *spanIndex
	tgroups map[traceKey]*traceGroup

	// sites are the goroutine groups, from the richest source the bundle
	// has (dumps, else goroutine profiles, else trace windows), with
	// their counts laid on the snapshot times ts.
	sites []*site
	ts    []int64
	// leaks is the last goroutineleak profile's count per location;
	// leakTotal its sum (nil, 0 without such a profile).
	leaks     map[Frame]int64
	leakTotal int64

	races    []Race
	warnings []string
}

// load reads the bundle's tables and builds the goroutine sites; userCode
// are the user's own code prefixes (see [Options.UserCode]).
func load(b *bundle.Bundle, mem memory.Allocator, userCode []string) (*loaded, error) {
	in := &loaded{b: b, warnings: []string{}}
	if err := in.readTables(mem, userCode); err != nil {
		return nil, err
	}
	in.buildSites()
	in.leaks, in.leakTotal = leakSites(in.prof, in.st)
	return in, nil
}

// readTables reads stacks, dumps, profile samples, metrics, the goroutine
// population (dumps, traces, eBPF) and spans.
func (in *loaded) readTables(mem memory.Allocator, userCode []string) error {
	var err error
	b := in.b
	if in.st, err = loadStacks(b, mem, userCode); err != nil {
		return err
	}
	if in.d, err = readDumps(b, mem, false); err != nil {
		return err
	}
	if in.d.partial != nil {
		in.warnings = append(in.warnings, fmt.Sprintf("goroutines table truncated: %v", in.d.partial))
	}
	if in.prof, err = readSamples(b, mem); err != nil {
		return err
	}
	if in.metrics, err = readMetrics(b, mem); err != nil {
		return err
	}
	if in.pop, in.tg, err = loadPopulation(b, mem, in.st, in.d); err != nil {
		return err
	}
	if in.spans, err = readSpans(b, mem); err != nil {
		return err
	}
	if in.races, err = readRaces(b, mem, in.st); err != nil {
		return err
	}
	in.ix = newSpanIndex(in.spans, b.Manifest.End.UnixNano())
	in.tgroups = traceGroups(in.tg, in.st)
	return nil
}

// buildSites picks the goroutine sites from the richest source available
// and says so when it is not the dumps.
func (in *loaded) buildSites() {
	switch {
	case in.d.rows > 0:
		in.sites, in.ts = buildSites(in.d, in.st), in.d.snapshots
	case len(in.prof.gorTS) > 0:
		in.sites, in.ts = sitesFromProfile(in.prof, in.st), in.prof.gorTS
		in.warnings = append(in.warnings, "no goroutine dumps: groups come from goroutine profile counts, without wait times or creators")
	case len(in.tgroups) > 0:
		in.sites, in.ts = sitesFromTrace(in.tgroups, in.st)
		in.warnings = append(in.warnings, "no goroutine dumps or profiles: groups come from goroutines alive at the end of the trace")
	}
	if len(in.ts) == 1 {
		in.warnings = append(in.warnings, "only one goroutine snapshot: growth cannot be measured, only long waits and the runtime's leak marks")
	}
}
