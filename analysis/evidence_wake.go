package analysis

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/leakscope/leakscope/analysis/internal/gosrc"
)

// progWait is what the program read as Go says of a parked goroutine's
// wait: its statement, and the operations that can end it, each on a
// class of objects with, for a class that does not escape, the
// goroutines that may have made the instance waited on.
type progWait struct {
	w    *gosrc.Wait
	keys []gosrc.Key
	// homes, per key, are the goroutines that may have made the
	// instance it waits on (see homesOf); nil when the class escapes or
	// the dump does not place the instance.
	homes [][]int64
	// opaque is set when an object it waits on was given to, or made by,
	// code whose source is not read: that code may release it.
	opaque string
	// addr is the address of the sync object it waits on, when its
	// frames print it exactly (syncObjectFrames); 0 otherwise.
	addr uint64
}

// syncObjectFrames print, as their first word, the address of the sync
// object a goroutine waits on (a Mutex's internal lock is its first
// field, after a field of no size).
var syncObjectFrames = map[string]bool{
	"internal/sync.(*Mutex).lockSlow": true, "internal/sync.(*Mutex).Lock": true,
	"sync.(*Mutex).lockSlow": true, "sync.(*Mutex).Lock": true,
	"sync.(*RWMutex).Lock": true, "sync.(*RWMutex).RLock": true,
	"sync.(*WaitGroup).Wait": true, "sync.(*Cond).Wait": true,
}

// wakeProgram is the wait-for reasoning's view of the program: each
// parked goroutine's wait and each goroutine's future, by stack.
type wakeProgram struct {
	p       *gosrc.Program
	q       *gosrc.Query // the operations that can end the parked goroutines' waits
	ps      *programSource
	waits   map[stackKind]*gosrc.Wait
	futures map[int64]*gosrc.Future
	entries map[int64]entryReach
	params  map[[2]int64][]gosrc.PtrParam
	// gave caches creatorGave by creator stack and class; once whether a
	// creator stack's go statement runs once per call (gosrc OnceAt).
	gave map[[2]int64]bool
	once map[int64]bool
}

// entryReach is what a stack's entry function was started with.
type entryReach struct {
	reach gosrc.Reach
	ok    bool
}

// stackKind is a stack and the wait kind looked for in it.
type stackKind struct {
	stack int64
	kind  string
}

// newWakeProgram reads the program, or returns nil when the bundle holds
// none of its files.
func newWakeProgram(ps *programSource) *wakeProgram {
	p := ps.program()
	if p == nil {
		return nil
	}
	return &wakeProgram{p: p, ps: ps, waits: map[stackKind]*gosrc.Wait{}, futures: map[int64]*gosrc.Future{},
		entries: map[int64]entryReach{}, params: map[[2]int64][]gosrc.PtrParam{}, gave: map[[2]int64]bool{},
		once: map[int64]bool{}}
}

// waitOf returns the program's wait of a stack parked in kind, nil when
// the program does not show it.
func (wp *wakeProgram) waitOf(w *waitGraph, stack int64, kind string) *gosrc.Wait {
	if wp == nil {
		return nil
	}
	k := stackKind{stack, kind}
	if pw, ok := wp.waits[k]; ok {
		return pw
	}
	pw, _ := wp.p.WaitAt(wp.ps.frames(w.framesOf(stack)), kind)
	wp.waits[k] = pw
	return pw
}

// decide gives every parked goroutine whose wait the program shows its
// operations that can end it, tracks them all, and reads every
// goroutine's future.
func (w *waitGraph) decide() {
	wp := w.prog
	if wp == nil {
		return
	}
	var keys []gosrc.Key
	for _, x := range w.gs {
		if x.class != classParked || x.selfHeld != "" {
			continue
		}
		pw := wp.waitOf(w, x.stack, x.kind)
		if pw == nil {
			continue
		}
		x.prog = &progWait{w: pw}
		if syncObjectFrames[x.block.objAt.fn] {
			x.prog.addr = x.block.obj
		}
		for _, c := range pw.Cases {
			if c.Default {
				continue
			}
			if c.Obj.Opaque() && x.prog.opaque == "" {
				x.prog.opaque = c.Expr
			}
			x.prog.keys = append(x.prog.keys, wp.p.Releasers(c)...)
		}
		keys = append(keys, x.prog.keys...)
	}
	wp.q = wp.p.Track(keys)
	w.timerWakes()
	for _, x := range w.gs {
		if x.prog == nil {
			continue
		}
		x.prog.homes = make([][]int64, len(x.prog.keys))
		for i, k := range x.prog.keys {
			c := wp.p.KeyClass(k)
			if c.Escapes() {
				continue
			}
			if hs, any := w.homesOf(x, c); !any {
				x.prog.homes[i] = hs
			}
		}
	}
}

// timerWakes takes as able to run the decided waiters a function handed
// to time.AfterFunc (or context.AfterFunc, on a context that can be
// done) can release: its timer may still be pending, as a timer case of
// their own would be.
func (w *waitGraph) timerWakes() {
	for _, x := range w.gs {
		if x.prog == nil {
			continue
		}
		for _, k := range x.prog.keys {
			if len(w.prog.q.TimerReleases(k)) > 0 {
				x.classified, x.prog = classified{class: classLive}, nil
				break
			}
		}
	}
}

// futureOf is what a goroutine can still do if it runs (cached by stack).
func (w *waitGraph) futureOf(y *waitGor) *gosrc.Future {
	wp := w.prog
	if f, ok := wp.futures[y.stack]; ok {
		return f
	}
	skip := -1
	if y.class == classParked {
		if pw := wp.waitOf(w, y.stack, y.kind); pw != nil {
			skip = pw.Frame
		}
	}
	f := wp.q.Future(wp.ps.frames(w.framesOf(y.stack)), skip)
	f.Caps = append(f.Caps, queuedWriter(wp.waitOf(w, y.stack, y.kind), y)...)
	wp.futures[y.stack] = &f
	return &f
}

// queuedWriter is the release a goroutine waiting to Lock a lock makes
// for the readers queued behind it: once it has the lock it unlocks it,
// and an RLock waits for a queued writer to do so (an RWMutex lets no
// new reader in while a writer waits).
func queuedWriter(pw *gosrc.Wait, y *waitGor) []gosrc.Cap {
	if pw == nil || y.class != classParked {
		return nil
	}
	var out []gosrc.Cap
	for _, c := range pw.Cases {
		if c.Op == gosrc.OpLock {
			out = append(out, gosrc.Cap{Key: gosrc.KeyOf(c.Obj, gosrc.OpUnlock), Frame: pw.Frame, Line: c.Line, Via: "the lock it waits for, once it has it", Where: []gosrc.Where{{Own: true}}})
		}
	}
	return out
}

// startedWith reports whether a goroutine was started with what can
// lead to an object of class c: its entry function's parameters or
// captured variables (through pointers and fields). Not read: it may
// have been.
func (w *waitGraph) startedWith(g *waitGor, c gosrc.Class) bool {
	wp := w.prog
	r, ok := wp.entries[g.stack]
	if !ok {
		r.reach, r.ok = wp.p.EntryReach(wp.ps.frames(w.framesOf(g.stack)))
		wp.entries[g.stack] = r
	}
	return !r.ok || r.reach.Has(c)
}

// creatorGave reports whether the frame that ran a goroutine's go
// statement may hold an object of class c its own goroutine was given
// (see [gosrc.Program.Given]); else the creator made the instance it
// handed on.
func (w *waitGraph) creatorGave(g *waitGor, c gosrc.Class) bool {
	if g.site == nil || g.site.creatorStackID == 0 {
		return true
	}
	k := [2]int64{g.site.creatorStackID, int64(c.ID())}
	if v, ok := w.prog.gave[k]; ok {
		return v
	}
	fr := w.framesOf(g.site.creatorStackID)
	v := true
	if len(fr) > 0 {
		given, ok := w.prog.p.Given(w.prog.ps.frames(fr[:1])[0], c)
		v = !ok || given
	}
	w.prog.gave[k] = v
	return v
}

// maxChain bounds the creator chains walked.
const maxChain = 64

// homesOf lists the goroutines that may have made the instance of c
// goroutine y holds (its home): y itself, and, while y and its creators
// were started with what leads to c, each creator up to the first that
// was not, or whose go statement's function was not given it (that
// creator made what it handed on). Two goroutines may hold one instance
// only when their homes meet. any is set when the chain
// is longer than maxChain, reaches the first goroutine, or is cut by a
// creator gone whose go statement's function was given c itself: y may
// hold any instance.
func (w *waitGraph) homesOf(y *waitGor, c gosrc.Class) (homes []int64, any bool) {
	homes = append(homes, y.goid)
	g := y
	for range maxChain {
		if !w.startedWith(g, c) {
			return homes, false
		}
		p := w.byGoid[g.creator]
		switch {
		case g.creator == 0 || p == g:
			return homes, true
		case !w.creatorGave(g, c):
			return append(homes, g.creator), false
		case p == nil:
			return append(homes, g.creator), true
		}
		homes = append(homes, p.goid)
		g = p
	}
	return homes, true
}

// wakeText says how goroutine y can release what a waiter waits on.
func (w *waitGraph) wakeText(y *waitGor, cp gosrc.Cap) string {
	k := w.prog.p.KeyClass(cp.Key)
	what := strings.Join(k.Names(), ", ")
	if what == "" {
		what = "it"
	}
	frames := w.framesOf(y.stack)
	at := ""
	if cp.Frame < len(frames) {
		f := frames[cp.Frame]
		at = fmt.Sprintf("%s:%d", filepath.Base(f.File), cp.Line)
	}
	via := ""
	if cp.Via != "" {
		via = " through " + cp.Via
	}
	state := y.state
	if state == "" {
		state = "running"
	}
	return fmt.Sprintf("goroutine %d (%s, %s) can %s %s at %s%s", y.goid, holderEntry(y), state, opVerb(cp.Key.Op()), what, at, via)
}

// opVerb words an operation for texts.
func opVerb(op gosrc.Op) string {
	switch op {
	case gosrc.OpSend:
		return "send on"
	case gosrc.OpRecv:
		return "receive from"
	case gosrc.OpClose:
		return "close"
	case gosrc.OpCancel:
		return "cancel the context of"
	}
	return "call " + op.String() + " on"
}

// releaseStatements names the statements of the program that could end
// x's wait, at most a few.
func (w *waitGraph) releaseStatements(x *waitGor) []string {
	var out []string
	for _, s := range w.prog.q.Statements(x.prog.keys, 4) {
		out = append(out, fmt.Sprintf("%s at %s:%d in %s", s.Op, filepath.Base(s.File), s.Line, s.Func))
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// noProgram is what classifyGor knows of a goroutine when no program is
// read.
var noProgram = waitProgram{wait: func(string) *gosrc.Wait { return nil }, sema: func() bool { return false }}

// runtimeSema reports a stack parked in a semaphore of the runtime's own
// (see [gosrc.Program.RuntimeSema]).
func (wp *wakeProgram) runtimeSema(w *waitGraph, stack int64) bool {
	return wp != nil && wp.p.RuntimeSema(wp.ps.frames(w.framesOf(stack)))
}

// waitGlobals names the package-level variables x waits on.
func (w *waitGraph) waitGlobals(x *waitGor) []string {
	var out []string
	for _, c := range x.prog.w.Cases {
		if !c.Default {
			out = append(out, c.Obj.Globals()...)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// root is a pointer a goroutine's frame prints to a named struct that
// leads to a class: the instance of the class it holds is one that
// struct leads to.
type root struct {
	typ string
	v   uint64
}

// rootsOf lists a goroutine's roots leading to class c, frame by frame:
// its printed pointer parameters to named structs whose fields lead to
// c. Two goroutines holding one class through roots of one type hold
// different instances when their roots differ: the instance is one the
// struct leads to (unless two structs share it, which the fields' writes
// would have to show).
func (w *waitGraph) rootsOf(g *waitGor, c gosrc.Class) []root {
	frames := w.framesOf(g.stack)
	var out []root
	for _, a := range g.args {
		if a.frame >= len(frames) {
			continue
		}
		for _, pp := range w.ptrParams(g.stack, a.frame, frames[a.frame]) {
			if pp.Word == a.pos && pp.Reaches(c) {
				out = append(out, root{typ: pp.Type, v: a.v})
			}
		}
	}
	return out
}

// ptrParams is the program's pointer parameters of a stack's frame,
// read once.
func (w *waitGraph) ptrParams(stack int64, i int, f Frame) []gosrc.PtrParam {
	k := [2]int64{stack, int64(i)}
	if pp, ok := w.prog.params[k]; ok {
		return pp
	}
	pp := w.prog.p.PtrParams(w.prog.ps.frames([]Frame{f})[0])
	w.prog.params[k] = pp
	return pp
}

// capAddrs are the addresses of the objects a release of y acts on, as
// y's frames print them (see [gosrc.Cap]); ok is false when one of its
// releases of the class is not placed.
func (w *waitGraph) capAddrs(y *waitGor, cp gosrc.Cap) (addrs []uint64, ok bool) {
	if cp.Anywhere || len(cp.Where) == 0 {
		return nil, false
	}
	for _, wh := range cp.Where {
		a := uint64(0)
		if wh.Own {
			if y.prog != nil {
				a = y.prog.addr
			}
		} else if v, found := y.word(wh.Frame, wh.Word); found {
			a = v + uint64(wh.Offset)
		}
		if a == 0 {
			return nil, false
		}
		if !slices.Contains(addrs, a) {
			addrs = append(addrs, a)
		}
	}
	return addrs, true
}

// word is the pointer word a goroutine's frame prints at a position,
// when printed exactly.
func (g *waitGor) word(frame, pos int) (uint64, bool) {
	for _, a := range g.args {
		if a.frame == frame && a.pos == pos {
			return a.v, true
		}
	}
	return 0, false
}
