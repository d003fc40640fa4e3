// Command inliner prints its own stack, taken below an inlined call, for
// the probe package's symbolizer test: one line per PC ("pc 0x..."), then
// one line per frame as the runtime expands them ("frame FUNC FILE:LINE").
package main

import (
	"fmt"
	"runtime"
)

func main() { outer() }

//go:noinline
func outer() { report(inner()) }

// inner is small enough to be inlined into outer.
func inner() []uintptr { return capture() }

//go:noinline
func capture() []uintptr {
	pcs := make([]uintptr, 32)
	return pcs[:runtime.Callers(1, pcs)]
}

func report(pcs []uintptr) {
	for _, pc := range pcs {
		fmt.Printf("pc %#x\n", pc)
	}
	frames := runtime.CallersFrames(pcs)
	for {
		f, more := frames.Next()
		fmt.Printf("frame %s %s:%d\n", f.Function, f.File, f.Line)
		if !more {
			break
		}
	}
}
