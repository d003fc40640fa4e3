package gosrc

import (
	"go/token"
	"go/types"
)

// Op is an operation on a channel, a sync object or a context.
type Op uint8

// The operations the program's statements perform.
const (
	OpNone      Op = iota
	OpSend         // ch <- v, or a select's send case
	OpRecv         // <-ch, range ch, or a select's receive case
	OpClose        // close(ch)
	OpLock         // Mutex.Lock, RWMutex.Lock
	OpUnlock       // Mutex.Unlock, RWMutex.Unlock
	OpRLock        // RWMutex.RLock
	OpRUnlock      // RWMutex.RUnlock
	OpAdd          // WaitGroup.Add
	OpDone         // WaitGroup.Done
	OpWait         // WaitGroup.Wait
	OpCondWait     // Cond.Wait
	OpSignal       // Cond.Signal
	OpBroadcast    // Cond.Broadcast
	OpCancel       // a context's cancel function called
	OpNotify       // signal.Notify: the runtime sends on it when a signal comes
	OpAddPos       // WaitGroup.Add with a positive constant: it releases no one
)

var opNames = [...]string{OpNone: "", OpSend: "send", OpRecv: "receive", OpClose: "close", OpLock: "Lock",
	OpUnlock: "Unlock", OpRLock: "RLock", OpRUnlock: "RUnlock", OpAdd: "Add", OpDone: "Done", OpWait: "Wait",
	OpCondWait: "Wait", OpSignal: "Signal", OpBroadcast: "Broadcast", OpCancel: "cancel", OpNotify: "signal.Notify", OpAddPos: "Add"}

func (o Op) String() string {
	if int(o) < len(opNames) {
		return opNames[o]
	}
	return "?"
}

// Releases lists the operations that can end a wait in w: a send or
// close ends a receive, a receive ends a send, Unlock ends Lock, Done (or
// Add) ends Wait, Signal or Broadcast ends a Cond's Wait.
func Releases(w Op) []Op {
	switch w {
	case OpRecv:
		return []Op{OpSend, OpClose, OpNotify}
	case OpSend:
		return []Op{OpRecv}
	case OpLock:
		return []Op{OpUnlock, OpRUnlock}
	case OpRLock:
		return []Op{OpUnlock}
	case OpWait:
		return []Op{OpDone, OpAdd}
	case OpCondWait:
		return []Op{OpSignal, OpBroadcast}
	}
	return nil
}

// acquireOf is the operation a release is matched with on one path: an
// Unlock releases only what was not locked on the same path before it
// (a goroutine holding a lock is one whose rest unlocks it first), a
// Done only what no Add before it added. OpNone for the others.
func acquireOf(op Op) Op {
	switch op {
	case OpUnlock:
		return OpLock
	case OpRUnlock:
		return OpRLock
	case OpDone, OpAdd:
		return OpAddPos
	}
	return OpNone
}

// event is an operation or a call in a function's body.
type event struct {
	pos, end token.Pos
	op       Op
	obj      node // the object operated on (ops)
	// select is set for a select's case: it happens only if the select
	// picks it.
	select_ bool
	call    *callSite
	// v is the variable the operand names, when it is one (fresh.go).
	v *types.Var
	// at is where a sync operation's object lies, when the code says
	// (place.go).
	at place
	// path is the operand as an access path (path.go).
	path accessPath
}

// syncOps maps the sync methods the analysis models to their operation.
var syncOps = map[string]Op{
	"(*sync.Mutex).Lock": OpLock, "(*sync.Mutex).Unlock": OpUnlock,
	"(*sync.RWMutex).Lock": OpLock, "(*sync.RWMutex).Unlock": OpUnlock,
	"(*sync.RWMutex).RLock": OpRLock, "(*sync.RWMutex).RUnlock": OpRUnlock,
	"(*sync.WaitGroup).Add": OpAdd, "(*sync.WaitGroup).Done": OpDone, "(*sync.WaitGroup).Wait": OpWait,
	"(*sync.Cond).Wait": OpCondWait, "(*sync.Cond).Signal": OpSignal, "(*sync.Cond).Broadcast": OpBroadcast,
	"(sync.Locker).Lock": OpLock, "(sync.Locker).Unlock": OpUnlock,
	"(*sync.Mutex).TryLock": OpNone, "(*sync.RWMutex).TryLock": OpNone, "(*sync.RWMutex).TryRLock": OpNone,
	"(*sync.RWMutex).RLocker": OpNone,
}

// syncOp returns the operation a call of fn performs, and whether fn is
// one the analysis models (whose body it does not read).
func syncOp(fn *types.Func) (Op, bool) {
	op, ok := syncOps[fn.Origin().FullName()]
	return op, ok
}
