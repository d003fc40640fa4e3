package gotrace

import (
	"maps"
	"slices"

	"github.com/apache/arrow/go/v15/arrow/memory"
	"golang.org/x/exp/trace"

	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/ingest/schema"
)

// handler merges the generations, in order, into rows. It runs on one
// goroutine and keeps only live state: goroutines that exist (and cgo
// callback goroutines between two callbacks), open tasks and regions, and
// the stacks seen so far.
type handler struct {
	w            *bundle.Writer
	source       string // the raw trace's name in the bundle
	metricSource string // the metrics' source column
	opts         Options
	clk          clock
	stacks       *stackCache

	live      *liveTable
	dormant   map[int64]*gor     // cgo callback goroutines between callbacks
	free      []*gor             // ended goroutines, for reuse
	tasks     *pagedTable[*task] // open tasks by id
	freeTasks []*task            // ended tasks, for reuse

	spanBase int64
	nextSpan int64

	metrics metricState

	gcols   *goroutineCols
	scols   *spanCols
	sink    *sink
	pending []schema.Row

	genIDs []int64 // local stack id of each stack index of the generation being merged
	steps  stepReader

	syncs   int64
	records int64
	rows    map[string]int64
	first   int64 // trace time of the first sync
	last    int64 // trace time of the last record
	err     error
}

// gor is a live goroutine.
type gor struct {
	parent        int64
	createdWall   int64
	creationStack int64
	startFunc     string
	state         trace.GoState
	reason        string
	lastStack     int64
	endWall       int64    // wall time of the end of a dormant cgo goroutine
	regions       []region // open regions, innermost last
}

// colBatchRows is the most trace_goroutines rows buffered before a batch
// is written (see flushCols). Arrow's IPC writer compresses each column
// into a buffer as large as it, so a batch's memory counts about twice.
const colBatchRows = 16 * 1024

func newHandler(w *bundle.Writer, mem memory.Allocator, source string, opts Options, window int64) *handler {
	metric := source
	if metric == "" {
		metric = bundle.SourceTrace
	}
	return &handler{
		gcols:        newGoroutineCols(mem),
		scols:        newSpanCols(mem),
		sink:         newSink(w),
		w:            w,
		source:       source,
		metricSource: metric,
		opts:         opts,
		stacks:       newStackCache(),
		live:         newLiveTable(),
		dormant:      make(map[int64]*gor),
		tasks:        newPagedTable[*task](taskPageBits),
		spanBase:     (window + 1) << spanWindowShift,
		rows:         make(map[string]int64),
	}
}

// append queues a row of a low-volume table (spans, metrics, clock_sync)
// for the sink goroutine, so that this one never waits for the bundle
// writer's lock.
func (h *handler) append(r schema.Row) {
	h.pending = append(h.pending, r)
	h.rows[r.Table()]++
	if len(h.pending) >= pendingRows {
		h.flushPending()
	}
}

// appendSpan adds a row to the spans batch.
func (h *handler) appendSpan(s *schema.Span) {
	h.scols.append(s)
	if h.scols.len() >= spanBatchRows || len(h.scols.cur.msgData) >= spanBatchText {
		h.flushCols(false)
	}
}

// pendingRows is how many low-volume rows are handed over at once.
const pendingRows = 64 * 1024

func (h *handler) flushPending() {
	if len(h.pending) > 0 {
		h.sink.append(h.pending)
		h.pending = make([]schema.Row, 0, pendingRows)
	}
}

// spanBatchRows is the most spans buffered before a batch is written, and
// spanBatchText the most log text (which the program writes, of any
// length; a batch's string offsets are 32-bit).
const (
	spanBatchRows = 16 * 1024
	spanBatchText = 16 << 20
)

// flushCols hands each table's buffered rows to the sink once they fill a
// batch, or all of them when force is set. There is no time limit: a
// trace is ingested in seconds, and a batch costs its compressor's set-up
// (see bundle's tableCodec).
func (h *handler) flushCols(force bool) {
	if n := h.gcols.len(); n > 0 && (force || n >= colBatchRows) && h.err == nil {
		rec, b, err := h.gcols.record()
		if err != nil {
			h.err = err
			return
		}
		h.rows[schema.TableTraceGoroutines] += int64(n)
		h.sink.write(schema.TableTraceGoroutines, rec, func() { h.gcols.recycle(b) }, h.stacks.takeFresh())
	}
	if n := h.scols.len(); n > 0 && (force || n >= spanBatchRows || len(h.scols.cur.msgData) >= spanBatchText) && h.err == nil {
		rec, b, err := h.scols.record()
		if err != nil {
			h.err = err
			return
		}
		h.rows[schema.TableSpans] += int64(n)
		h.sink.write(schema.TableSpans, rec, func() { h.scols.recycle(b) }, nil)
	}
	if force {
		if fresh := h.stacks.takeFresh(); len(fresh) > 0 && h.err == nil {
			h.sink.intern(fresh)
		}
		h.flushPending()
	}
	if h.sink.failed.Load() && h.err == nil {
		h.err = h.sink.err
	}
}

// close writes the last batches and stops the sink.
func (h *handler) close() {
	h.flushCols(true)
	if err := h.sink.close(); err != nil && h.err == nil {
		h.err = err
	}
	h.gcols.release()
	h.scols.release()
}

// handle processes one record.
func (h *handler) handle(r *rec) {
	switch r.kind {
	case recSync:
		h.sync(r)
	case recTaskBegin:
		h.taskBegin(r)
	case recTaskEnd:
		h.taskEnd(r)
	case recRegionBegin:
		h.regionBegin(r)
	case recRegionEnd:
		h.regionEnd(r)
	case recLog:
		h.log(r)
	case recMetric:
		h.metric(r)
	case recRangeBegin:
		h.rangeBegin(r)
	case recRangeEnd:
		h.rangeEnd(r)
	}
}

// sync starts a generation (or ends the trace): it refreshes the clock
// mapping and drops the previous generation's stack handles.
func (h *handler) sync(r *rec) {
	h.syncs++
	if h.syncs == 1 {
		h.first = r.ts
	}
	if h.syncs == 2 {
		// Every goroutine alive has now reported its status.
		h.metrics.emitGoroutines(h, r.ts, true)
	}
	if r.hasSnap && !h.opts.ignoreSnapshots {
		h.clk.setSnapshot(r.snap)
		h.append(schema.ClockSync{MonoNS: int64(r.snap.Mono), TS: r.snap.Wall.UnixNano(), Source: bundle.SourceTrace})
		return
	}
}

// fallbackClock chooses, once, how to place a trace without clock
// snapshots on the timeline. It is called at the first event, not at the
// first sync, so that a trace cut inside its first generation (which ends
// in a lone sync) records no clock method.
func (h *handler) fallbackClock() {
	if h.clk.set {
		return
	}
	h.clk.set = true
	switch {
	case h.opts.WallOffsetNS != 0:
		h.clk.method = ClockOffset
		h.clk.offset = h.opts.WallOffsetNS
	case h.opts.anchorEnd != 0:
		h.clk.method = ClockAnchoredEnd
		h.clk.offset = unixNanos(h.opts.Now) - h.opts.anchorEnd
	default:
		h.clk.method = ClockAnchoredStart
		h.clk.offset = unixNanos(h.opts.Now) - h.first
	}
}

// startGen prepares the merge of a generation.
func (h *handler) startGen() {
	h.genIDs = append(h.genIDs[:0], 0)
}

// mergePart applies a run of a generation's steps: the lives of its
// goroutines and its notes, in trace order.
func (h *handler) mergePart(p *part) {
	h.genIDs = h.stacks.resolve(h.genIDs, p.stacks)
	r := &h.steps
	r.reset(p)
	for {
		switch r.next() {
		case 0:
			return
		case stepStart:
			h.fallbackClock()
			h.startLife(&r.start)
		case stepEnd:
			h.endLife(&r.end)
		case stepNote:
			if r.note.kind != recSync {
				h.fallbackClock()
			}
			h.handle(&r.note)
		}
	}
}

// endGen finishes the merge of generation c: its index row.
func (h *handler) endGen(c *chunk) {
	sum := &c.sum
	h.records += sum.events
	h.last = max(h.last, sum.last)
	h.append(schema.TraceGeneration{
		Source: h.source, Generation: int64(c.gen), Offset: c.off, Length: c.end - c.off,
		StartTS: h.clk.wall(sum.first), EndTS: h.clk.wall(max(sum.last, sum.first)),
		WallOffsetNS: h.clk.wall(0), MonoOffsetNS: h.clk.mono(0),
		Events: sum.events, Goroutines: sum.lives,
	})
	h.flushCols(false)
}

// startLife brings in a goroutine at its first event of a generation. A
// goroutine already known from an earlier generation is left as it is
// (its status at the generation's start repeats what was known), a cgo
// callback goroutine whose id comes back is revived, and a new one is
// added.
func (h *handler) startLife(s *lifeStart) {
	if h.live.get(s.goid) != nil {
		return
	}
	created := s.flags&lifeCreated != 0
	if created {
		h.metrics.goroutinesChanged(h, s.ts)
	}
	if g := h.dormant[s.goid]; g != nil && created {
		delete(h.dormant, s.goid)
		g.endWall = 0
		g.state = s.firstTo
		if s.firstStack != 0 {
			g.lastStack = h.genIDs[s.firstStack]
		}
		h.live.put(s.goid, g)
		return
	}
	g := h.newGor()
	g.startFunc, g.lastStack, g.state = h.root(s.firstStack), h.genIDs[s.firstStack], s.firstTo
	if created {
		g.parent = s.parent
		g.createdWall = h.clk.wall(s.ts)
		g.creationStack = h.genIDs[s.creationStack]
	}
	h.live.put(s.goid, g)
}

// root returns the outermost function of the generation's stack i.
func (h *handler) root(i int32) string {
	if i == 0 {
		return ""
	}
	return h.stacks.roots[h.genIDs[i]]
}

// endLife applies the events of a goroutine's life after its first, and
// ends it if it ended. A cgo callback's goroutine (ended in a syscall)
// waits, dormant, in case its id comes back with the next callback: the
// runtime reuses it, and the window then still has one row for it.
func (h *handler) endLife(e *lifeEnd) {
	g := h.live.get(e.goid)
	if g == nil {
		return
	}
	if e.stack != 0 {
		g.lastStack = h.genIDs[e.stack]
	}
	if g.startFunc == "" && e.rootStack != 0 {
		g.startFunc = h.root(e.rootStack)
	}
	if e.flags&lifeState != 0 {
		g.state = e.state
	}
	if e.flags&lifeReason != 0 {
		g.reason = e.reason
	}
	switch {
	case e.flags&lifeEnded == 0:
	case e.flags&lifeEndSyscall != 0:
		g.endWall = h.clk.wall(e.ts)
		h.closeRegions(g)
		h.live.remove(e.goid)
		h.dormant[e.goid] = g
		h.metrics.goroutinesChanged(h, e.ts)
	default:
		h.endGoroutine(e.goid, g, e.ts)
	}
}

// endGoroutine writes the row of a goroutine that ended at trace time ts
// (or, with ts 0, is still alive at the end of the trace) and forgets it.
func (h *handler) endGoroutine(goid int64, g *gor, ts int64) {
	if ts != 0 {
		h.writeGoroutine(goid, g, h.clk.wall(ts))
	} else {
		h.writeGoroutine(goid, g, 0)
	}
	h.closeRegions(g)
	h.live.remove(goid)
	if ts != 0 {
		h.metrics.goroutinesChanged(h, ts)
	}
	h.free = append(h.free, g)
}

// newGor returns a zeroed goroutine, reusing one that ended: a busy trace
// creates millions, few of them alive at once.
func (h *handler) newGor() *gor {
	n := len(h.free)
	if n == 0 {
		return &gor{}
	}
	g := h.free[n-1]
	h.free = h.free[:n-1]
	*g = gor{regions: g.regions[:0]}
	return g
}

// writeGoroutine adds g's row; end is its wall time of end (0: alive).
func (h *handler) writeGoroutine(goid int64, g *gor, end int64) {
	h.gcols.appendRow(goid, g, end)
	if h.gcols.len() >= colBatchRows {
		h.flushCols(false)
	}
}

// closeRegions writes the regions still open on g, which ended, with no
// end time.
func (h *handler) closeRegions(g *gor) {
	for i := len(g.regions) - 1; i >= 0; i-- {
		h.writeRegion(&g.regions[i], 0)
	}
	g.regions = g.regions[:0]
}

// finish writes what is still open at the end of the trace: live
// goroutines (no end time), open regions and tasks (no end time).
func (h *handler) finish() {
	if h.clk.set {
		h.metrics.emitGoroutines(h, h.last, true)
	}
	h.live.each(func(goid int64, g *gor) { h.endGoroutine(goid, g, 0) })
	for _, goid := range slices.Sorted(maps.Keys(h.dormant)) {
		g := h.dormant[goid]
		h.writeGoroutine(goid, g, g.endWall)
	}
	var open []uint64
	h.tasks.each(func(id int64, _ *task) { open = append(open, uint64(id)) })
	slices.Sort(open)
	for _, id := range open {
		h.writeTask(id, h.tasks.get(int64(id)), 0)
	}
	h.close()
}
