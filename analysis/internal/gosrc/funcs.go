package gosrc

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"sort"
	"strings"

	"github.com/leakscope/leakscope/internal/gosym"
)

// Func is one function of the program read with its body: a declaration
// or a function literal.
type Func struct {
	id     int
	decl   *ast.FuncDecl
	lit    *ast.FuncLit
	parent *Func // the function a literal is written in
	pkg    *pkg
	file   string
	sig    *types.Signature
	// Name is the function as the runtime names it, for the declaration
	// ("main.(*T).m"), with ".funcN" numbers for literals in the order
	// the compiler gives them.
	Name string
	// start and end are the lines it spans.
	start, end int
	// events are its operations and calls, in position order (its
	// literals' are theirs); its cfg is built on first use.
	events []event
	graph  *funcGraph
	// fresh are its fresh locals (fresh.go), read on first use.
	fresh map[*types.Var][]freshDef
}

// body is the function's body.
func (f *Func) body() *ast.BlockStmt {
	if f.lit != nil {
		return f.lit.Body
	}
	return f.decl.Body
}

// node is the function's syntax.
func (f *Func) node() ast.Node {
	if f.lit != nil {
		return f.lit
	}
	return f.decl
}

// Decl is the declaration the function is written in (itself, for a
// declaration).
func (f *Func) Decl() *Func {
	for f.parent != nil {
		f = f.parent
	}
	return f
}

// funcIndex finds the program's functions by object, literal and line.
type funcIndex struct {
	all    []*Func
	byObj  map[*types.Func]*Func
	byLit  map[*ast.FuncLit]*Func
	byFile map[string][]*Func // sorted by start line
}

// indexFuncs lists every function with a body in the packages whose
// bodies were read.
func indexFuncs(p *Program) *funcIndex {
	ix := &funcIndex{byObj: map[*types.Func]*Func{}, byLit: map[*ast.FuncLit]*Func{}, byFile: map[string][]*Func{}}
	for _, k := range p.order {
		if !k.bodies || k.info == nil {
			continue
		}
		for _, af := range k.files {
			file := p.fset.File(af.FileStart).Name()
			for _, d := range af.Decls {
				fd, ok := d.(*ast.FuncDecl)
				if !ok || fd.Body == nil {
					continue
				}
				obj, _ := k.info.Defs[fd.Name].(*types.Func)
				f := ix.add(p, k, file, &Func{decl: fd, Name: declName(k, fd)})
				if obj != nil {
					ix.byObj[obj] = f
					f.sig, _ = obj.Type().(*types.Signature)
				}
				ix.addLits(p, k, file, f, fd.Body)
			}
			ix.addInitLits(p, k, file, af)
		}
	}
	for file := range ix.byFile {
		fs := ix.byFile[file]
		sort.SliceStable(fs, func(i, j int) bool { return fs[i].start < fs[j].start })
	}
	return ix
}

// add numbers and files a function.
func (ix *funcIndex) add(p *Program, k *pkg, file string, f *Func) *Func {
	f.id, f.pkg, f.file = len(ix.all), k, file
	n := f.node()
	f.start, f.end = p.fset.Position(n.Pos()).Line, p.fset.Position(n.End()).Line
	ix.all = append(ix.all, f)
	ix.byFile[file] = append(ix.byFile[file], f)
	return f
}

// addLits indexes the function literals written directly in parent's
// body (and, through them, theirs), named as the compiler names them:
// parent.func1, parent.func2 in order, a literal's own as .1, .2.
func (ix *funcIndex) addLits(p *Program, k *pkg, file string, parent *Func, body ast.Node) {
	n := 0
	ast.Inspect(body, func(x ast.Node) bool {
		lit, ok := x.(*ast.FuncLit)
		if !ok {
			return true
		}
		n++
		name := fmt.Sprintf("%s.%d", parent.Name, n)
		if parent.lit == nil {
			name = fmt.Sprintf("%s.func%d", parent.Name, n)
		}
		f := ix.add(p, k, file, &Func{lit: lit, parent: parent, Name: name})
		f.sig, _ = k.info.TypeOf(lit).(*types.Signature)
		ix.byLit[lit] = f
		ix.addLits(p, k, file, f, lit.Body)
		return false
	})
}

// addInitLits indexes literals in package-level variable initialisers
// (named pkg.glob..funcN by the compiler).
func (ix *funcIndex) addInitLits(p *Program, k *pkg, file string, af *ast.File) {
	for _, d := range af.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok || gd.Tok != token.VAR {
			continue
		}
		holder := &Func{Name: k.symbol() + ".glob.", pkg: k}
		ix.addLits(p, k, file, holder, gd)
	}
}

// declName is a declaration's name as the runtime prints it:
// "pkg.F", "pkg.(*T).M", "pkg.T.M".
func declName(k *pkg, fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) != 1 {
		return k.symbol() + "." + fd.Name.Name
	}
	t := fd.Recv.List[0].Type
	ptr := false
	if s, ok := t.(*ast.StarExpr); ok {
		t, ptr = s.X, true
	}
	name := typeName(t)
	if ptr {
		return fmt.Sprintf("%s.(*%s).%s", k.symbol(), name, fd.Name.Name)
	}
	return fmt.Sprintf("%s.%s.%s", k.symbol(), name, fd.Name.Name)
}

// typeName is a receiver type's name without type parameters.
func typeName(e ast.Expr) string {
	switch t := e.(type) {
	case *ast.Ident:
		return t.Name
	case *ast.IndexExpr:
		return typeName(t.X)
	case *ast.IndexListExpr:
		return typeName(t.X)
	case *ast.ParenExpr:
		return typeName(t.X)
	}
	return ""
}

// FuncAt returns the function a frame of symbol fn is in at file:line:
// the innermost function whose lines hold the line, when its
// declaration is one the symbol names (a closure inlined elsewhere is
// named after every function it was inlined through, its own
// declaration last). It says why not otherwise.
func (p *Program) FuncAt(fn, file string, line int) (*Func, string) {
	if gosym.Wrapper(fn) {
		return nil, "a wrapper the compiler made"
	}
	fs, ok := p.funcs.byFile[file]
	if !ok {
		return nil, "source not read"
	}
	var chain []*Func // the functions holding the line, outermost first
	for _, f := range fs {
		if f.start > line {
			break
		}
		if line <= f.end {
			chain = append(chain, f)
		}
	}
	sort.SliceStable(chain, func(i, j int) bool { return depth(chain[i]) < depth(chain[j]) })
	if len(chain) == 0 {
		return nil, fmt.Sprintf("no function holds line %d of %s: source changed since the build", line, file)
	}
	best := chain[len(chain)-1]
	if d := gosym.ClosureDepth(fn); d < len(chain) {
		best = chain[d]
	}
	if !namesDecl(fn, best) {
		return nil, fmt.Sprintf("line %d of %s is in %s, not %s: source changed since the build", line, file, best.Name, fn)
	}
	return best, ""
}

// depth is how many literals deep a function is: 0 for a declaration,
// 1 for a literal in one.
func depth(f *Func) int {
	n := 0
	for ; f != nil; f = f.parent {
		if f.lit != nil {
			n++
		}
	}
	return n
}

// namesDecl reports whether symbol fn names f's declaration (or, for a
// package-level variable's literal, its package).
func namesDecl(fn string, f *Func) bool {
	d := f.Decl()
	sym := d.pkg.asSymbol(gosym.StripTypeArgs(fn))
	prefix := d.pkg.symbol() + "."
	if d.decl == nil {
		return strings.HasPrefix(sym, prefix)
	}
	want := gosym.StripTypeArgs(d.Name)
	if sym == want || strings.HasPrefix(sym, want+".") {
		return true
	}
	// Inlined: pkg.Outer.(*T).Inner.func1 names Inner's declaration
	// after the package.
	short := strings.TrimPrefix(want, prefix)
	return strings.HasPrefix(sym, prefix) && strings.Contains(sym+".", "."+short+".")
}
