package analysis

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"slices"
	"strings"

	"github.com/leakscope/leakscope/analysis/flame"
	"github.com/leakscope/leakscope/ingest/binsyms"
)

// releaseNames are the methods that release a library object, in the
// order one is preferred when a type has several.
var releaseNames = binsyms.ReleaseNames

// Bases of a release: where the method was found.
const (
	releaseSource  = "source"  // the library's source (its declarations)
	releaseSymbols = "symbols" // the functions the bundle knows of the binary
)

// libRelease is the library object an incident leaks per call and the
// method that releases it.
type libRelease struct {
	// Constructor is the library function the user's frame called
	// ("database/sql.Open"); "" when no creation stack shows it.
	Constructor string
	// Pkg and Type name the object's type ("database/sql", "DB"); Ptr
	// whether it is held as a pointer; Iface whether Type is the
	// interface the constructor returns.
	Pkg, Type  string
	Ptr, Iface bool
	// Method is the release method ("Close"), Basis where it was found.
	Method, Basis string
}

// typeRef is a candidate type of the leaked object.
type typeRef struct {
	pkg, name, file string
	ptr             bool
}

// releaseFinder finds the object an incident leaks and its release from
// the library's source and the functions the bundle knows.
type releaseFinder struct {
	src  *libSource
	syms map[string]bool // function names known of the binary
	user *sourceCode     // the bundle's snapshot of the user's source
}

// find returns the release of the object the members' goroutines belong
// to, created from origin; nil when no type with a release method is
// known.
func (rf *releaseFinder) find(members []Suspect, o *Origin) *libRelease {
	if rf == nil {
		return nil
	}
	var cands []typeRef
	constructor := ""
	if lib, called := originCall(members, o); called.Function != "" {
		constructor = called.Function
		if outer := rf.outerConstructor(o, called); outer.name != "" {
			constructor = outer.pkg + "." + outer.name
			if t := rf.resultOf(outer.pkg, outer.name, called.File); t.name != "" {
				cands = append(cands, t)
			}
		}
		cands = append(cands, rf.typeOfCall(called)...)
		for i := len(lib) - 1; i >= 0; i-- {
			cands = append(cands, receiverRef(lib[i])...)
		}
	}
	for _, m := range members {
		cands = append(cands, goroutineTypes(m.Stack)...)
	}
	var iface *libRelease
	for _, c := range cands {
		method, basis := rf.releaseOf(c)
		if method == "" {
			continue
		}
		r := &libRelease{Constructor: constructor, Pkg: c.pkg, Type: c.name, Ptr: c.ptr, Method: method, Basis: basis}
		if p := rf.src.pkgAt(c.file); p != nil {
			_, r.Iface = p.types[c.name].(*ast.InterfaceType)
		}
		if exported(c.name) {
			return r
		}
		if iface == nil {
			iface = r
		}
	}
	return iface
}

// originCall returns, from the first member creation stack that holds
// the origin's frame, the library frames below it (leaf first) and the
// library function the origin called.
func originCall(members []Suspect, o *Origin) ([]Frame, Frame) {
	if o == nil {
		return nil, Frame{}
	}
	for _, m := range members {
		for _, h := range m.CreationChain {
			for i, f := range h.Stack {
				if i > 0 && f.Function == o.Function && f.Line == o.Line && !isUser(h.Stack[i-1]) {
					return h.Stack[:i], h.Stack[i-1]
				}
			}
		}
	}
	return nil, Frame{}
}

// typeOfCall is the type a called library function makes: its
// receiver's for a method, its result's (from the source) for a
// function.
func (rf *releaseFinder) typeOfCall(called Frame) []typeRef {
	if r := receiverRef(called); len(r) > 0 {
		return r
	}
	pkg, _, _, name := splitFunc(called.Function)
	if t := rf.resultOf(pkg, name, called.File); t.name != "" {
		return []typeRef{t}
	}
	return nil
}

// resultOf is the result type of function name of pkg, whose source is
// in the directory of file; zero when unknown.
func (rf *releaseFinder) resultOf(pkg, name, file string) typeRef {
	p := rf.src.pkgAt(file)
	if p == nil {
		return typeRef{}
	}
	t, ptr := p.result(name)
	if t == "" {
		return typeRef{}
	}
	return typeRef{pkg: pkg, name: t, file: file, ptr: ptr}
}

// goroutineTypes are the receiver types of a leaked goroutine's frames
// in the package of its entry function (the library object it runs
// for), outermost first: frames of the packages it calls into (a
// socket's, a buffer's) belong to other objects.
func goroutineTypes(stack []Frame) []typeRef {
	var lib []Frame
	for _, f := range stack {
		if !isUser(f) && !isRuntime(f.Function) {
			lib = append(lib, f)
		}
	}
	if len(lib) == 0 {
		return nil
	}
	entry := flame.PackageOf(lib[len(lib)-1].Function)
	var out []typeRef
	for i := len(lib) - 1; i >= 0; i-- {
		if flame.PackageOf(lib[i].Function) == entry {
			out = append(out, receiverRef(lib[i])...)
		}
	}
	return out
}

// receiverRef is the receiver type of a method frame (none for a
// function).
func receiverRef(f Frame) []typeRef {
	pkg, recv, ptr, _ := splitFunc(f.Function)
	if recv == "" {
		return nil
	}
	return []typeRef{{pkg: pkg, name: recv, file: f.File, ptr: ptr}}
}

// releaseOf is the release method of a type, from its package's source
// when readable, else from the functions the bundle knows.
func (rf *releaseFinder) releaseOf(t typeRef) (string, string) {
	if p := rf.src.pkgAt(t.file); p != nil {
		ms := p.methodSet(t.name)
		for _, n := range releaseNames {
			if slices.Contains(ms, n) {
				return n, releaseSource
			}
		}
		return "", ""
	}
	for _, n := range releaseNames {
		if rf.syms[fmt.Sprintf("%s.(*%s).%s", t.pkg, t.name, n)] || rf.syms[fmt.Sprintf("%s.%s.%s", t.pkg, t.name, n)] {
			return n, releaseSymbols
		}
	}
	return "", ""
}

// exported reports whether a Go name is exported.
func exported(name string) bool { return name != "" && name[0] >= 'A' && name[0] <= 'Z' }

// qualified is a type as the user writes it: "*sql.DB".
func (r *libRelease) qualified() string {
	t := shortName(r.Pkg) + "." + r.Type
	if r.Ptr {
		return "*" + t
	}
	return t
}

// methodName is the release as a method expression: "(*sql.DB).Close".
func (r *libRelease) methodName() string {
	if r.Ptr {
		return fmt.Sprintf("(%s).%s", r.qualified(), r.Method)
	}
	return r.qualified() + "." + r.Method
}

// releaseFix says the fix in the terms of the object leaked: its release
// method and the alternative of creating it once.
func releaseFix(r *libRelease, o *Origin) string {
	user, at := userTerms(o)
	return releaseFixIn(r, user, at)
}

// userTerms names the user's frame of an origin and its line, or the
// unknown caller.
func userTerms(o *Origin) (user, at string) {
	if o == nil {
		return "its creator (an unknown caller: see the origin evidence)", ""
	}
	user = "`" + shortName(o.Function) + "`"
	if o.File != "" && o.Line > 0 {
		at = fmt.Sprintf(" (%s:%d)", baseName(o.File), o.Line)
	}
	return user, at
}

// releaseFixIn is releaseFix with the user's frame named.
func releaseFixIn(r *libRelease, user, at string) string {
	ctor := "it"
	if r.Constructor != "" {
		ctor = "`" + strings.ReplaceAll(shortName(r.Constructor), "[...]", "") + "`"
	}
	if !exported(r.Type) || r.Iface {
		what := "what " + ctor + " returns"
		if r.Iface {
			what = fmt.Sprintf("the `%s` that %s returns", r.qualified(), ctor)
		}
		return fmt.Sprintf("Call `%s` on %s in %s%s once it is done with it, or create one at start-up and share it.",
			r.Method, what, user, at)
	}
	made := ""
	if r.Constructor != "" {
		made = " that " + ctor + " returns"
	}
	return fmt.Sprintf("Call `%s` when %s is done with the `%s`%s%s, or create one `%s` at start-up and share it.",
		r.methodName(), user, r.qualified(), made, at, r.qualified())
}

// unknownReleaseFix is the fix when no release method is known: the
// object's goroutines run library code only, so the fix is the
// library's release, not a change to their code.
func unknownReleaseFix(o *Origin, called string) string {
	user, at := userTerms(o)
	what := "the library object " + user + " creates"
	if o == nil {
		what, user = "the library object that starts them", "its creator"
	}
	if called != "" {
		what = fmt.Sprintf("what `%s` returns", shortName(called))
	}
	at = strings.Replace(strings.TrimSuffix(at, ")"), " (", " at ", 1)
	return fmt.Sprintf("Call the Close/Shutdown/Stop method of %s%s when %s is done with it, or create it once at start-up and share it (its goroutines run library code only; neither its source nor a symbol table showing its methods is in the bundle).", what, at, user)
}

// baseName is a file's last element.
func baseName(file string) string {
	if i := strings.LastIndexByte(file, '/'); i >= 0 {
		return file[i+1:]
	}
	return file
}

// outerConstructor reads the user's call at the origin's line, from the
// bundle's snapshot of its function, for a call of the same package
// that takes the library function's result as an argument:
// `sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp))` leaks the
// provider NewTracerProvider makes, not the option WithBatcher returns.
// The package is the same when both calls name it by the same
// identifier. Zero when there is no such call or no snapshot.
func (rf *releaseFinder) outerConstructor(o *Origin, called Frame) typeRef {
	pkg, recv, _, name := splitFunc(called.Function)
	if rf.user == nil || recv != "" || name == "" {
		return typeRef{}
	}
	fs := rf.user.funcs[[2]string{o.File, o.Function}]
	if fs == nil || fs.lines == nil || o.Line < fs.start {
		return typeRef{}
	}
	const header = "package p\n"
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "", header+strings.Join(fs.lines, "\n"), parser.SkipObjectResolution)
	if err != nil {
		return typeRef{}
	}
	line := o.Line - fs.start + 2 // the header is line 1
	var outer string
	var stack []*ast.CallExpr
	ast.Inspect(f, func(n ast.Node) bool {
		if n == nil {
			stack = stack[:len(stack)-1]
			return true
		}
		call, _ := n.(*ast.CallExpr)
		stack = append(stack, call)
		if call == nil || fset.Position(call.Lparen).Line != line {
			return true
		}
		x, sel := selectorCall(call)
		if sel != name || x == "" {
			return true
		}
		for _, up := range stack[:len(stack)-1] {
			if up == nil {
				continue
			}
			if ux, us := selectorCall(up); ux == x && us != "" {
				outer = us
				break // the outermost: stack runs from the root down
			}
		}
		return true
	})
	if outer == "" {
		return typeRef{}
	}
	return typeRef{pkg: pkg, name: outer}
}

// selectorCall names the qualifier and selector of a call `x.Sel(…)`.
func selectorCall(c *ast.CallExpr) (string, string) {
	s, ok := c.Fun.(*ast.SelectorExpr)
	if !ok {
		return "", ""
	}
	id, ok := s.X.(*ast.Ident)
	if !ok {
		return "", ""
	}
	return id.Name, s.Sel.Name
}
