package gosrc

import (
	"fmt"
	"go/ast"
	"go/types"
	"slices"

	"github.com/leakscope/leakscope/internal/gosym"
)

// Key is an operation on a class of objects.
type Key uint64

// KeyOf is the key of op on class c.
func KeyOf(c Class, op Op) Key { return Key(uint64(uint32(c.n))<<8 | uint64(op)) }

// Op is the key's operation.
func (k Key) Op() Op { return Op(k & 0xff) }

// Class is the key's class in p.
func (p *Program) KeyClass(k Key) Class { return p.class(node(int32(uint32(k >> 8)))) }

// Releasers are the keys of the operations that can end case c: a send
// or close for a receive, a receive for a send, an Unlock for a Lock, a
// Done for a Wait, a Signal for a Cond's Wait, and for the Done channel
// of a context a call of a cancel function of it or of a context it
// derives from.
func (p *Program) Releasers(c Case) []Key {
	var out []Key
	for _, op := range Releases(c.Op) {
		if c.Op == OpLock && op == OpRUnlock && !c.Obj.rw() {
			continue
		}
		out = append(out, KeyOf(c.Obj, op))
	}
	if c.Op == OpRecv {
		for _, k := range p.cancelsOf(c.Obj) {
			out = append(out, KeyOf(k, OpCancel))
		}
	}
	return out
}

// rw reports a read-write lock's class: an RLock or RUnlock operates on
// it somewhere.
func (c Class) rw() bool {
	for _, f := range c.p.funcs.all {
		for _, e := range f.events {
			if (e.op == OpRLock || e.op == OpRUnlock) && c.p.flow.cl.find(e.obj) == c.n {
				return true
			}
		}
	}
	return false
}

// Query answers questions about a set of operations on one program:
// what goroutines can still do of them. The Program is only read, so
// several Queries can use one Program at once; a Query is not safe for
// concurrent use.
type Query struct {
	p            *Program
	tracked      map[Key]bool
	trackedClass map[node]bool
	sums         map[*Func]*summary
	stmts        map[Key][]Stmt
	scopes       map[*Func]Reach
	// keep filters the events a walk takes (withFilter).
	keep func(event) bool
	// origins and freshCalls memoise origin.go's answers.
	origins        map[originKey]origins
	freshCalls     map[freshCallKey]*types.Var
	freshCallItems map[*Func][]freshBlocks
	// timerStmts are the time.AfterFunc calls whose function can perform
	// each tracked operation (timers.go).
	timerStmts map[Key][]Stmt
}

// Track prepares answers about the given operations: every function's
// summary of which of them it can reach through the calls it makes, and
// the statements performing each.
func (p *Program) Track(keys []Key) *Query {
	q := &Query{p: p, tracked: map[Key]bool{}, trackedClass: map[node]bool{}, scopes: map[*Func]Reach{},
		origins: map[originKey]origins{}, freshCalls: map[freshCallKey]*types.Var{}, freshCallItems: map[*Func][]freshBlocks{}}
	for _, k := range keys {
		q.tracked[k] = true
		if acquireOf(k.Op()) != OpNone {
			q.trackedClass[p.KeyClass(k).n] = true
		}
	}
	q.summarize()
	q.indexTimers()
	q.stmts = map[Key][]Stmt{}
	for _, f := range p.funcs.all {
		for _, e := range f.events {
			if e.op == OpNone {
				continue
			}
			if k := KeyOf(p.class(e.obj), e.op); q.tracked[k] && len(q.stmts[k]) < maxStmts {
				pos := p.fset.Position(e.pos)
				q.stmts[k] = append(q.stmts[k], Stmt{Op: e.op, File: pos.Filename, Line: pos.Line, Func: f.Name})
			}
		}
	}
	return q
}

// maxStmts bounds the statements kept per operation for texts.
const maxStmts = 8

// Stmt is a statement that performs an operation.
type Stmt struct {
	Op   Op
	File string
	Line int
	Func string
}

// Statements lists the statements of the program performing the tracked
// operations keys, at most max.
func (q *Query) Statements(keys []Key, max int) []Stmt {
	var out []Stmt
	for _, k := range keys {
		for _, s := range q.stmts[k] {
			if len(out) >= max {
				return out
			}
			out = append(out, s)
		}
	}
	return out
}

// Cap is one operation a goroutine can still perform.
type Cap struct {
	Key Key
	// Frame is the index of the frame whose rest of function leads to
	// it, Line the line there (the operation's, or the call's through
	// which it is reached), Via the function called ("" for an operation
	// in the frame's own function).
	Frame int
	Line  int
	Via   string
	// Where lists, unless Anywhere, the objects of the class the
	// goroutine's releases of it act on, as its frames print them:
	// every such release in its rest is one of these.
	Where    []Where
	Anywhere bool
	// Fresh is 1 + the index of a frame when every release of the class
	// in the rest acts on a local that frame's function makes anew once
	// per call (the instance of the frame's current call); 0 otherwise.
	Fresh int
	// Bounded is set when every object of the class the rest can act on
	// through this operation is one of Objects: each names one object
	// for the whole rest (a frame's parameter, or a variable its literal
	// captures, that no statement assigns, then fields only composite
	// literals set; origin.go), so the goroutine
	// can act on at most len(Objects) objects of the class, whichever
	// they are.
	Bounded bool
	Objects []string
}

// Where is one object a release acts on: Offset bytes past the pointer
// word at position Word among frame Frame's printed arguments, or, Own,
// the object the goroutine waits on (the lock it will then release: see
// the analysis's queued writers).
type Where struct {
	Frame, Word int
	Offset      int64
	Own         bool
}

// Future is what a goroutine with given frames can still do.
type Future struct {
	Caps []Cap
	// Unknown names a frame function not read, or a call into code not
	// read, in the rest of its frames: it may do more than Caps says.
	Unknown string
}

// Future returns the tracked operations a goroutine with these frames
// (leaf first) can still perform if it runs: those in the rest of each
// frame's function (by its control-flow graph) and in what the calls
// there reach. skip is the index of the frame whose wait it is blocked
// in (-1 for none): that wait's own operation does not count. An
// operation on a class that does not escape counts only from a frame
// whose function holds that class (a variable of it in scope). A
// goroutine shown only in its go statement's wrapper will run the whole
// function the statement calls.
func (q *Query) Future(frames []Frame, skip int) Future {
	p := q.p
	var out Future
	seen := map[Key]int{} // index in out.Caps
	if f, e, i, ok := p.unstartedGo(frames); ok {
		q.goCallFuture(&out, seen, f, e, i)
		return out
	}
	var deeper *Func
	deeperAt := -1
	for i, fr := range frames {
		if fr.Function == wgGoFunc && deeperAt == i-1 && deeper != nil {
			q.wgGoDone(&out, seen, deeper, i, fr.Line)
		}
		if Machinery(fr.Function) || fr.Function == "" {
			continue
		}
		f, _ := p.FuncAt(fr.Function, fr.File, fr.Line)
		if f == nil {
			if out.Unknown == "" && !gosym.Wrapper(fr.Function) {
				out.Unknown = fr.Function
			}
			continue
		}
		q.frameFuture(&out, seen, f, fr.Line, i, i == skip, deeper)
		deeper, deeperAt = f, i
	}
	return out
}

// frameFuture adds what the rest of frame i (f at line) reaches: the
// rest of its graph, and the deferred calls registered before it (they
// run when it returns). waiting says the frame is blocked in the wait at
// line (its own operation does not count; a lock it waits to take is
// taken as held); deeper is the function of the frame it calls (that
// call is in progress: the deeper frames are its rest).
func (q *Query) frameFuture(out *Future, seen map[Key]int, f *Func, line, i int, waiting bool, deeper *Func) {
	p := q.p
	scope := q.scope(f)
	emit := func(k Key, e event) {
		c := p.KeyClass(k)
		if !c.Escapes() && !scope.Has(c) {
			return
		}
		if e.call == nil && waiting && p.spans(e, line) {
			return // the wait itself
		}
		wh, ok := p.where(f, e, i)
		fresh := 0
		if p.onceFresh(f, e) {
			fresh = i + 1
		}
		via := ""
		if e.call != nil {
			via = callName(e.call)
		}
		objs, bounded := q.frameObjects(f, e, k, i)
		out.add(seen, Cap{Key: k, Frame: i, Line: p.fset.Position(e.pos).Line, Via: via, Where: []Where{wh}, Anywhere: !ok, Fresh: fresh,
			Bounded: bounded, Objects: objs})
	}
	skip := func(e event) bool {
		return e.call != nil && deeper != nil && p.spans(e, line) && calls(e.call, deeper)
	}
	filtered := func(e event) bool { return !skip(e) }
	anyEmit := func(k Key, e event) {
		if e.call == nil || q.freshRoot(f, e, k) == nil {
			emit(k, e) // else it acts through a fresh local: reachCurrent's
		}
	}
	starts, reached := p.startsAt(f, line)
	held := map[node]bool{}
	if waiting {
		for _, e := range f.events {
			if e.call == nil && (e.op == OpLock || e.op == OpRLock) && p.spans(e, line) {
				held[p.flow.cl.find(e.obj)] = true
			}
		}
	}
	q.withFilter(filtered, func() {
		q.reachAny(f, starts, anyEmit)
		q.reachCurrent(f, starts, emit)
		q.reachUnmatched(f, starts, held, emit)
	})
	if deeper != nil && len(starts) > 0 && p.loopsBack(starts[0].block) {
		for _, e := range p.blockEvents(f)[starts[0].block.Index] {
			if !skip(e) {
				continue
			}
			for _, k := range q.callAnyKeys(e.call) { // the call in progress, made again on a later turn
				objs, bounded := q.frameObjects(f, e, k, i)
				out.widen(seen, k, objs, bounded)
			}
		}
	}
	for _, e := range p.pendingDefers(f, reached, starts) {
		if e.call != nil && e.call.unknown && out.Unknown == "" {
			out.Unknown = callName(e.call)
		}
		q.anyOf(e, emit)
		q.stepClassAll(e, emit)
	}
	for _, b := range reached {
		for _, e := range p.blockEvents(f)[b] {
			if e.call != nil && e.call.unknown && !skip(e) && out.Unknown == "" {
				out.Unknown = callName(e.call)
			}
		}
	}
}

// stepClassAll emits the releases an event makes of any tracked class
// with nothing held.
func (q *Query) stepClassAll(e event, emit func(Key, event)) {
	if e.call == nil {
		if acquireOf(e.op) != OpNone {
			q.stepClass(e, q.p.flow.cl.find(e.obj), false, emit)
		}
		return
	}
	for _, g := range e.call.callees {
		for _, k := range q.sums[g].unmatched {
			emit(k, e)
		}
	}
}

// calls reports whether a call site may call f.
func calls(s *callSite, f *Func) bool {
	for _, g := range s.callees {
		if g == f {
			return true
		}
	}
	return false
}

// callName names a call's callee for texts.
func callName(s *callSite) string {
	switch {
	case s.decl != nil:
		return s.decl.FullName()
	case s.static != nil:
		return s.static.Name
	case s.method != "":
		return "a " + s.method + " method"
	}
	return "a function value"
}

// scope is what f's variables (declared in it, its parameters, what it
// captures) lead to: the classes whose objects a frame of f can touch.
func (q *Query) scope(f *Func) Reach {
	if s, ok := q.scopes[f]; ok {
		return s
	}
	s := q.p.reachOf(append(q.p.ownVars(f), q.p.flow.captured[f]...))
	q.scopes[f] = s
	return s
}

// ownVars lists the variables f declares: parameters, results,
// receiver and locals (not its literals').
func (p *Program) ownVars(f *Func) []*types.Var {
	var out []*types.Var
	if f.sig != nil {
		out = append(out, sigParams(f.sig, true)...)
		for i := 0; i < f.sig.Results().Len(); i++ {
			out = append(out, f.sig.Results().At(i))
		}
	}
	info := f.pkg.info
	ast.Inspect(f.body(), func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.Ident:
			if v, ok := info.Defs[x].(*types.Var); ok {
				out = append(out, v)
			}
		case *ast.CaseClause:
			if v, ok := info.Implicits[x].(*types.Var); ok {
				out = append(out, v)
			}
		}
		return true
	})
	return out
}

// wgGoFunc is the function a goroutine (*sync.WaitGroup).Go starts runs
// in: it calls the function given to Go, then the WaitGroup's Done.
const wgGoFunc = "sync.(*WaitGroup).Go.func1"

// wgGoDone adds, for frame i of wgGoFunc running f, the Done it calls
// once f returns: on the WaitGroup of each Go call that may start f
// (which of them started this goroutine the frames do not say), one
// WaitGroup in all (the receiver of the Go call that started it).
func (q *Query) wgGoDone(out *Future, seen map[Key]int, f *Func, i, line int) {
	for _, e := range q.p.goDones()[f] {
		if k := KeyOf(q.p.class(e.obj), e.op); q.tracked[k] { // no Add of its own before it
			out.add(seen, Cap{Key: k, Frame: i, Line: line, Via: "(*sync.WaitGroup).Go", Anywhere: true,
				Bounded: true, Objects: []string{fmt.Sprintf("%d.wg", i)}})
		}
	}
}

// add adds capability c, or merges it into the one of its key already
// there (seen: index + 1 by key): the objects both act on, anywhere if
// either may, and Fresh only when both say the same frame.
func (out *Future) add(seen map[Key]int, c Cap) {
	j := seen[c.Key]
	if j == 0 {
		out.Caps = append(out.Caps, c)
		seen[c.Key] = len(out.Caps)
		return
	}
	cp := &out.Caps[j-1]
	cp.Where, cp.Anywhere = append(cp.Where, c.Where...), cp.Anywhere || c.Anywhere
	if cp.Fresh != c.Fresh {
		cp.Fresh = 0
	}
	cp.addObjects(c.Objects, c.Bounded)
}

// addObjects adds the objects another release of the key acts on.
func (cp *Cap) addObjects(objs []string, bounded bool) {
	cp.Bounded = cp.Bounded && bounded
	for _, o := range objs {
		if cp.Bounded && !slices.Contains(cp.Objects, o) {
			cp.Objects = append(cp.Objects, o)
		}
	}
	if !cp.Bounded {
		cp.Objects = nil
	}
}

// widen adds to the capability of key k already there (seen: index + 1
// by key) the objects another of its releases acts on; the deeper
// frames stand for that release's key itself.
func (out *Future) widen(seen map[Key]int, k Key, objs []string, bounded bool) {
	j := seen[k]
	if j == 0 {
		return
	}
	out.Caps[j-1].addObjects(objs, bounded)
}

// goDones indexes, by the function started, the Done of each
// (*sync.WaitGroup).Go call read, built on first use.
func (p *Program) goDones() map[*Func][]event {
	p.goDoneOnce.Do(func() {
		p.goDone = map[*Func][]event{}
		for _, s := range p.flow.sites {
			if s.goDone == nil {
				continue
			}
			for _, f := range s.callees {
				p.goDone[f] = append(p.goDone[f], *s.goDone)
			}
		}
	})
	return p.goDone
}
