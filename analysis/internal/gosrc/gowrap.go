package gosrc

import (
	"go/ast"
	"go/token"
	"strings"

	"github.com/leakscope/leakscope/internal/gosym"
)

// A goroutine whose stack is only the wrapper the compiler made for its
// go statement ("main.F.gowrap1", at the statement's line) has not yet
// entered the function the statement calls: it will run all of it, on
// what its creator passed.

// goStmtCall is the go statement's call a wrapper frame stands for: the
// go call event of the function declaring the wrapper, on the
// statement at the frame's line.
func (p *Program) goStmtCall(fr Frame) (*Func, event, bool) {
	i := strings.LastIndexByte(fr.Function, '.')
	if !gosym.Wrapper(fr.Function) || !strings.HasPrefix(fr.Function[i+1:], "gowrap") {
		return nil, event{}, false
	}
	f, _ := p.FuncAt(fr.Function[:i], fr.File, fr.Line)
	if f == nil {
		return nil, event{}, false
	}
	lparen := token.NoPos
	ast.Inspect(f.body(), func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.FuncLit:
			return false // its go statements are its own
		case *ast.GoStmt:
			if p.fset.Position(x.Go).Line == fr.Line {
				lparen = x.Call.Lparen
			}
		}
		return lparen == token.NoPos
	})
	if lparen == token.NoPos {
		return nil, event{}, false
	}
	for _, e := range f.events {
		if e.call != nil && e.call.kind == callGo && e.call.pos == lparen {
			return f, e, true
		}
	}
	return nil, event{}, false
}

// goCallFuture adds what the call of a go statement (e, in f) reaches,
// for a goroutine at frame i that has not yet entered it.
func (q *Query) goCallFuture(out *Future, seen map[Key]int, f *Func, e event, i int) {
	scope := q.scope(f)
	line := q.p.fset.Position(e.pos).Line
	emit := func(k Key, _ event) {
		if c := q.p.KeyClass(k); c.Escapes() || scope.Has(c) {
			out.add(seen, Cap{Key: k, Frame: i, Line: line, Via: callName(e.call), Where: []Where{{}}, Anywhere: true})
		}
	}
	if e.call.unknown && out.Unknown == "" {
		out.Unknown = callName(e.call)
	}
	q.anyOf(e, emit)
	q.stepClassAll(e, emit)
}

// unstartedGo reports a goroutine whose frames (leaf first) show no
// function of its own, only its go statement's wrapper (frame i): the
// go statement's call (e, in f) it is about to make.
func (p *Program) unstartedGo(frames []Frame) (f *Func, e event, i int, ok bool) {
	for i, fr := range frames {
		if Machinery(fr.Function) || fr.Function == "" {
			continue
		}
		f, e, ok := p.goStmtCall(fr)
		return f, e, i, ok
	}
	return nil, event{}, 0, false
}
