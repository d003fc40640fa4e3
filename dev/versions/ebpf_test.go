package versions

import (
	"slices"
	"strings"
	"testing"

	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/ingest/schema"
)

// checkEBPF: as root the probes attached with the offsets the mode calls
// for, every goroutine creation and end of every trace window has its
// eBPF event (same child and parent goid, at a time consistent with the
// trace's), every GC cycle its start and end, and the target's allocation
// samples carry the allocating goroutine. Unprivileged, the source says
// why it is unavailable.
func checkEBPF(t *testing.T, c *captured, mc matrixCase) {
	s := c.source(bundle.SourceEBPF)
	if !isRoot() {
		if s.Status != bundle.StatusUnavailable || !strings.Contains(s.Detail, "not permitted") {
			t.Errorf("unprivileged: ebpf source %q %q, want unavailable, not permitted", s.Status, s.Detail)
		}
		return
	}
	if s.Status != bundle.StatusComplete || s.Counters["dropped"] != 0 {
		t.Fatalf("ebpf source %s (%s), counters %v", s.Status, s.Detail, s.Counters)
	}
	wantOffsets := "dwarf"
	if mc.mode == Stripped {
		wantOffsets = "table:" + Lang(mc.toolchain)
	}
	if !BuiltBy(s.Settings["go_version"], mc.toolchain) || s.Settings["offsets_source"] != wantOffsets || strings.Contains(s.Settings["notes"], "warning") {
		t.Errorf("ebpf settings %v, want %s with offsets from %s and no warning", s.Settings, mc.toolchain, wantOffsets)
	}
	ev := indexEBPF(c.ebpf)
	checkCreates(t, c, ev)
	checkExits(t, c, ev)
	checkGC(t, c, ev)
	checkAllocs(t, c, ev)
}

// ebpfIndex holds the eBPF events by kind.
type ebpfIndex struct {
	creates          map[int64]ebpfEvent // by child goid
	exits            map[int64]ebpfEvent // by goid
	gcStart, gcEnd   []int64             // monotonic times, sorted
	allocs           []ebpfEvent
	duplicateCreates int
}

func indexEBPF(events []ebpfEvent) ebpfIndex {
	ix := ebpfIndex{creates: map[int64]ebpfEvent{}, exits: map[int64]ebpfEvent{}}
	for _, e := range events {
		switch e.kind {
		case schema.EventGoCreate:
			if _, dup := ix.creates[e.goid]; dup {
				ix.duplicateCreates++
			}
			ix.creates[e.goid] = e
		case schema.EventGoExit:
			ix.exits[e.goid] = e
		case schema.EventGCStart:
			ix.gcStart = append(ix.gcStart, e.mono)
		case schema.EventGCEnd:
			ix.gcEnd = append(ix.gcEnd, e.mono)
		case schema.EventAlloc:
			ix.allocs = append(ix.allocs, e)
		}
	}
	slices.Sort(ix.gcStart)
	slices.Sort(ix.gcEnd)
	return ix
}

// checkCreates matches the trace's creations. Times are compared without
// any fixed tolerance: on CLOCK_MONOTONIC the probe at the end of
// newproc1 fires after the trace's GoCreate event (unless the reader moved
// that event, see traceTick) and before the next event on the same thread
// (each up to a trace clock tick); in wall time
// eBPF and trace may differ only by the spread of the clock mappings the
// bundle records (clock_sync pairs and the trace's own snapshots).
func checkCreates(t *testing.T, c *captured, ix ebpfIndex) {
	if ix.duplicateCreates > 0 {
		t.Errorf("%d goroutines created twice", ix.duplicateCreates)
	}
	traceRow := map[int64]traceG{}
	for _, g := range c.traceGs {
		if g.createdMono != 0 {
			traceRow[g.goid] = g
		}
	}
	spread := c.clockSpread()
	var matched, missing, wrongParent, outOfOrder, moved, wallChecked int
	var maxDelay, maxWallDiff int64
	for _, rt := range c.raw {
		for goid, rc := range rt.creates {
			e, ok := ix.creates[goid]
			switch {
			case !ok:
				missing++
				continue
			case e.parent != parentOf(rc):
				if wrongParent++; wrongParent <= 5 {
					t.Errorf("goroutine %d: ebpf parent %d, trace parent %d", goid, e.parent, rc.parent)
				}
				continue
			}
			matched++
			if rc.moved {
				moved++
			}
			if (!rc.moved && e.mono < rc.at-traceTick) || (rc.before != 0 && e.mono > rc.before+traceTick) {
				if outOfOrder++; outOfOrder <= 5 {
					t.Errorf("goroutine %d: go_create at mono %d, outside the trace's creation %d and the thread's next event %d", goid, e.mono, rc.at, rc.before)
				}
			}
			maxDelay = max(maxDelay, e.mono-rc.at)
			if g, ok := traceRow[goid]; ok && !rc.moved {
				// Each source's wall offset: what it added to its own
				// monotonic reading (a moved event's reference time is
				// not its own).
				wallChecked++
				maxWallDiff = max(maxWallDiff, abs((e.ts-e.mono)-(g.createdTS-rc.at)))
			}
		}
	}
	t.Logf("go_create: %d of the traces' creations matched on child and parent (%d missing, %d wrong parent), probe up to %d ns after the trace event (%d events moved by the reader); wall offsets of %d differ by up to %d ns, clock spread %d ns",
		matched, missing, wrongParent, maxDelay, moved, wallChecked, maxWallDiff, spread)
	if matched < 20 || missing > 0 || wrongParent > 0 || outOfOrder > 0 {
		t.Errorf("go_create: %d matched, %d missing, %d wrong parent, %d out of order", matched, missing, wrongParent, outOfOrder)
	}
	if wallChecked == 0 || maxWallDiff > spread {
		t.Errorf("eBPF and trace wall clocks of %d creations differ by up to %d ns, beyond the measured clock spread of %d ns", wallChecked, maxWallDiff, spread)
	}
}

// clockSpread is the widest disagreement between the bundle's clock
// mappings: the largest minus the smallest wall-minus-monotonic offset of
// its clock_sync pairs and of the raw traces' clock snapshots.
func (c *captured) clockSpread() int64 {
	var offs []int64
	for _, p := range c.clock {
		offs = append(offs, p.ts-p.mono)
	}
	for _, rt := range c.raw {
		offs = append(offs, rt.offsets...)
	}
	if len(offs) == 0 {
		return 0
	}
	return slices.Max(offs) - slices.Min(offs)
}

// checkExits matches the trace's goroutine ends: the probe in gdestroy
// fires before the next event the ending goroutine's thread writes.
func checkExits(t *testing.T, c *captured, ix ebpfIndex) {
	var matched, missing, late int
	for _, rt := range c.raw {
		for goid, end := range rt.ends {
			e, ok := ix.exits[goid]
			switch {
			case !ok:
				if missing++; missing <= 5 {
					t.Errorf("end of goroutine %d at %d has no go_exit", goid, end.at)
				}
			case end.before != 0 && e.mono > end.before+traceTick:
				if late++; late <= 5 {
					t.Errorf("goroutine %d: go_exit at %d, after its thread's next event at %d (end at %d)", goid, e.mono, end.before, end.at)
				}
			default:
				matched++
			}
		}
	}
	t.Logf("go_exit: %d of the traces' goroutine ends matched (%d missing, %d late); %d go_exit in all", matched, missing, late, len(ix.exits))
	if matched < 20 || missing > 0 || late > 0 {
		t.Errorf("go_exit: %d matched, %d missing, %d late", matched, missing, late)
	}
}

// checkGC: every mark phase the traces saw whole holds exactly one
// gc_start (startCycle runs after the trace's GCBegin) and one gc_end
// (gcMarkTermination's entry, before its GCDone).
func checkGC(t *testing.T, c *captured, ix ebpfIndex) {
	in := func(ts []int64, lo, hi int64) int {
		i, _ := slices.BinarySearch(ts, lo)
		j, _ := slices.BinarySearch(ts, hi+1)
		return j - i
	}
	cycles, unbounded := 0, 0
	for w, rt := range c.raw {
		for _, gc := range rt.gcs {
			cycles++
			if gc.after == 0 {
				unbounded++ // begin moved by the reader, no earlier bound
				continue
			}
			lo, hi := gc.after-traceTick, gc.end+traceTick
			if s, e := in(ix.gcStart, lo, hi), in(ix.gcEnd, lo, hi); s != 1 || e != 1 {
				t.Errorf("window %d: GC mark phase %d..%d (after %d) holds %d gc_start and %d gc_end, want 1 and 1", w, gc.begin, gc.end, gc.after, s, e)
			}
		}
	}
	t.Logf("GC: %d mark phases in the traces (%d without a lower bound), each with its gc_start and gc_end; %d gc_start and %d gc_end in all", cycles, unbounded, len(ix.gcStart), len(ix.gcEnd))
	if cycles < 2 {
		t.Errorf("traces saw %d GC cycles, want at least 2", cycles)
	}
}

// checkAllocs: allocation samples in main.churn come through
// profilealloc and mallocgc, with the 64 KiB size and churn's goroutine.
func checkAllocs(t *testing.T, c *captured, ix ebpfIndex) {
	churn := c.goidOf(churnFn)
	n := 0
	for _, e := range ix.allocs {
		if !has(e.stack, churnFn) || e.goid == 0 || mallocs(e.stack) > 1 {
			// goid 0: the runtime allocating on the system stack while
			// churn ran (a new M's profiling stack), not churn's own;
			// two mallocgc frames: the runtime allocating for itself
			// inside churn's allocation (a new M when that allocation
			// starts a GC).
			continue
		}
		n++
		if e.goid != churn || e.size < 64<<10 || e.size > 72<<10 ||
			e.stack[0] != "runtime.profilealloc" || !slices.ContainsFunc(e.stack, func(f string) bool { return strings.HasPrefix(f, "runtime.mallocgc") }) {
			t.Errorf("alloc sample %+v, want goroutine %d, 64 KiB, through profilealloc and mallocgc", e, churn)
			break
		}
	}
	t.Logf("alloc: %d samples in all, %d in %s (goroutine %d)", len(ix.allocs), n, churnFn, churn)
	if n < 5 {
		t.Errorf("%d allocation samples in %s, want at least 5", n, churnFn)
	}
}

// mallocs counts the runtime.mallocgc frames of a stack (its per-size
// helpers, mallocgcLarge and the like, not counted: each allocation
// passes through mallocgc itself once).
func mallocs(stack []string) int {
	n := 0
	for _, f := range stack {
		if f == "runtime.mallocgc" {
			n++
		}
	}
	return n
}
