package analysis

import (
	"fmt"
	"sort"
)

// callPaths names, for an allocating line reached by several stacks,
// where each stack's call path parts from the others: the frame of each
// stack just above the frames (from the leaf) all of them share, largest
// stack first, each name once. A single stack has no paths to tell
// apart: nil.
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
	shared := sharedLeafFrames(byBytes)
	var out []string
	seen := map[string]bool{}
	for _, h := range byBytes {
		name := "(the allocating frame itself)"
		if shared < len(h.frames) {
			f := h.frames[shared]
			name = f.Function
			if sharedFunctions(byBytes, shared) {
				name = fmt.Sprintf("%s:%d", f.Function, f.Line) // the paths part at a line
			}
		}
		if !seen[name] {
			seen[name] = true
			out = append(out, name)
		}
	}
	return out
}

// sharedLeafFrames is how many frames, from the leaf, every stack has
// alike (function and line).
func sharedLeafFrames(stacks []*heapStack) int {
	n := 0
	for ; ; n++ {
		for _, h := range stacks {
			if n >= len(h.frames) || h.frames[n] != stacks[0].frames[n] {
				return n
			}
		}
	}
}

// sharedFunctions reports whether every stack has the same function at
// frame i (the paths part only by line there).
func sharedFunctions(stacks []*heapStack, i int) bool {
	for _, h := range stacks {
		if i >= len(h.frames) || h.frames[i].Function != stacks[0].frames[i].Function {
			return false
		}
	}
	return true
}
