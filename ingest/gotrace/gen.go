package gotrace

import (
	"encoding/binary"
	"fmt"
	"io"

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

// decode reads one generation (a standalone trace: header and the
// generation's batches) from r and hands its steps on; then it sets its
// summary in c.sum. In parts mode it sends the parts on c.parts and
// closes c.parts.
func (d *decoder) decode(c *chunk, r io.Reader) {
	d.c, d.sum = c, genSummary{}
	clear(d.stacks)
	d.stacks[trace.NoStack] = 0
	d.nStack = 0
	d.recent = [len(d.recent)]stackSlot{}
	d.roots = append(d.roots[:0], "")
	d.lives, d.freed = d.lives[:0], d.freed[:0]
	if d.pool != nil {
		d.p = <-d.pool
	}
	d.sum.err = d.read(r)
	// Lives still going at the generation's end.
	d.cur.each(func(goid int64, i int32) {
		d.cur.remove(goid)
		d.out.lifeEnd(&d.lives[i-1].end)
	})
	c.sum = d.sum
	if d.pool != nil {
		c.parts <- d.p
		d.p = nil
		close(c.parts)
	}
}

// evBatchLen is how many events the reading goroutine hands over at once:
// each handover may wake the other goroutine (4096 rather than 1024 halves
// ingest's context switches).
const evBatchLen = 4096

// read decodes the generation in r in two stages on two goroutines: one
// runs the parser and only copies its events into batches, this one
// reduces them. The parser is the slowest stage and does the same work as
// bare reading, so on two free cores a generation takes about as long as
// bare reading of it. A panic in the parser or its accessors is returned
// as an error.
func (d *decoder) read(r io.Reader) (err error) {
	batches := make(chan []trace.Event, 4)
	free := make(chan []trace.Event, 8)
	quit := make(chan struct{})
	var readErr error
	go func() {
		defer close(batches)
		readErr = readEvents(r, batches, free, quit)
	}()
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("trace parser failed: %v", p)
		}
		close(quit)
		for range batches {
		}
	}()
	d.syncs = 0
	for b := range batches {
		for i := range b {
			d.event(&b[i])
		}
		select {
		case free <- b[:0]:
		default:
		}
	}
	return readErr
}

// readEvents parses r and sends its events in batches on out, reusing
// the batches that come back on free, until the end, an error or quit.
func readEvents(r io.Reader, out chan<- []trace.Event, free <-chan []trace.Event, quit <-chan struct{}) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("trace parser failed: %v", p)
		}
	}()
	tr, err := trace.NewReader(r)
	if err != nil {
		return err
	}
	var b []trace.Event
	send := func() bool {
		select {
		case out <- b:
		case <-quit:
			return false
		}
		select {
		case b = <-free:
		default:
			b = make([]trace.Event, 0, evBatchLen)
		}
		return true
	}
	b = make([]trace.Event, 0, evBatchLen)
	for {
		ev, err := tr.ReadEvent()
		if err != nil {
			if len(b) > 0 && !send() {
				return nil
			}
			if err == io.EOF {
				return nil
			}
			return err
		}
		if b = append(b, ev); len(b) == evBatchLen && !send() {
			return nil
		}
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
			d.transition(ev, &st, from, to)
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
		// In the decoder, not on the stack: out may keep the pointer
		// for the call, which makes a local escape.
		s := &d.start
		*s = lifeStart{goid: g, ts: ts, firstTo: to, firstStack: d.stack(st.Stack)}
		if from == trace.GoNotExist {
			s.flags |= lifeCreated
			if p := int64(ev.Goroutine()); p > 0 {
				s.parent = p
			}
			s.creationStack = d.stack(ev.Stack())
		}
		d.sum.lives++
		d.out.lifeStart(s)
	} else {
		l = &d.lives[i]
		e := &l.end
		if st.Stack != trace.NoStack && st.Stack != l.handle {
			l.handle = st.Stack
			if si := d.stack(st.Stack); si != 0 {
				e.stack = si
				if e.rootStack == 0 && d.roots[si] != "" {
					e.rootStack = si
				}
			}
		}
		e.state = to
		e.flags |= lifeState
		if st.Reason != "" || to == trace.GoRunning {
			e.reason = st.Reason
			e.flags |= lifeReason
		}
	}
	if to == trace.GoNotExist {
		e := &l.end
		e.ts = ts
		e.flags |= lifeEnded
		if from == trace.GoSyscall {
			e.flags |= lifeEndSyscall
		}
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
