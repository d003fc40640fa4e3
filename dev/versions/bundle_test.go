package versions

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/leakscope/leakscope/dev/bundletest"
	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/ingest/schema"
)

// captured is what the matrix checks read out of one capture bundle.
type captured struct {
	dir      string
	b        *bundle.Bundle
	m        bundle.Manifest
	dumps    []dumpSnap // by snapshot time, of complete dump artifacts
	cutDumps int        // rows of dumps cut short
	samples  []sample
	traceGs  []traceG
	ebpf     []ebpfEvent
	clock    []clockRow
	raw      []*rawTrace // one per trace window, in capture order
}

type dumpSnap struct {
	ts int64
	gs []dumpG
}

type dumpG struct {
	goid, creatorGoid int64
	state, creator    string
	stack             []string // functions, leaf first
}

type sample struct {
	ts                 int64
	profile            string
	stack              []string
	count, allocObject int64
}

type traceG struct {
	goid, parent           int64
	createdTS, createdMono int64
	endedTS, endedMono     int64
	// createdSlack bounds createdMono's error: the creation's wall time
	// lies where two generations' mappings overlap (bundletest.TraceMono).
	createdSlack int64
}

type ebpfEvent struct {
	ts, mono     int64
	kind         string
	goid, parent int64
	size         int64
	stack        []string
}

type clockRow struct {
	mono, ts int64
	source   string
}

// row reads columns of one record by name.
type row struct {
	rec arrow.Record
	i   int
}

func (r row) col(name string) arrow.Array {
	idx := r.rec.Schema().FieldIndices(name)
	if len(idx) == 0 {
		panic("no column " + name)
	}
	return r.rec.Column(idx[0])
}

func (r row) int(name string) int64 {
	switch c := r.col(name).(type) {
	case *array.Int64:
		if !c.IsNull(r.i) {
			return c.Value(r.i)
		}
	case *array.Timestamp:
		if !c.IsNull(r.i) {
			return int64(c.Value(r.i))
		}
	}
	return 0
}

func (r row) str(name string) string { return bundle.NewStrings(r.col(name)).Value(r.i) }

// readCapture opens the bundle at dir and reads every table the checks
// use, and every raw trace window.
func readCapture(t *testing.T, dir string) *captured {
	t.Helper()
	b, err := bundle.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	c := &captured{dir: dir, b: b, m: b.Manifest}
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	tr := captureTables{t: t, b: b, mem: mem, stacks: bundletest.StackFunctions(t, b, mem)}
	c.readDumps(tr)
	tr.each(schema.TableSamples, func(r row) {
		c.samples = append(c.samples, sample{ts: r.int(schema.ColSnapshotTS), profile: r.str(schema.ColProfile),
			stack: tr.stacks[r.int(schema.ColStackID)], count: r.int(schema.ColCount), allocObject: r.int(schema.ColAllocObjects)})
	})
	c.readTraceGoroutines(tr)
	tr.each(schema.TableEBPFEvents, func(r row) {
		c.ebpf = append(c.ebpf, ebpfEvent{ts: r.int(schema.ColTS), mono: r.int(schema.ColMonoNS), kind: r.str(schema.ColKind),
			goid: r.int(schema.ColGoid), parent: r.int(schema.ColParentGoid), size: r.int(schema.ColSize), stack: tr.stacks[r.int(schema.ColStackID)]})
	})
	tr.each(schema.TableClockSync, func(r row) {
		c.clock = append(c.clock, clockRow{mono: r.int(schema.ColMonoNS), ts: r.int(schema.ColTS), source: r.str(schema.ColSource)})
	})
	for _, a := range c.m.Artifacts {
		if a.Kind != bundle.SourceTrace {
			continue
		}
		rt, err := readRawTrace(filepath.Join(dir, a.Name))
		if err != nil {
			t.Fatal(err)
		}
		c.raw = append(c.raw, rt)
	}
	return c
}

// captureTables reads the tables of one captured bundle for readCapture.
type captureTables struct {
	t      *testing.T
	b      *bundle.Bundle
	mem    memory.Allocator
	stacks map[int64][]string // stack id -> function names, leaf first
}

// each calls fn with every row of table, failing the test if it cannot be
// read.
func (tr captureTables) each(table string, fn func(r row)) {
	tr.t.Helper()
	err := tr.b.ReadTable(table, tr.mem, func(rec arrow.Record) error {
		for i := range int(rec.NumRows()) {
			fn(row{rec, i})
		}
		return nil
	})
	if err != nil {
		tr.t.Fatalf("read %s: %v", table, err)
	}
}

// readDumps reads the goroutines table into c.dumps, one per snapshot in
// time order. A dump in flight when the capture ends is cut short (and
// marked so): its rows are only counted, in c.cutDumps, and the checks use
// the complete ones.
func (c *captured) readDumps(tr captureTables) {
	complete := map[string]bool{}
	for _, a := range c.m.Artifacts {
		complete[a.Name] = a.Status == bundle.StatusComplete
	}
	byTS := map[int64]*dumpSnap{}
	tr.each(schema.TableGoroutines, func(r row) {
		if !complete[r.str(schema.ColSource)] {
			c.cutDumps++
			return
		}
		ts := r.int(schema.ColSnapshotTS)
		s := byTS[ts]
		if s == nil {
			s = &dumpSnap{ts: ts}
			byTS[ts] = s
		}
		s.gs = append(s.gs, dumpG{goid: r.int(schema.ColGoid), creatorGoid: r.int(schema.ColCreatorGoid),
			state: r.str(schema.ColState), creator: r.str(schema.ColCreatorFunction), stack: tr.stacks[r.int(schema.ColStackID)]})
	})
	for _, s := range byTS {
		c.dumps = append(c.dumps, *s)
	}
	slices.SortFunc(c.dumps, func(a, b dumpSnap) int { return int(a.ts - b.ts) })
}

// readTraceGoroutines reads the trace goroutines table into c.traceGs,
// with monotonic times: the wall times less their generation's offsets.
func (c *captured) readTraceGoroutines(tr captureTables) {
	mono := bundletest.TraceMono(tr.t, tr.b, tr.mem)
	monoOf := func(wall int64) (int64, int64) {
		if m, slack, ok := mono(wall); ok && wall != 0 {
			return m, slack
		}
		return 0, 0
	}
	tr.each(schema.TableTraceGoroutines, func(r row) {
		g := traceG{goid: r.int(schema.ColGoid), parent: r.int(schema.ColParentGoid),
			createdTS: r.int(schema.ColCreatedTS), endedTS: r.int(schema.ColEndedTS)}
		g.createdMono, g.createdSlack = monoOf(g.createdTS)
		g.endedMono, _ = monoOf(g.endedTS)
		c.traceGs = append(c.traceGs, g)
	})
}

// has reports whether a stack holds the function name.
func has(stack []string, name string) bool { return slices.Contains(stack, name) }

// source returns the manifest's source of kind.
func (c *captured) source(kind string) bundle.Source {
	for _, s := range c.m.Sources {
		if s.Kind == kind {
			return s
		}
	}
	return bundle.Source{}
}

// goidOf returns the goid of the goroutine running fn in the last dump.
func (c *captured) goidOf(fn string) int64 {
	if len(c.dumps) == 0 {
		return 0
	}
	for _, g := range c.dumps[len(c.dumps)-1].gs {
		if has(g.stack, fn) {
			return g.goid
		}
	}
	return 0
}

// leaked reports whether a dump state carries the runtime's leak mark.
func leaked(state string) bool { return strings.Contains(state, "(leaked)") }
