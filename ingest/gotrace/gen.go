package gotrace

import (
	"encoding/binary"
	"fmt"

	"golang.org/x/exp/trace"

	"github.com/leakscope/leakscope/ingest/bundle"
)

// A worker decodes one generation and reduces it to steps for the merge
// (see [handler.merge]): a goroutine's life in the generation starts (its
// creation, or its status when the generation began) or ends (or is still
// going when the generation ends); a rarer event (task, region, log,
// metric, range) happens. Nine events in ten are goroutine state changes,
// and a life keeps only what the goroutine's trace_goroutines row needs,
// so the steps are a small fraction of the generation. They travel in
// parts of partOps steps, handed over as they fill, so that the merge
// follows the oldest generation while the workers read ahead; each worker
// has partsPerWorker parts, which bounds how far it runs ahead.

const partOps = 8 << 10

// partsPerWorker is how many parts each of workers has: enough for a
// worker to read well ahead of the merge when several decode at once,
// few when one does (the merge follows it closely).
func partsPerWorker(workers int) int {
	if workers == 1 {
		return 8
	}
	return 48
}

// lifeStart is a goroutine's first event in a generation. It describes
// the goroutine to a merge that has not seen it yet; a merge that has
// ignores it (the status a generation begins with repeats what was known).
type lifeStart struct {
	goid          int64
	parent        int64 // creator, for a creation
	ts            int64
	firstStack    int32 // for a creation, the new goroutine's start
	creationStack int32 // the creator's stack
	firstTo       trace.GoState
	flags         uint8
}

// lifeEnd sums up a goroutine's events after its first, as reading the
// whole trace in order would have applied them, when it ends or the
// generation does (flags without lifeEnded).
type lifeEnd struct {
	goid   int64
	ts     int64 // of the end
	reason string
	// stack is the last stack, rootStack the first with a known
	// outermost function (0: none after the first event)
	stack, rootStack int32
	state            trace.GoState
	flags            uint8
}

const (
	lifeCreated    uint8 = 1 << iota // the first event is the creation
	lifeState                        // the state changed after the first event
	lifeReason                       // the reason was set after the first event
	lifeEnded                        // the goroutine ended
	lifeEndSyscall                   // it ended in a syscall (a cgo callback returned): its id may come back
)

// change sums up in e one state change after the life's first event: the
// stack it happened at (si, the generation's index; 0 for none), whether
// that stack's outermost function is known, the new state and the reason.
func (e *lifeEnd) change(si int32, root bool, to trace.GoState, reason string) {
	if si != 0 {
		e.stack = si
		if e.rootStack == 0 && root {
			e.rootStack = si
		}
	}
	e.state = to
	e.flags |= lifeState
	if reason != "" || to == trace.GoRunning {
		e.reason = reason
		e.flags |= lifeReason
	}
}

// ended marks e as the goroutine's end at ts, coming from state from.
func (e *lifeEnd) ended(ts int64, from trace.GoState) {
	e.ts = ts
	e.flags |= lifeEnded
	if from == trace.GoSyscall {
		e.flags |= lifeEndSyscall
	}
}

// genStack is a stack of the generation: its frames, a key made of them
// (equal keys, equal stacks across generations) and its outermost
// function other than runtime.goexit.
type genStack struct {
	frames []bundle.StackFrame
	key    string
	root   string
}

// genSummary is what the merge learns about a generation once its parts
// are all in.
type genSummary struct {
	err    error // decoding failed
	first  int64 // trace time of the Sync
	last   int64 // trace time of the last event
	events int64 // events kept
	lives  int64 // goroutine lives
}

// open is a goroutine's life in progress on the worker.
type open struct {
	end    lifeEnd
	handle trace.Stack // last stack handle seen
}

// decoder reduces one generation.
type decoder struct {
	c      *chunk
	sum    genSummary
	out    stepOut
	p      *part              // the part being filled (parts mode)
	pool   chan *part         // the worker's parts (parts mode)
	cur    *pagedTable[int32] // goid → 1 + index in lives
	lives  []open
	freed  []int32
	stacks map[trace.Stack]int32 // handle → index
	roots  []string              // outermost function by index
	nStack int32
	// recent are the last stacks looked up: a goroutine's creation names
	// two (the creator's and the new goroutine's), over and over.
	recent     [4]stackSlot
	nextRecent int
	key        []byte
	tmp        rec       // the note being made
	start      lifeStart // the life start being made
	lastEnd    lifeEnd   // the life end being made (one worker)
	direct     *handler  // the handler steps go to at once (one worker)
	syncs      int       // Sync events seen in the generation
}

// newDecoder returns a decoder that encodes its steps into parts from
// pool, for a merge on another goroutine; with a nil pool, one that hands
// them to out as it makes them.
func newDecoder(pool chan *part, out stepOut) *decoder {
	d := &decoder{pool: pool, out: out, cur: newPagedTable[int32](livePageBits), stacks: map[trace.Stack]int32{}}
	if pool != nil {
		d.out = partOut{d}
	}
	if o, ok := out.(directOut); ok {
		d.direct = o.h
	}
	return d
}

// stepOut takes a generation's steps in trace order, each stack before
// the steps that use it.
type stepOut interface {
	lifeStart(s *lifeStart)
	lifeEnd(e *lifeEnd)
	note(r *rec)
	newStack(s *genStack)
}

// partOut encodes a worker's steps into its parts, handing each over to
// the merge once it is full.
type partOut struct{ d *decoder }

func (o partOut) lifeStart(s *lifeStart) { o.d.p.putStart(s); o.d.full() }
func (o partOut) lifeEnd(e *lifeEnd)     { o.d.p.putEnd(e); o.d.full() }
func (o partOut) note(r *rec)            { o.d.p.putNote(r); o.d.full() }
func (o partOut) newStack(s *genStack)   { o.d.p.stacks = append(o.d.p.stacks, *s) }

// begin starts the reduction of generation c.
func (d *decoder) begin(c *chunk) {
	d.c, d.sum = c, genSummary{}
	clear(d.stacks)
	d.stacks[trace.NoStack] = 0
	d.nStack = 0
	d.recent = [len(d.recent)]stackSlot{}
	d.roots = append(d.roots[:0], "")
	d.lives, d.freed = d.lives[:0], d.freed[:0]
	d.syncs = 0
	if d.pool != nil {
		d.p = <-d.pool
	}
}

// reduce reduces a batch of the generation's events. A panic in the
// parser's accessors becomes the generation's error, and the rest of the
// generation is skipped.
func (d *decoder) reduce(evs []trace.Event) {
	if d.sum.err != nil {
		return
	}
	defer func() {
		if p := recover(); p != nil {
			d.sum.err = fmt.Errorf("trace parser failed: %v", p)
		}
	}()
	for i := range evs {
		d.event(&evs[i])
	}
}

// end finishes the generation, whose parse stopped with err (nil at its
// end): the lives still going end with it, and its summary is set in
// c.sum. In parts mode it sends the last part on c.parts and closes
// c.parts.
func (d *decoder) end(err error) {
	if d.sum.err == nil {
		d.sum.err = err
	}
	d.cur.each(func(goid int64, i int32) {
		d.cur.remove(goid)
		d.out.lifeEnd(&d.lives[i-1].end)
	})
	c := d.c
	c.sum = d.sum
	if d.pool != nil {
		c.parts <- d.p
		d.p = nil
		close(c.parts)
	}
	d.c = nil
}

// run reduces the generations p parses, until p is done, and calls done
// with each once it is reduced.
func (d *decoder) run(p *parser, done func(*chunk)) {
	for b := range p.out {
		d.take(p, b)
		if b.end {
			done(b.c)
		}
	}
}

// take reduces one batch of p's, beginning or ending its generation as
// the batch says.
func (d *decoder) take(p *parser, b evBatch) {
	if d.c != b.c {
		d.begin(b.c)
	}
	if b.evs != nil {
		d.reduce(b.evs)
		p.recycle(b.evs)
	}
	if b.end {
		d.end(b.err)
	}
}

// event reduces one event.
func (d *decoder) event(ev *trace.Event) {
	switch ev.Kind() {
	case trace.EventStateTransition:
		st := ev.StateTransition()
		if st.Resource.Kind != trace.ResourceGoroutine {
			return
		}
		if from, to := st.Goroutine(); from != to {
			if d.direct != nil {
				d.applyTransition(d.direct, ev, &st, from, to)
			} else {
				d.transition(ev, &st, from, to)
			}
		}
	case trace.EventSync:
		// Each generation read alone begins and ends with a Sync; the
		// first carries the generation's clock snapshot.
		d.syncs++
		if d.syncs == 1 {
			d.note(ev)
			d.sum.first = int64(ev.Time())
		}
	default:
		d.note(ev)
	}
}

// transition follows one goroutine state change.
func (d *decoder) transition(ev *trace.Event, st *trace.StateTransition, from, to trace.GoState) {
	ts := int64(ev.Time())
	d.sum.last = ts
	d.sum.events++
	g := int64(st.Resource.Goroutine())
	i := d.cur.get(g) - 1
	var l *open
	if i < 0 {
		i = d.alloc()
		d.cur.put(g, i+1)
		l = &d.lives[i]
		*l = open{end: lifeEnd{goid: g, state: to}}
		d.startLife(ev, st, g, ts, from, to)
	} else {
		l = &d.lives[i]
		var si int32
		if st.Stack != trace.NoStack && st.Stack != l.handle {
			l.handle = st.Stack
			si = d.stack(st.Stack)
		}
		l.end.change(si, d.roots[si] != "", to, st.Reason)
	}
	if to == trace.GoNotExist {
		e := &l.end
		e.ended(ts, from)
		d.cur.remove(g)
		d.freed = append(d.freed, i)
		d.out.lifeEnd(e)
	}
}

// alloc returns the index of a free slot in d.lives.
func (d *decoder) alloc() int32 {
	if n := len(d.freed); n > 0 {
		i := d.freed[n-1]
		d.freed = d.freed[:n-1]
		return i
	}
	d.lives = append(d.lives, open{})
	return int32(len(d.lives) - 1)
}

// note keeps a task, region, log, metric or range event.
func (d *decoder) note(ev *trace.Event) {
	r := &d.tmp
	if !decode(ev, r) {
		return
	}
	d.sum.last = r.ts
	d.sum.events++
	d.out.note(r)
}

// full hands the part over once it holds partOps steps.
func (d *decoder) full() {
	if d.p.n < partOps {
		return
	}
	d.c.parts <- d.p
	d.p = <-d.pool
}

// stack returns the index of s among the generation's stacks, adding it
// (with its frames, to the current part) when new; 0 for no or an empty
// stack.
func (d *decoder) stack(s trace.Stack) int32 {
	for k := range d.recent {
		if d.recent[k].s == s {
			return d.recent[k].i
		}
	}
	i, ok := d.stacks[s]
	if !ok {
		i = d.addStack(s)
		d.stacks[s] = i
	}
	d.recent[d.nextRecent%len(d.recent)] = stackSlot{s, i}
	d.nextRecent++
	return i
}

// stackSlot is a stack handle and its index among the generation's.
type stackSlot struct {
	s trace.Stack
	i int32
}

func (d *decoder) addStack(s trace.Stack) int32 {
	var frames []bundle.StackFrame
	d.key = d.key[:0]
	for f := range s.Frames() {
		frames = append(frames, bundle.StackFrame{Function: f.Func, File: f.File, Line: int64(f.Line)})
		d.key = stackKeyAppend(d.key, f.Func, f.File, f.Line)
	}
	if len(frames) == 0 {
		return 0
	}
	gs := genStack{frames: frames, key: string(d.key)}
	for i := len(frames) - 1; i >= 0; i-- {
		if fn := frames[i].Function; fn != "runtime.goexit" && fn != "" {
			gs.root = fn
			break
		}
	}
	d.nStack++
	d.out.newStack(&gs)
	d.roots = append(d.roots, gs.root)
	return d.nStack
}

// stackKeyAppend appends one frame to a stack's content key.
func stackKeyAppend(key []byte, fn, file string, line uint64) []byte {
	key = append(key, fn...)
	key = append(key, 0)
	key = append(key, file...)
	return binary.AppendUvarint(append(key, 0), line)
}
