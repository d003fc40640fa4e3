package analysis

import (
	"fmt"
	"go/ast"
	"sort"

	"github.com/leakscope/leakscope/ingest/schema"
)

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
	if c == nil || closureParent(fn) != "" {
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
