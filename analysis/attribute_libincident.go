package analysis

import (
	"fmt"
	"strings"

	"github.com/leakscope/leakscope/analysis/flame"
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

// libraryOwned reports whether an incident's goroutines belong to a
// library object: at least one member runs library code only, and every
// other goroutine member is the user's code parked in a method of the
// package those run (a worker in the object's Get). Its fix is then the
// library's release of the object, never a change to code the user does
// not own.
func libraryOwned(sus []Suspect, members []int) bool {
	own, parked := libraryMembers(sus, members)
	if len(own) == 0 {
		return false
	}
	pkgs := map[string]bool{}
	for _, s := range own {
		pkgs[libraryEntry(s.Stack)] = true
	}
	for _, s := range parked {
		if m := parkedMethod(s.Stack); m.Function == "" || !pkgs[flame.PackageOf(m.Function)] {
			return false
		}
	}
	return true
}

// libraryMembers splits an incident's goroutine members into those that
// run library code only and those with a frame of the user's code;
// a member without a stack counts as the user's.
func libraryMembers(sus []Suspect, members []int) (own, parked []Suspect) {
	for _, i := range members {
		s := sus[i]
		if s.Kind != KindGoroutine {
			continue
		}
		if _, at := userFrame(s.Stack); at >= 0 || len(s.Stack) == 0 {
			parked = append(parked, s)
		} else {
			own = append(own, s)
		}
	}
	return own, parked
}

// libraryEntry is the package of the outermost library frame of a
// goroutine that runs library code only (the runtime's aside).
func libraryEntry(stack []Frame) string {
	for i := len(stack) - 1; i >= 0; i-- {
		if !isRuntime(stack[i].Function) {
			return flame.PackageOf(stack[i].Function)
		}
	}
	return ""
}

// parkedMethod is the library method the user's innermost frame called
// and the goroutine is parked in (the frame just leaf-side of it), or
// the zero Frame when that frame is no method of a library type.
func parkedMethod(stack []Frame) Frame {
	_, at := userFrame(stack)
	if at < 1 {
		return Frame{}
	}
	f := stack[at-1]
	if isRuntime(f.Function) || len(receiverRef(f)) == 0 {
		return Frame{}
	}
	return f
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
	if _, parked := libraryMembers(sus, members); len(parked) > 0 {
		inc.Description = strings.Replace(inc.Description, "The leaked goroutines run library code only: they belong", "The leaked goroutines belong", 1) + parkedText(parked, r)
	}
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

// parkedText says which of the user's goroutines wait in the object's
// methods, each with its pattern: the symptom inside the incident.
func parkedText(parked []Suspect, r *libRelease) string {
	var parts []string
	for _, s := range parked {
		u, _ := userFrame(s.Stack)
		m := parkedMethod(s.Stack)
		_, _, _, name := splitFunc(m.Function)
		parts = append(parts, fmt.Sprintf("`%s` waits in its `%s` (%s)", shortName(u.Function), name, s.Pattern))
	}
	return fmt.Sprintf(" The user's goroutines parked in it wait for work the object will never get: %s; they return once `%s` is called.", strings.Join(parts, "; "), r.Method)
}
