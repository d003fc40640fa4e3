package analysis

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
