package gosrc

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/printer"
	"strings"
)

// Frame is one frame of a goroutine's stack as a dump prints it.
type Frame struct {
	Function, File string
	Line           int
}

// Wait is what the statement a goroutine blocks in waits on, read from
// the program: one case per way it can end.
type Wait struct {
	// Frame is the index of the frame whose statement it is; Func that
	// frame's function.
	Frame int
	Func  *Func
	Line  int
	// Select is set for a select statement.
	Select bool
	Cases  []Case
	// Loop is set when the statement is inside a for or range loop of
	// its function (a range over a channel included).
	Loop bool
}

// Case is one way a wait can end.
type Case struct {
	Op   Op // the operation waited in: OpRecv, OpSend, OpLock, OpRLock, OpWait, OpCondWait
	Obj  Class
	Expr string // the object's expression as written
	Line int
	// Default is a select's default case.
	Default bool
}

// Machinery reports functions whose frames are the blocking call's
// machinery, not its statement: the runtime, internal packages and the
// sync types the analysis models (their methods and closures; sync's
// own helpers). The rest of sync (Once, OnceFunc, Map, Pool) is read as
// code: sync.(*Once).doSlow holds its lock while it calls f.
func Machinery(fn string) bool {
	for _, p := range []string{"runtime.", "internal/", "sync/atomic."} {
		if strings.HasPrefix(fn, p) {
			return true
		}
	}
	rest, ok := strings.CutPrefix(fn, "sync.")
	if !ok {
		return false
	}
	for _, t := range []string{"(*Mutex).", "(*RWMutex).", "(*WaitGroup).", "(*Cond).", "(*rlocker).", "(*notifyList).", "runtime_", "throw", "fatal"} {
		if strings.HasPrefix(rest, t) {
			return true
		}
	}
	return false
}

// waitOps maps a dump's wait kind to the operations that block in it.
var waitOps = map[string][]Op{
	"chan receive": {OpRecv}, "chan send": {OpSend}, "select": {OpRecv, OpSend},
	"lock": {OpLock}, "rlock": {OpRLock}, "waitgroup": {OpWait}, "cond": {OpCondWait},
}

// WaitAt finds the statement a goroutine in wait kind ("chan receive",
// "chan send", "select", "lock", "rlock", "waitgroup", "cond") blocks in:
// the first frame, leaf first, outside the runtime and the sync methods.
// It says why there is none (its function not read, no such statement at
// the line: the source changed since the build).
func (p *Program) WaitAt(frames []Frame, kind string) (*Wait, string) {
	ops := waitOps[kind]
	if ops == nil {
		return nil, "not a wait on a channel or sync object"
	}
	i := 0
	for i < len(frames) && Machinery(frames[i].Function) {
		i++
	}
	if i == len(frames) {
		return nil, "no frame outside the runtime"
	}
	fr := frames[i]
	f, why := p.FuncAt(fr.Function, fr.File, fr.Line)
	if f == nil {
		return nil, why
	}
	w := &Wait{Frame: i, Func: f, Line: fr.Line, Loop: p.inLoop(f, fr.Line)}
	if kind == "select" || kind == "chan receive" {
		if sel := p.selectAt(f, fr.Line); sel != nil {
			p.selectCases(w, sel)
			return w, ""
		}
	}
	for _, e := range f.events {
		if e.select_ || e.call != nil || !hasOp(ops, e.op) || !p.spans(e, fr.Line) {
			continue
		}
		w.Cases = append(w.Cases, Case{Op: e.op, Obj: p.class(e.obj), Expr: p.exprAt(f, e), Line: p.fset.Position(e.pos).Line})
		return w, ""
	}
	return nil, fmt.Sprintf("no %s at line %d of %s: source changed since the build", kind, fr.Line, f.Name)
}

func hasOp(ops []Op, op Op) bool {
	for _, o := range ops {
		if o == op {
			return true
		}
	}
	return false
}

// spans reports whether an event's expression spans a line.
func (p *Program) spans(e event, line int) bool {
	return p.fset.Position(e.pos).Line <= line && line <= p.fset.Position(e.end).Line
}

// inLoop reports whether line of f is inside one of its for or range
// statements (a range's own line included: it receives there).
func (p *Program) inLoop(f *Func, line int) bool {
	found := false
	ast.Inspect(f.body(), func(n ast.Node) bool {
		switch n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.ForStmt, *ast.RangeStmt:
			if p.fset.Position(n.Pos()).Line <= line && line <= p.fset.Position(n.End()).Line {
				found = true
			}
		}
		return !found
	})
	return found
}

// selectAt finds the select statement of f whose keyword is at line.
func (p *Program) selectAt(f *Func, line int) *ast.SelectStmt {
	var found *ast.SelectStmt
	ast.Inspect(f.body(), func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.SelectStmt:
			if p.fset.Position(x.Select).Line == line {
				found = x
			}
		}
		return found == nil
	})
	return found
}

// selectCases lists a select's cases, each with the object its
// communication operates on.
func (p *Program) selectCases(w *Wait, sel *ast.SelectStmt) {
	w.Select = true
	for _, c := range sel.Body.List {
		cc := c.(*ast.CommClause)
		if cc.Comm == nil {
			w.Cases = append(w.Cases, Case{Default: true, Line: p.fset.Position(cc.Pos()).Line})
			continue
		}
		for _, e := range w.Func.events {
			if e.select_ && e.pos >= cc.Comm.Pos() && e.pos < cc.Comm.End() {
				w.Cases = append(w.Cases, Case{Op: e.op, Obj: p.class(e.obj), Expr: p.exprAt(w.Func, e), Line: p.fset.Position(e.pos).Line})
				break
			}
		}
	}
}

// exprAt prints the object expression of an operation as written: the
// channel of a send or receive, the receiver of a method call.
func (p *Program) exprAt(f *Func, e event) string {
	var found ast.Node
	ast.Inspect(f.body(), func(n ast.Node) bool {
		if n == nil || found != nil {
			return false
		}
		if n.Pos() > e.pos || n.End() < e.pos {
			return n.Pos() <= e.pos
		}
		switch x := n.(type) {
		case *ast.UnaryExpr:
			if x.OpPos == e.pos {
				found = x.X
			}
		case *ast.SendStmt:
			if x.Arrow == e.pos {
				found = x.Chan
			}
		case *ast.RangeStmt:
			if x.For == e.pos {
				found = x.X
			}
		case *ast.CallExpr:
			if x.Lparen == e.pos {
				found = x.Fun
				if s, ok := x.Fun.(*ast.SelectorExpr); ok {
					found = s.X
				} else if len(x.Args) > 0 {
					found = x.Args[0]
				}
			}
		}
		return true
	})
	if found == nil {
		return ""
	}
	var b bytes.Buffer
	if err := printer.Fprint(&b, p.fset, found); err != nil {
		return ""
	}
	return b.String()
}

// RuntimeSema reports, for a goroutine parked in "semacquire", whether
// the statement it is at holds no sync operation (no Lock, Wait or
// similar at the frame's line, read from the program): the semaphore is
// the runtime's own (an allocation waiting for a garbage collection
// cycle, a stop of the world), and the goroutine runs once it ends.
// False when the frame's function is not read.
func (p *Program) RuntimeSema(frames []Frame) bool {
	i := 0
	for i < len(frames) && Machinery(frames[i].Function) {
		i++
	}
	if i == len(frames) {
		return false
	}
	fr := frames[i]
	f, _ := p.FuncAt(fr.Function, fr.File, fr.Line)
	if f == nil {
		return false
	}
	for _, e := range f.events {
		if !p.spans(e, fr.Line) {
			continue
		}
		if e.call == nil && e.op != OpNone || e.call != nil && e.call.unknown && e.call.decl != nil && strings.HasPrefix(e.call.decl.FullName(), "(*sync.") {
			return false
		}
	}
	return true
}
