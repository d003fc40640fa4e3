package analysis

import (
	"fmt"
	"strings"
)

// PatternLibraryObject is the incident pattern of goroutines that run
// library code only, started by an object the user's code creates per
// call and never releases (no library rule names the shape).
const PatternLibraryObject = "library-object-not-released"

// newReleaseFinder is the release finder of a loaded bundle: the
// library source at the frames' paths, the functions its frames and its
// manifest name, and its snapshot of the user's source.
func newReleaseFinder(in *loaded) *releaseFinder {
	t := in.b.Manifest.Target
	rf := &releaseFinder{src: in.libSource(), syms: map[string]bool{}, user: in.src}
	for _, f := range in.st.frames {
		rf.syms[f.Function] = true
	}
	for _, m := range t.Methods {
		rf.syms[m] = true
	}
	return rf
}

// libraryOwned reports whether every goroutine member of an incident
// (and at least one) runs library code only: its fix is then the
// library's release of the object that started them, never a change to
// code the user does not own.
func libraryOwned(sus []Suspect, members []int) bool {
	n := 0
	for _, i := range members {
		s := sus[i]
		if s.Kind != KindGoroutine {
			continue
		}
		if _, at := userFrame(s.Stack); at >= 0 || len(s.Stack) == 0 {
			return false
		}
		n++
	}
	return n > 0
}

// libraryIncident names a library-owned incident by the object it
// leaks and that object's release.
func libraryIncident(inc *Incident, sus []Suspect, members []int, rf *releaseFinder) {
	var ms []Suspect
	for _, i := range members {
		if sus[i].Kind == KindGoroutine {
			ms = append(ms, sus[i])
		}
	}
	inc.Pattern = PatternLibraryObject
	r := rf.find(ms, inc.Origin)
	if r == nil {
		_, called := originCall(ms, inc.Origin)
		inc.Title = "library object created per call and never released"
		inc.Description = "The leaked goroutines run library code only: they belong to an object the user's code creates and never releases (closes, shuts down or stops), so every call leaves one behind. Which method releases it is not known: the bundle holds neither the library's source nor a symbol table naming it."
		inc.Fix = unknownReleaseFix(inc.Origin, called.Function)
		inc.Evidence = append(inc.Evidence, Evidence{Kind: "release", Detail: "no release method found: the library's source is not readable where the report is made and no known function of the binary is a Close, Shutdown, ShutDown, Stop, Cancel or CloseIdleConnections method of the leaked goroutines' types"})
		return
	}
	inc.Title = fmt.Sprintf("%s created per call and never released", r.qualified())
	inc.Description = fmt.Sprintf("The leaked goroutines run library code only: they belong to a `%s` that the user's code creates on every call and never releases, and they run until its `%s` is called. Every call leaves one behind, with what it holds.", r.qualified(), r.Method)
	inc.Fix = releaseFix(r, inc.Origin)
	basis := "the library's source (its declarations at the frames' paths)"
	if r.Basis == releaseSymbols {
		basis = "the functions the bundle knows of the binary (no library source readable)"
	}
	d := fmt.Sprintf("the leaked goroutines run library code only; their object is a `%s`", r.qualified())
	if r.Constructor != "" {
		d += fmt.Sprintf(" made by `%s`", strings.ReplaceAll(shortName(r.Constructor), "[...]", ""))
	}
	inc.Evidence = append(inc.Evidence, Evidence{Kind: "release", Detail: d + fmt.Sprintf(", released by `%s`, per %s", r.Method, basis)})
}
