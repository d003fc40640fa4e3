package analysis

import (
	"fmt"
	"go/ast"

	"github.com/leakscope/leakscope/internal/gosym"
)

// fittingFix is the fix that fits what the evidence found of a goroutine
// group, in place of its pattern's usual one; "" keeps the usual one:
//   - a channel operation no statement of the program can complete
//     (the verdict's no-releaser evidence, from the program read as Go):
//     the missing reader (or sender), or the operation to remove;
//   - a lock held across a call that blocks (lock-held-while-blocked):
//     the lock, where it was taken, and the call made under it.
func fittingFix(in *loaded, x *candidate, sus *Suspect) string {
	if f := x.facts; f != nil && f.decided > 0 && len(f.releasers) == 0 && x.stmt != nil {
		if fix := noPartnerFix(x.stmt, sus.Location); fix != "" {
			return fix
		}
	}
	if sus.Pattern == "lock-held-while-blocked" {
		return heldAcrossFix(in.src, sus.Stack)
	}
	return ""
}

// noPartnerFix names the missing side of a send or receive that no
// statement of the program completes.
func noPartnerFix(w *waitStmt, fn string) string {
	if len(w.cases) != 1 || w.cases[0].expr == "" {
		return ""
	}
	ch, at := w.cases[0].expr, fmt.Sprintf("the %s at line %d of `%s`", w.kind, w.line, shortName(fn))
	switch w.kind {
	case stmtSend:
		return fmt.Sprintf("No statement of the program receives from `%s`: %s can never complete. Write the reader it was meant for (a goroutine that receives from `%s` for as long as senders run, started where the channel is made), or remove the send, and the goroutine started only to make it, if nothing needs the value.", ch, at, ch)
	case stmtReceive, stmtRange:
		return fmt.Sprintf("No statement of the program sends on or closes `%s`: %s can never complete. Send on or close `%s` where the work it waits for ends (close it when no more values will come), or remove the receive if nothing will ever be sent.", ch, at, ch)
	}
	return ""
}

// heldAcrossFix names the lock a goroutine holds across the call it is
// blocked in: the innermost frame of the user's code whose source shows
// a lock taken before the call at its line and not released since.
func heldAcrossFix(src *sourceCode, stack []Frame) string {
	for i, f := range stack {
		if i == 0 || !isUser(f) || literal(f.Function) {
			continue
		}
		lock, line, call := src.heldAcross(f)
		if lock == "" {
			continue
		}
		leaf, _ := userFrame(stack)
		return fmt.Sprintf("`%s` holds `%s` (locked at line %d) across its call of `%s` at line %d (into `%s`), and the call blocks in `%s` at line %d: every later caller queues on `%s`. Release `%s` before calling `%s` (read what you need under the lock, make the call, then lock again to store the result), then fix what the call blocks on.",
			shortName(f.Function), lock, line, call, f.Line, shortName(stack[i-1].Function), shortName(leaf.Function), leaf.Line, lock, lock, call)
	}
	return ""
}

// literal reports whether a function symbol is a function literal's
// ("main.(*issuer).Token.func1", "….func1.2") or a go or defer
// statement's wrapper ("….gowrap1", "….deferwrap1"): its lines are
// inside its enclosing declaration, whose statements are not its own.
func literal(fn string) bool { return gosym.ClosureDepth(fn) > 0 || gosym.Wrapper(fn) }

// heldAcross reads, from the kept source, the lock the function of
// frame f holds across the call at the frame's line: X.Lock() or
// X.RLock() in an earlier statement of a block enclosing the call, not
// undone by X.Unlock() or X.RUnlock() in between (deferred releases run
// only at return). It returns X as Go prints it, the line it was locked
// at and the called function as Go prints it ("i.sf.Do"); "" when the
// source does not show one.
func (c *sourceCode) heldAcross(f Frame) (lock string, line int, call string) {
	p, _ := c.funcAt(f)
	if p == nil {
		return "", 0, ""
	}
	ce, path := callAtLine(p, f.Line, func(ce *ast.CallExpr) bool {
		_, m := lockCall(p, ce)
		return m == ""
	})
	if ce == nil {
		return "", 0, ""
	}
	for x, h := range locksHeld(p, path) {
		if lock == "" || x < lock {
			lock, line = x, h.line
		}
	}
	return lock, line, printNode(p.fset, ce.Fun)
}

// patternHeldWhileBlocked is the pattern of a goroutine that holds a
// lock while it blocks.
const patternHeldWhileBlocked = "lock-held-while-blocked"

// mergeHolders joins the group of goroutines queued on a lock with the
// group of its holder blocked while holding it, when both have one
// origin function: the holder is the cause and the waiters its
// consequence, one incident. Groups keep their order.
func mergeHolders(sus []Suspect, groups [][]int) [][]int {
	holders := map[string]int{}
	for gi, g := range groups {
		for _, i := range g {
			if s := sus[i]; s.Pattern == patternHeldWhileBlocked && s.Origin != nil {
				holders[s.Origin.Function] = gi
			}
		}
	}
	if len(holders) == 0 {
		return groups
	}
	into := make([]int, len(groups))
	for gi, g := range groups {
		into[gi] = gi
		top := sus[g[0]]
		if hi, ok := holders[originFunc(top)]; ok && hi != gi && lockWait(top) && top.Pattern != patternHeldWhileBlocked {
			into[gi] = hi
		}
	}
	out := make([][]int, 0, len(groups))
	at := map[int]int{}
	for gi, g := range groups {
		t := into[gi]
		if j, ok := at[t]; ok {
			out[j] = append(out[j], g...)
			continue
		}
		at[t] = len(out)
		out = append(out, append([]int(nil), g...))
	}
	return out
}

// originFunc is a suspect's origin function, "" without one.
func originFunc(s Suspect) string {
	if s.Origin == nil {
		return ""
	}
	return s.Origin.Function
}

// holderOf is the member of an incident that holds a lock while it
// blocks, when others are queued behind it (nil otherwise): the cause
// the incident is named after.
func holderOf(sus []Suspect, members []int) *Suspect {
	for _, i := range members {
		if s := &sus[i]; s.Pattern == patternHeldWhileBlocked && len(members) > 1 {
			return s
		}
	}
	return nil
}
