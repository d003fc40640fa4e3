package analysis

import (
	"strings"
	"testing"
)

// TestReleaseFromSymbolsAlone checks that without the library's source
// (its module cache directory is gone) the release method comes from the
// executable's release methods the manifest lists, and the fix names it
// with the user's line; with neither, the fix says Close/Shutdown/Stop
// and what was missing, never a change to the library's goroutines.
func TestReleaseFromSymbolsAlone(t *testing.T) {
	lib := "/nonexistent/pkg/mod/example.com/pool@v1.2.0/pool.go"
	o := &Origin{Function: "main.(*svc).handle", File: "/src/svc/main.go", Line: 42, Basis: basisTrace}
	members := []Suspect{{Kind: KindGoroutine, Location: "example.com/pool.(*Pool).reap",
		Stack: []Frame{{Function: "example.com/pool.(*Pool).reap", File: lib, Line: 90}},
		CreationChain: []CreationHop{{Basis: basisTrace, Stack: []Frame{
			{Function: "example.com/pool.New", File: lib, Line: 30},
			{Function: "main.(*svc).handle", File: "/src/svc/main.go", Line: 42}}}}}}
	rf := &releaseFinder{src: newLibSource(""), syms: map[string]bool{"example.com/pool.(*Pool).Close": true}}
	r := rf.find(members, o)
	if r == nil || r.Method != "Close" || r.Basis != releaseSymbols || r.qualified() != "*pool.Pool" || r.Constructor != "example.com/pool.New" {
		t.Fatalf("release %+v, want (*pool.Pool).Close from symbols, made by pool.New", r)
	}
	fix := releaseFix(r, o)
	for _, want := range []string{"`(*pool.Pool).Close`", "`main.(*svc).handle`", "main.go:42", "`pool.New`"} {
		if !strings.Contains(fix, want) {
			t.Errorf("fix %q lacks %s", fix, want)
		}
	}
	rf.syms = map[string]bool{}
	if r := rf.find(members, o); r != nil {
		t.Fatalf("release %+v without source or symbols", r)
	}
	fix = unknownReleaseFix(o, "example.com/pool.New")
	if !strings.Contains(fix, "Close/Shutdown/Stop") || !strings.Contains(fix, "`pool.New`") || !strings.Contains(fix, "main.go:42") || strings.Contains(fix, "ctx.Done") {
		t.Errorf("fix without a known release %q", fix)
	}
}
