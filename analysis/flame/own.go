package flame

import "strings"

// The capture's own machinery in its target: the net/http/pprof handlers
// it requests, the runtime/pprof profile writers (and the gzip and flate
// writers under them) and runtime/trace's Start and Stop with what they
// run. Their allocations and goroutines are the capture's, not the
// program's: in the heap of a service captured every few seconds they are
// a large part of the growth between two snapshots (the flate writer
// alone holds over 1 MiB per profile written). The annotation APIs a
// program calls itself (pprof labels, trace regions, tasks and logs) are
// the program's: what runs under them is its own work.
var (
	ownPackages = []string{"net/http/pprof", "runtime/pprof", "runtime/trace"}
	// annotations are name prefixes, inside ownPackages, of the APIs a
	// program calls for its own work.
	annotations = []string{
		"runtime/pprof.Do", "runtime/pprof.Label", "runtime/pprof.WithLabels", "runtime/pprof.SetGoroutineLabels",
		"runtime/pprof.ForLabels", "runtime/pprof.labelValue", "runtime/pprof.labelMap", "runtime/pprof.LabelSet",
		"runtime/trace.WithRegion", "runtime/trace.StartRegion", "runtime/trace.(*Region)", "runtime/trace.NewTask",
		"runtime/trace.(*Task)", "runtime/trace.Log", "runtime/trace.IsEnabled", "runtime/trace.user", "runtime/trace.fromContext",
	}
	// ownRuntime are runtime functions that only tracing and profiling run.
	ownRuntime = map[string]bool{
		"runtime.StartTrace": true, "runtime.StopTrace": true, "runtime.ReadTrace": true,
		"runtime.traceAdvance": true,
	}
)

// Own reports whether function belongs to the capture's own machinery in
// the target; a stack with such a frame is the capture's. A program that
// writes profiles or traces itself through the same functions is marked
// too: either way the stack is profiling, not the program's work.
func Own(function string) bool {
	if ownRuntime[function] {
		return true
	}
	pkg := PackageOf(function)
	for _, p := range ownPackages {
		if pkg != p {
			continue
		}
		for _, a := range annotations {
			if strings.HasPrefix(function, a) {
				return false
			}
		}
		return true
	}
	return false
}

// OwnDescription says in words what [Own] marks, for views to quote.
const OwnDescription = "the capture's own requests to the target (net/http/pprof handlers, runtime/pprof profile writers, runtime/trace Start and Stop, and what they call)"

// ownStack reports whether a stack holds a frame of the capture's own
// machinery.
func (s *Stacks) ownStack(frames []int32) bool {
	for _, f := range frames {
		if s.funcOwn[s.fn(f)] {
			return true
		}
	}
	return false
}
