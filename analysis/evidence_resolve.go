package analysis

import (
	"fmt"
	"go/ast"
	"go/token"
	"sort"

	"github.com/leakscope/leakscope/ingest/schema"
	"github.com/leakscope/leakscope/internal/gosym"
)

// resolverOf returns the declaration's resolver, built once.
func resolverOf(p *parsedFunc) *resolver {
	if p.res != nil {
		return p.res
	}
	r := &resolver{assigned: map[string][]ast.Expr{}, types: map[string][]ast.Expr{}, methods: map[string]map[string]bool{},
		notified: map[string]bool{}, fields: map[string][]ast.Expr{}, asyncTimers: p.asyncTimers}
	ast.Inspect(p.decl, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.AssignStmt:
			if len(n.Lhs) == len(n.Rhs) {
				for i, l := range n.Lhs {
					if name := exprName(l); name != "" {
						r.assigned[name] = append(r.assigned[name], n.Rhs[i])
					}
				}
			}
		case *ast.ValueSpec:
			for i, id := range n.Names {
				if n.Type != nil {
					r.types[id.Name] = append(r.types[id.Name], n.Type)
				}
				if len(n.Values) == len(n.Names) {
					r.assigned[id.Name] = append(r.assigned[id.Name], n.Values[i])
				}
			}
		case *ast.Field:
			for _, id := range n.Names {
				r.types[id.Name] = append(r.types[id.Name], n.Type)
			}
		case *ast.KeyValueExpr:
			if id, ok := n.Key.(*ast.Ident); ok {
				r.fields[id.Name] = append(r.fields[id.Name], n.Value)
			}
		case *ast.CallExpr:
			if recv, m := methodCall(n); recv != "" {
				if r.methods[recv] == nil {
					r.methods[recv] = map[string]bool{}
				}
				r.methods[recv][m] = true
			}
			if pkgCall(n) == "signal.Notify" && len(n.Args) > 0 {
				if name := exprName(n.Args[0]); name != "" {
					r.notified[name] = true
				}
			}
		}
		return true
	})
	p.res = r
	return r
}

// maxFollow bounds how many assignments a channel is followed through.
const maxFollow = 4

// chanKind classifies the channel a receive reads: a timer's, a
// ticker's, a context's Done, one signal.Notify feeds, or another.
func (r *resolver) chanKind(e ast.Expr, depth int) string {
	e = unparen(e)
	switch pkgCall(e) {
	case "time.After":
		return caseTimer
	case "time.Tick":
		return caseTicker
	}
	if call, ok := e.(*ast.CallExpr); ok {
		if _, m := methodCall(call); m == "Done" && len(call.Args) == 0 {
			return caseDone
		}
		return caseChan
	}
	if sel, ok := e.(*ast.SelectorExpr); ok && sel.Sel.Name == "C" {
		if k := r.timerValue(sel.X); k != "" {
			return k
		}
		return caseMaybeTimer
	}
	name := exprName(e)
	if name == "" {
		return caseChan
	}
	if r.notified[name] {
		return caseSignal
	}
	if depth < maxFollow {
		for _, v := range r.assigned[name] {
			if k := r.chanKind(v, depth+1); k != caseChan {
				return k
			}
		}
	}
	return caseChan
}

// timerValue says whether x is a *time.Timer or *time.Ticker: made by
// time.NewTimer/NewTicker (directly, assigned, or given to its field in
// a composite literal), declared with that type, or a value whose Stop
// or Reset the declaration calls (only timers and tickers have both a C
// and those). "" when the declaration does not show.
func (r *resolver) timerValue(x ast.Expr) string {
	if k := timerMaker(x); k != "" {
		return k
	}
	name := exprName(x)
	if name == "" {
		return ""
	}
	vals := append([]ast.Expr(nil), r.assigned[name]...)
	if sel, ok := unparen(x).(*ast.SelectorExpr); ok {
		vals = append(vals, r.fields[sel.Sel.Name]...)
	}
	for _, v := range vals {
		if k := timerMaker(v); k != "" {
			return k
		}
	}
	for _, t := range r.types[name] {
		switch exprName(t) {
		case "time.Timer":
			return caseTimer
		case "time.Ticker":
			return caseTicker
		}
	}
	if m := r.methods[name]; m["Stop"] || m["Reset"] {
		return caseTimer
	}
	return ""
}

// timerMaker names what time.NewTimer or time.NewTicker makes.
func timerMaker(e ast.Expr) string {
	switch pkgCall(e) {
	case "time.NewTimer":
		return caseTimer
	case "time.NewTicker":
		return caseTicker
	}
	return ""
}

// recvCase classifies a receive from e, the statement holding it
// enclosed by stack: a timer's C right after that timer's Stop (in the
// branch where Stop returned false, or after a Stop in the same block)
// delivers nothing from Go 1.23 on, until someone calls Reset.
func (r *resolver) recvCase(p *parsedFunc, e ast.Expr, stack []ast.Node) waitCase {
	c := waitCase{kind: r.chanKind(e, 0), expr: printNode(p.fset, e), line: p.line(e.Pos())}
	if (c.kind == caseTimer || c.kind == caseTicker) && !r.asyncTimers {
		if sel, ok := unparen(e).(*ast.SelectorExpr); ok && afterStop(exprName(sel.X), stack) {
			c.kind = caseStopped
		}
	}
	return c
}

// commCase classifies one case of a select.
func (r *resolver) commCase(p *parsedFunc, cc *ast.CommClause) waitCase {
	switch s := cc.Comm.(type) {
	case nil:
		return waitCase{kind: caseDefault, line: p.line(cc.Pos())}
	case *ast.SendStmt:
		return waitCase{kind: caseSend, expr: printNode(p.fset, s.Chan), line: p.line(s.Pos())}
	case *ast.ExprStmt:
		if u, ok := unparen(s.X).(*ast.UnaryExpr); ok && u.Op == token.ARROW {
			return r.recvCase(p, u.X, nil)
		}
	case *ast.AssignStmt:
		if len(s.Rhs) == 1 {
			if u, ok := unparen(s.Rhs[0]).(*ast.UnaryExpr); ok && u.Op == token.ARROW {
				return r.recvCase(p, u.X, nil)
			}
		}
	}
	return waitCase{kind: caseChan, line: p.line(cc.Pos())}
}

// afterStop reports whether the statement at the end of stack follows a
// Stop of timer name: it is in the body of `if !name.Stop()`, or a
// statement before it in its block calls name.Stop() with no Reset in
// between.
func afterStop(name string, stack []ast.Node) bool {
	if name == "" {
		return false
	}
	for i := len(stack) - 1; i >= 0; i-- {
		switch n := stack[i].(type) {
		case *ast.FuncLit, *ast.FuncDecl:
			return false
		case *ast.BlockStmt:
			if i+1 >= len(stack) {
				continue
			}
			var stmt ast.Node = stack[i+1]
			if i > 0 {
				if ifs, ok := stack[i-1].(*ast.IfStmt); ok && ifs.Body == n && notStop(ifs.Cond, name) {
					return true
				}
			}
			last := ""
			for _, s := range n.List {
				if s == stmt {
					break
				}
				if es, ok := s.(*ast.ExprStmt); ok {
					if recv, m := methodCall(es.X); recv == name && (m == "Stop" || m == "Reset") {
						last = m
					}
				}
			}
			return last == "Stop"
		}
	}
	return false
}

// notStop reports whether cond is !name.Stop().
func notStop(cond ast.Expr, name string) bool {
	u, ok := unparen(cond).(*ast.UnaryExpr)
	if !ok || u.Op != token.NOT {
		return false
	}
	recv, m := methodCall(u.X)
	return recv == name && m == "Stop"
}

// paramWords names the argument words a frame of fn prints, from the
// function's declaration in the kept source: the receiver first, then
// each parameter, one name per printed word. A string, interface or
// complex value prints two words and a slice three (each named with its
// word: "name (word 2 of parameter 1)"); the list stops at the first
// parameter whose printed size the declaration does not show (a struct
// or array, a named type, a type parameter). Nil for a function whose
// declaration is not kept, a closure, or a generic function (its first
// word is the dictionary).
func (c *sourceCode) paramWords(fn string) []string {
	if c == nil || gosym.ClosureParent(fn) != "" {
		return nil
	}
	if names, ok := c.params[fn]; ok {
		return names
	}
	var names []string
	if fs := c.funcByName(fn); fs != nil && fs.status == schema.SourceOK {
		if p := fs.parsed(); p.err == nil && p.decl != nil && p.decl.Type.TypeParams == nil {
			names = declWords(p.decl)
		}
	}
	if c.params == nil {
		c.params = map[string][]string{}
	}
	c.params[fn] = names
	return names
}

// funcByName returns the kept source of fn from any file, the first
// by file name when two hold one (a function is in one file).
func (c *sourceCode) funcByName(fn string) *funcSource {
	var files []string
	for k := range c.funcs {
		if k[1] == fn {
			files = append(files, k[0])
		}
	}
	if len(files) == 0 {
		return nil
	}
	sort.Strings(files)
	return c.funcs[[2]string{files[0], fn}]
}

// declWords lists a declaration's printed argument words by name.
func declWords(d *ast.FuncDecl) []string {
	var out []string
	add := func(fields *ast.FieldList, receiver bool) bool {
		if fields == nil {
			return true
		}
		for _, f := range fields.List {
			n := printedWords(f.Type)
			if n == 0 {
				return false
			}
			names := []string{"_"}
			if len(f.Names) > 0 {
				names = names[:0]
				for _, id := range f.Names {
					names = append(names, id.Name)
				}
			}
			for _, name := range names {
				for w := 0; w < n; w++ {
					out = append(out, wordName(name, receiver, n, w))
				}
			}
		}
		return true
	}
	if add(d.Recv, true) {
		add(d.Type.Params, false)
	}
	return out
}

// wordName names word w of an n-word receiver or parameter.
func wordName(name string, receiver bool, n, w int) string {
	what := "parameter"
	if receiver {
		what = "receiver"
	}
	if n == 1 {
		return fmt.Sprintf("%s (%s)", name, what)
	}
	return fmt.Sprintf("%s (word %d of the %s)", name, w+1, what)
}

// printedWords is how many words a traceback prints for a value of type
// t, 0 when the declaration does not show it.
func printedWords(t ast.Expr) int {
	switch t := t.(type) {
	case *ast.StarExpr, *ast.MapType, *ast.ChanType, *ast.FuncType:
		return 1
	case *ast.InterfaceType:
		return 2
	case *ast.Ellipsis:
		return 3
	case *ast.ArrayType:
		if t.Len == nil {
			return 3
		}
	case *ast.Ident:
		return identWords[t.Name]
	case *ast.SelectorExpr:
		if x, ok := t.X.(*ast.Ident); ok {
			return selectorWords[x.Name+"."+t.Sel.Name]
		}
	}
	return 0
}

// identWords are the predeclared types' printed words.
var identWords = map[string]int{
	"bool": 1, "int": 1, "int8": 1, "int16": 1, "int32": 1, "int64": 1,
	"uint": 1, "uint8": 1, "uint16": 1, "uint32": 1, "uint64": 1, "uintptr": 1,
	"byte": 1, "rune": 1, "float32": 1, "float64": 1,
	"complex64": 2, "complex128": 2, "string": 2, "error": 2, "any": 2,
}

// selectorWords are well-known library types' printed words, by the
// usual import name.
var selectorWords = map[string]int{
	"context.Context": 2, "time.Duration": 1, "unsafe.Pointer": 1, "io.Reader": 2, "io.Writer": 2,
}

// nameRefs names, from the kept source, the parameters of the argument
// words a goroutine's verdicts may cite.
func (c *sourceCode) nameRefs(g *gor) {
	name := func(r *argRef) {
		if names := c.paramWords(r.fn); r.pos < len(names) {
			r.name = names[r.pos]
		}
	}
	name(&g.block.objAt)
	for i := range g.block.viaAt {
		name(&g.block.viaAt[i])
	}
	for i := range g.wordRefs {
		name(&g.wordRefs[i])
	}
}
