package analysis

import (
	"fmt"
	"strconv"
)

// word is one argument word a frame printed: its value, its position
// among the frame's printed words (aggregates flattened), and whether
// the runtime marked it "?" (possibly stale: a register argument whose
// spill slot may have been reused). An unsure word is never identity:
// it names no object and joins no goroutines.
type word struct {
	v      uint64
	pos    int
	unsure bool
}

// minPointer is the smallest value taken for an address: lower words are
// lengths, counts, flags and small constants.
const minPointer = 0x10000

// maxPointer bounds user-space addresses on the 64-bit platforms Go runs
// on (48-bit virtual addresses).
const maxPointer = 1 << 47

// pointerWords returns the words of a frame's printed arguments that can
// be addresses, in order, each with its position among all the printed
// words. Aggregates ("{0x1, 0x2}") are flattened; "...", "_" and non-hex
// words are skipped.
func pointerWords(args string, out []word) []word {
	pos := 0
	for i := 0; i < len(args); {
		c := args[i]
		if c != '0' || i+1 >= len(args) || args[i+1] != 'x' {
			i++
			continue
		}
		j := i + 2
		for j < len(args) && isHex(args[j]) {
			j++
		}
		v, err := strconv.ParseUint(args[i+2:j], 16, 64)
		unsure := j < len(args) && args[j] == '?'
		if err == nil && v >= minPointer && v < maxPointer {
			out = append(out, word{v: v, pos: pos, unsure: unsure})
		}
		pos++
		i = j
	}
	return out
}

// firstWord returns the first argument word of a frame (its receiver for
// a method), if it is a certain address.
func firstWord(args string) (uint64, bool) {
	return wordAt(args, 0)
}

// wordAt returns the printed word at position pos of a frame's
// arguments, if it is present and not marked "?"; small values (a Cond
// ticket, a count) included.
func wordAt(args string, pos int) (uint64, bool) {
	n := 0
	for i := 0; i < len(args); {
		if args[i] != '0' || i+1 >= len(args) || args[i+1] != 'x' {
			i++
			continue
		}
		j := i + 2
		for j < len(args) && isHex(args[j]) {
			j++
		}
		if n == pos {
			if j < len(args) && args[j] == '?' {
				return 0, false
			}
			v, err := strconv.ParseUint(args[i+2:j], 16, 64)
			return v, err == nil
		}
		n++
		i = j
	}
	return 0, false
}

// argRef says where an argument word was read: the frame's function and
// the word's position among its printed words.
type argRef struct {
	fn  string
	pos int
	// name is the parameter the word belongs to, from the function's
	// declaration in the kept source ([sourceCode.paramWords]); "" when
	// not known.
	name string
}

// String names the word for evidence texts: the parameter by name when
// the function's declaration is kept or its signature known (the
// runtime's and sync's waiting functions, whose signatures are fixed),
// else by position.
func (a argRef) String() string {
	if a.fn == "" {
		return ""
	}
	if a.name != "" {
		return fmt.Sprintf("%s of %s", a.name, a.fn)
	}
	if names := waitParams[a.fn]; a.pos < len(names) {
		return fmt.Sprintf("%s of %s", names[a.pos], a.fn)
	}
	return fmt.Sprintf("argument word %d of %s", a.pos+1, a.fn)
}

// waitParams are the parameter names of the functions a blocked
// goroutine's frames show, from their Go declarations (receiver first),
// one per printed word up to the first aggregate.
var waitParams = map[string][]string{
	"runtime.chansend":                                {"c", "ep", "block", "callerpc"},
	"runtime.chansend1":                               {"c", "elem"},
	"runtime.chanrecv":                                {"c", "ep", "block"},
	"runtime.chanrecv1":                               {"c", "elem"},
	"runtime.chanrecv2":                               {"c", "elem"},
	"runtime.semacquire1":                             {"addr", "lifo", "profile", "skipframes", "reason"},
	"runtime.notifyListWait":                          {"l", "t"},
	"sync.runtime_notifyListWait":                     {"l", "t"},
	"internal/sync.runtime_SemacquireMutex":           {"s", "lifo", "skipframes"},
	"sync.runtime_SemacquireRWMutexR":                 {"s", "lifo", "skipframes"},
	"sync.runtime_SemacquireRWMutex":                  {"s", "lifo", "skipframes"},
	"sync.runtime_SemacquireWaitGroup":                {"addr", "synctest"},
	"sync.runtime_Semacquire":                         {"s"},
	"internal/sync.(*Mutex).lockSlow":                 {"m (receiver)"},
	"internal/sync.(*Mutex).Lock":                     {"m (receiver)"},
	"sync.(*Mutex).lockSlow":                          {"m (receiver)"},
	"sync.(*Mutex).Lock":                              {"m (receiver)"},
	"sync.(*RWMutex).Lock":                            {"rw (receiver)"},
	"sync.(*RWMutex).RLock":                           {"rw (receiver)"},
	"sync.(*WaitGroup).Wait":                          {"wg (receiver)"},
	"sync.(*Cond).Wait":                               {"c (receiver)"},
	"sync.(*Once).doSlow":                             {"o (receiver)", "f"},
	"golang.org/x/sync/semaphore.(*Weighted).Acquire": {"s (receiver)"},
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}
