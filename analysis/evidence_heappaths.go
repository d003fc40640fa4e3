package analysis

import (
	"fmt"
	"sort"
)

// callPaths names, for an allocating line reached by several stacks,
// where each stack's call path parts from the others: the frame at which
// it parts from the stack nearest it (the one sharing the most frames
// from the leaf), with its line when both have the same function there;
// largest stack first, each name once. A single stack has no paths to
// tell apart: nil.
func callPaths(stacks []*heapStack) []string {
	if len(stacks) < 2 {
		return nil
	}
	byBytes := append([]*heapStack(nil), stacks...)
	sort.SliceStable(byBytes, func(i, j int) bool {
		if a, b := byBytes[i].last(), byBytes[j].last(); a != b {
			return a > b
		}
		return byBytes[i].id < byBytes[j].id
	})
	var out []string
	seen := map[string]bool{}
	for _, h := range byBytes {
		name := partingFrame(h, byBytes)
		if !seen[name] {
			seen[name] = true
			out = append(out, name)
		}
	}
	return out
}

// partingFrame names the frame of h at which it parts from the stacks of
// others nearest it; with its line when one of the nearest has the same
// function there.
func partingFrame(h *heapStack, others []*heapStack) string {
	at := -1
	for _, g := range others {
		if g != h {
			at = max(at, sharedFrames(h.frames, g.frames))
		}
	}
	if at >= len(h.frames) {
		return "(the allocating frame itself)"
	}
	f := h.frames[at]
	for _, g := range others {
		if g != h && sharedFrames(h.frames, g.frames) == at && at < len(g.frames) && g.frames[at].Function == f.Function {
			return fmt.Sprintf("%s:%d", f.Function, f.Line) // the paths part at a line
		}
	}
	return f.Function
}

// sharedFrames is how many frames, from the leaf, a and b have alike
// (function, file and line).
func sharedFrames(a, b []Frame) int {
	n := 0
	for n < len(a) && n < len(b) && a[n].Function == b[n].Function && a[n].File == b[n].File && a[n].Line == b[n].Line {
		n++
	}
	return n
}
