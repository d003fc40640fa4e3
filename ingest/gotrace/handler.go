package gotrace

import (
	"time"

	"github.com/apache/arrow/go/v15/arrow/memory"
	"golang.org/x/exp/trace"

	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/ingest/schema"
)

// handler turns decoded records into rows. It runs on one goroutine and
// keeps only live state: goroutines that exist, open tasks and regions,
// and the current generation's stack cache.
type handler struct {
	w      *bundle.Writer
	source string
	opts   Options
	clk    clock
	stacks *stackCache

	live  *liveTable
	tasks map[uint64]*task

	spanBase int64
	nextSpan int64

	metrics metricState

	trans     *transitionCols
	gcols     *goroutineCols
	scols     *spanCols
	sink      *sink
	lastFlush time.Time
	pending   []schema.Row

	syncs   int64
	records int64
	rows    map[string]int64
	first   int64 // trace time of the first sync
	last    int64 // trace time of the last record
	err     error

	tmp rec // the state transition being handled (see pump)
}

// gor is a live goroutine.
type gor struct {
	parent        int64
	createdWall   int64
	createdMono   int64
	creationStack int64
	startFunc     string
	state         trace.GoState
	reason        string
	lastStack     int64
	// lastHandle is the trace stack lastStack came from (of the current
	// generation, cleared at each sync): a goroutine often blocks where
	// it blocked before, and comparing handles is cheaper than looking
	// one up.
	lastHandle trace.Stack
	regions    []*region
}

// colBatchRows is the most rows the column-built tables buffer before a
// batch is written; a batch is also written at least every FlushInterval.
// Batches are large because arrow's IPC writer sets up a new zstd encoder
// (with its multi-megabyte history) for every batch it compresses.
const colBatchRows = 256 * 1024

func newHandler(w *bundle.Writer, mem memory.Allocator, source string, opts Options, window int64) *handler {
	return &handler{
		trans:     newTransitionCols(mem),
		gcols:     newGoroutineCols(mem),
		scols:     newSpanCols(mem),
		sink:      newSink(w),
		lastFlush: time.Now(),
		w:         w,
		source:    source,
		opts:      opts,
		stacks:    newStackCache(),
		live:      newLiveTable(),
		tasks:     make(map[uint64]*task),
		spanBase:  (window + 1) << spanWindowShift,
		rows:      make(map[string]int64),
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
	if h.scols.len() >= spanBatchRows {
		h.flushCols(false)
	}
}

// pendingRows is how many low-volume rows are handed over at once.
const pendingRows = 4096

func (h *handler) flushPending() {
	if len(h.pending) > 0 {
		h.sink.append(h.pending)
		h.pending = make([]schema.Row, 0, pendingRows)
	}
}

// spanBatchRows is the most spans buffered before a batch is written
// (spans carry free text, so their batches are kept smaller).
const spanBatchRows = 64 * 1024

// flushCols hands buffered transition rows to the sink when a batch is
// full (spans too), and every buffered row once a second has passed or
// when force is set. Goroutine rows are few, so they wait for the clock.
func (h *handler) flushCols(force bool) {
	nt := h.trans.len()
	if !force && nt < colBatchRows && h.scols.len() < spanBatchRows {
		if (nt+h.gcols.len())%1024 != 0 || time.Since(h.lastFlush) < bundle.FlushInterval {
			return
		}
		force = true
	}
	if nt > 0 && h.err == nil && (force || nt >= colBatchRows) {
		rec, b, err := h.trans.record()
		if err != nil {
			h.err = err
			return
		}
		h.rows[schema.TableTraceTransitions] += int64(nt)
		h.sink.write(schema.TableTraceTransitions, rec, func() { h.trans.recycle(b) }, h.stacks.takeFresh())
	}
	if n := h.gcols.len(); n > 0 && h.err == nil && (force || n >= colBatchRows) {
		h.lastFlush = time.Now()
		rec, b, err := h.gcols.record()
		if err != nil {
			h.err = err
			return
		}
		h.rows[schema.TableTraceGoroutines] += int64(n)
		h.sink.write(schema.TableTraceGoroutines, rec, func() { h.gcols.recycle(b) }, h.stacks.takeFresh())
	}
	if n := h.scols.len(); n > 0 && h.err == nil && (force || n >= spanBatchRows) {
		rec, err := h.scols.record()
		if err != nil {
			h.err = err
			return
		}
		h.rows[schema.TableSpans] += int64(n)
		h.sink.write(schema.TableSpans, rec, nil, nil)
	}
	if force {
		h.lastFlush = time.Now()
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
	h.trans.release()
	h.gcols.release()
	h.scols.release()
}

func (h *handler) stack(s trace.Stack) stackInfo { return h.stacks.get(s) }

// handle processes one record.
func (h *handler) handle(r *rec) {
	h.records++
	h.last = r.ts
	if r.kind != recSync && !h.clk.set {
		h.fallbackClock()
	}
	switch r.kind {
	case recSync:
		h.sync(r)
	case recGo:
		h.goTransition(r)
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
	h.stacks.reset()
	// Forget the previous generation's handles, which would otherwise
	// keep its tables in memory.
	h.live.each(func(_ int64, g *gor) { g.lastHandle = trace.NoStack })
	if h.syncs == 1 {
		h.first = r.ts
	}
	if h.syncs == 2 {
		// Every goroutine alive has now reported its status.
		h.metrics.emitGoroutines(h, r.ts, true)
	}
	if r.hasSnap && !h.opts.ignoreSnapshots {
		h.clk.setSnapshot(&r.snap)
		h.append(schema.ClockSync{MonoNS: int64(r.snap.Mono), TS: r.snap.Wall.UnixNano(), Source: bundle.SourceTrace})
		return
	}
}

// fallbackClock chooses, once, how to place a trace without clock
// snapshots on the timeline. It is called at the first event, not at the
// first sync, so that a trace cut inside its first generation (which ends
// in a lone sync) records no clock method.
func (h *handler) fallbackClock() {
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

// goTransition records a goroutine state change and keeps the goroutine's
// live state; a goroutine's row is written when it ends.
func (h *handler) goTransition(r *rec) {
	g := h.live.get(r.g)
	var stackID int64
	if g == nil {
		g = &gor{}
		h.live.put(r.g, g)
		si := h.stack(r.stack)
		g.startFunc = si.root
		g.lastStack = si.id
		if r.creation {
			if r.ctxG > 0 {
				g.parent = r.ctxG
			}
			g.createdWall = h.clk.wall(r.ts)
			g.createdMono = h.clk.mono(r.ts)
			g.creationStack = h.stack(r.stack2).id
			stackID = g.creationStack
		} else {
			stackID = si.id
		}
		if r.creation {
			h.metrics.goroutinesChanged(h, r.ts)
		}
	} else if r.stack != trace.NoStack {
		if r.stack != g.lastHandle {
			si := h.stack(r.stack)
			g.lastHandle = r.stack
			g.lastStack = si.id
			if g.startFunc == "" {
				g.startFunc = si.root
			}
		}
		stackID = g.lastStack
	}
	if r.to != trace.GoRunning || r.from != trace.GoRunnable || h.opts.SchedulingTransitions {
		h.trans.append(h.clk.wall(r.ts), h.clk.mono(r.ts), r.g, stateID(r.from), stateID(r.to), r.str, stackID)
		h.flushCols(false)
	}
	g.state = r.to
	if r.str != "" || r.to == trace.GoRunning {
		g.reason = r.str
	}
	if r.to == trace.GoNotExist {
		h.endGoroutine(r.g, g, r.ts)
	}
}

// endGoroutine writes the row of a goroutine that ended at trace time ts
// (or, with ts 0, is still alive at the end of the trace) and forgets it.
func (h *handler) endGoroutine(goid int64, g *gor, ts int64) {
	row := schema.TraceGoroutine{
		Goid:            goid,
		ParentGoid:      g.parent,
		CreatedTS:       g.createdWall,
		CreatedMonoNS:   g.createdMono,
		CreationStackID: g.creationStack,
		StartFunction:   g.startFunc,
		LastState:       stateName(g.state),
		LastReason:      g.reason,
		LastStackID:     g.lastStack,
	}
	if ts != 0 {
		row.EndedTS = h.clk.wall(ts)
		row.EndedMonoNS = h.clk.mono(ts)
	}
	h.gcols.append(&row)
	for i := len(g.regions) - 1; i >= 0; i-- {
		h.writeRegion(g.regions[i], 0)
	}
	h.live.remove(goid)
	if ts != 0 {
		h.metrics.goroutinesChanged(h, ts)
	}
}

// finish writes what is still open at the end of the trace: live
// goroutines (no end time), open regions and tasks (no end time).
func (h *handler) finish() {
	if h.clk.set {
		h.metrics.emitGoroutines(h, h.last, true)
	}
	h.live.each(func(goid int64, g *gor) { h.endGoroutine(goid, g, 0) })
	for id, t := range h.tasks {
		h.writeTask(id, t, 0)
	}
	h.close()
}
