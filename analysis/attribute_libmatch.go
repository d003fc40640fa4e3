package analysis

import (
	"go/ast"
	"go/parser"
	"go/token"
)

// framesByFile lists the bundle's frames by file.
func framesByFile(st *stackTable) map[string][]Frame {
	out := map[string][]Frame{}
	for _, f := range st.frames {
		if f.File != "" && f.Line > 0 {
			out[f.File] = append(out[f.File], f)
		}
	}
	return out
}

// matchesFrames reports whether the file on this machine is, as far as
// the bundle can tell, the one the target was built from: the bundle has
// frames in it, and each lies inside a declaration of its function in
// the file (by go/parser's line ranges). A Go root of another version
// moves lines, so its declarations no longer hold the frames' lines.
func (ls *libSource) matchesFrames(path string) bool {
	if ok, seen := ls.matched[path]; seen {
		return ok
	}
	if ls.matched == nil {
		ls.matched = map[string]bool{}
	}
	ok := declsHoldFrames(path, ls.frames[path])
	ls.matched[path] = ok
	return ok
}

// declsHoldFrames reports whether each frame (at least one) lies inside a
// declaration of its function in the file at path.
func declsHoldFrames(path string, frames []Frame) bool {
	if len(frames) == 0 {
		return false
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
	if err != nil {
		return false
	}
	spans := map[string][][2]int{}
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok {
			continue
		}
		k := fd.Name.Name
		if fd.Recv != nil && len(fd.Recv.List) == 1 {
			k = baseTypeName(fd.Recv.List[0].Type) + "." + k
		}
		spans[k] = append(spans[k], [2]int{fset.Position(fd.Pos()).Line, fset.Position(fd.End()).Line})
	}
	for _, fr := range frames {
		if !inDecl(spans, declKey(fr.Function), fr.Line) {
			return false
		}
	}
	return true
}

// inDecl reports whether line is inside a declaration named key.
func inDecl(spans map[string][][2]int, key string, line int) bool {
	for _, s := range spans[key] {
		if line >= s[0] && line <= s[1] {
			return true
		}
	}
	return false
}

// declKey is the name a function's declaration has in its package's
// source: T.M for a method (closures belong to it), else F.
func declKey(fn string) string {
	_, recv, _, name := splitFunc(fn)
	if recv != "" {
		return recv + "." + name
	}
	return name
}
