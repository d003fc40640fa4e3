package analysis

import (
	"fmt"
	"slices"
	"strings"

	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/ingest/schema"
	"github.com/leakscope/leakscope/internal/gosym"
)

// stackTable holds a bundle's frames and stacks dictionaries. Both are
// small (distinct frames and stacks), so they are kept in memory. Every
// frame knows whose code it is (code).
type stackTable struct {
	frames map[int64]Frame
	stacks map[int64][]int64
	code   *codeIndex
	// byFunction maps a function to the stacks it is on, by id, each
	// with the index of its first (innermost) frame there; built on
	// first use (stacksThrough).
	byFunction map[string][]stackAt
}

// stackAt is a stack and the index of a frame in it.
type stackAt struct {
	id int64
	at int
}

// stacksThrough returns the stacks with a frame of fn, in id order, each
// with fn's innermost frame index: one pass over the table for every
// function, then a lookup per question.
func (st *stackTable) stacksThrough(fn string) []stackAt {
	if st.byFunction == nil {
		st.byFunction = map[string][]stackAt{}
		ids := make([]int64, 0, len(st.stacks))
		for id := range st.stacks {
			ids = append(ids, id)
		}
		slices.Sort(ids)
		for _, id := range ids {
			for i, fid := range st.stacks[id] {
				f := st.frames[fid].Function
				if l := st.byFunction[f]; len(l) == 0 || l[len(l)-1].id != id {
					st.byFunction[f] = append(l, stackAt{id, i})
				}
			}
		}
	}
	return st.byFunction[fn]
}

// loadStacks reads the frames and stacks and classifies every frame as the
// user's, the standard library's or a dependency's, with the user's own
// prefixes (nil: $LEAKSCOPE_USER_CODE).
func loadStacks(b *bundle.Bundle, mem memory.Allocator, userCode []string) (*stackTable, error) {
	st := &stackTable{frames: map[int64]Frame{}, stacks: map[int64][]int64{}}
	if err := b.Frames(mem, func(f schema.Frame) {
		st.frames[f.ID] = Frame{Function: strings.Clone(f.Function), File: strings.Clone(f.File), Line: int(f.Line)}
	}); err != nil {
		return nil, fmt.Errorf("read frames: %w", err)
	}
	if err := b.Stacks(mem, func(s schema.Stack) { st.stacks[s.ID] = s.FrameIDs }); err != nil {
		return nil, fmt.Errorf("read stacks: %w", err)
	}
	st.code = newCodeIndex(b.Manifest.Target, userCodePrefixes(userCode), st.frames)
	st.code.classify(st.frames)
	return st, nil
}

// frames returns the frames of a stack, leaf first.
func (st *stackTable) framesOf(id int64) []Frame {
	ids := st.stacks[id]
	out := make([]Frame, 0, len(ids))
	for _, fid := range ids {
		if f, ok := st.frames[fid]; ok {
			out = append(out, f)
		}
	}
	return out
}

// functions returns the function names of a stack, leaf first.
func functions(frames []Frame) []string {
	out := make([]string, len(frames))
	for i, f := range frames {
		out[i] = f.Function
	}
	return out
}

// isRuntime reports whether fn belongs to the runtime or to the low-level
// packages a parked goroutine's leaf frames are in.
func isRuntime(fn string) bool {
	for _, p := range []string{"runtime.", "runtime/", "internal/", "sync.", "sync/atomic.", "time.Sleep", "syscall.", "reflect."} {
		if strings.HasPrefix(fn, p) {
			return true
		}
	}
	return false
}

// locationFrame picks the frame a report names as a group's location: the
// first frame (from the leaf) outside the standard library, or failing
// that the first outside the runtime, or the leaf.
func locationFrame(frames []Frame) (Frame, int) {
	for i, f := range frames {
		if !isStd(f) {
			return f, i
		}
	}
	for i, f := range frames {
		if !isRuntime(f.Function) {
			return f, i
		}
	}
	if len(frames) > 0 {
		return frames[0], 0
	}
	return Frame{Function: "?"}, -1
}

// entryFunction is the function a goroutine started in: its outermost
// frame other than runtime.goexit (and runtime.main, so the main goroutine
// is named by main.main).
func entryFunction(frames []Frame) string {
	for i := len(frames) - 1; i >= 0; i-- {
		if fn := frames[i].Function; fn != "runtime.goexit" && fn != "runtime.main" && fn != "" {
			return fn
		}
	}
	return ""
}

func containsFn(frames []Frame, fn string) bool {
	for _, f := range frames {
		if f.Function == fn {
			return true
		}
	}
	return false
}

// waitKind maps a wait reason to the kind of object waited on; "" for a
// goroutine that can run.
func waitKind(state string, frames []Frame) string {
	switch {
	case strings.HasPrefix(state, "chan send (nil chan)"), strings.HasPrefix(state, "chan receive (nil chan)"):
		return "nil"
	case state == "select (no cases)":
		return "forever"
	case strings.HasPrefix(state, "chan send"):
		return "chan send"
	case strings.HasPrefix(state, "chan receive"):
		return "chan receive"
	case state == "select":
		return "select"
	case state == "sync.Mutex.Lock", state == "sync.RWMutex.Lock":
		return "lock"
	case state == "sync.RWMutex.RLock":
		return "rlock"
	case state == "sync.WaitGroup.Wait":
		return "waitgroup"
	case state == "sync.Cond.Wait":
		return "cond"
	case state == "semacquire":
		return semaKind(frames)
	}
	return ""
}

// semaKind is the kind of a `semacquire` wait: a WaitGroup, a lock, a
// semaphore of the program's, or none when it waits for the runtime's
// own semaphore (a GC cycle an allocation assists, a stop of the world),
// which the runtime releases: it runs once that ends. Code outside the
// runtime reaches a semaphore only through the functions the runtime
// links into sync and internal/poll (runtime_Semacquire…), which every
// traceback prints; a dump that hides the runtime's frames shows a GC
// wait as `semacquire` at an allocation of the program's, with none of
// them. Without frames the kind is "sema".
func semaKind(frames []Frame) string {
	linked := len(frames) == 0
	for _, f := range frames {
		switch {
		case gcWait(f.Function):
			return "" // waits for a GC cycle (an allocation's assist, runtime.GC): it runs once the cycle ends
		case strings.HasPrefix(f.Function, "sync.(*WaitGroup)."):
			return "waitgroup"
		case strings.Contains(f.Function, "Mutex)."):
			return "lock"
		case semaLink(f.Function):
			linked = true
		}
	}
	if !linked {
		return ""
	}
	return "sema"
}

// semaLink reports the functions the runtime links into other packages
// for them to wait on a semaphore (sync.runtime_Semacquire,
// internal/poll.runtime_Semacquire, sync.runtime_SemacquireWaitGroup, …).
func semaLink(fn string) bool {
	return strings.HasPrefix(fn[strings.LastIndexByte(fn, '.')+1:], "runtime_Semacquire")
}

// gcWait reports the runtime functions a goroutine waiting for a garbage
// collection cycle is parked in (gcStart under mallocgc, runtime.GC).
func gcWait(fn string) bool {
	switch fn {
	case "runtime.gcStart", "runtime.GC", "runtime.gcWaitOnMark", "runtime.stopTheWorld", "runtime.stopTheWorldGC":
		return true
	}
	return false
}

// isInfraStack reports goroutines that are machinery rather than the
// program's work: the runtime, the profiler answering, the test runner,
// signal delivery, and a server's accept loop and idle connections. A
// goroutine not yet out of its go statement's wrapper is the code of
// the function that statement is in.
func isInfraStack(frames []Frame) bool {
	if len(frames) == 0 {
		return true
	}
	user := false
	for _, f := range unwrapUnstarted(frames) {
		fn := f.Function
		switch {
		case gosym.Wrapper(fn):
		case strings.HasPrefix(fn, "runtime/pprof."), strings.HasPrefix(fn, "net/http/pprof."), strings.HasPrefix(fn, "runtime/trace."),
			strings.HasPrefix(fn, "os/signal."):
			return true
		case strings.HasSuffix(f.File, "_testmain.go"), strings.HasPrefix(fn, "testing."):
		case strings.HasPrefix(fn, "net/http.") || strings.HasPrefix(fn, "net.") || strings.HasPrefix(fn, "bufio.") ||
			strings.HasPrefix(fn, "crypto/tls."):
		case isRuntime(fn):
		default:
			user = true
		}
	}
	return !user
}

// unwrapUnstarted gives a goroutine whose only frame outside the runtime
// is a go or defer statement's wrapper ("main.F.gowrap1") that frame as
// one of the function the statement is in ("main.F").
func unwrapUnstarted(frames []Frame) []Frame {
	at := -1
	for i, f := range frames {
		switch {
		case isRuntime(f.Function):
		case at >= 0 || !gosym.Wrapper(f.Function):
			return frames
		default:
			at = i
		}
	}
	if at < 0 {
		return frames
	}
	out := slices.Clone(frames)
	out[at].Function = out[at].Function[:strings.LastIndexByte(out[at].Function, '.')]
	return out
}
