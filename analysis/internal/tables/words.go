package tables

import (
	"strconv"
)

// Word is one argument word a frame printed: its value, its position
// among the frame's printed words (aggregates flattened), and whether
// the runtime marked it "?" (possibly stale: a register argument whose
// spill slot may have been reused). An unsure word is never identity:
// it names no object and joins no goroutines.
type Word struct {
	V      uint64
	Pos    int
	Unsure bool
}

// MinPointer is the smallest value taken for an address: lower words are
// lengths, counts, flags and small constants.
const MinPointer = 0x10000

// MaxPointer bounds user-space addresses on the 64-bit platforms Go runs
// on (48-bit virtual addresses).
const MaxPointer = 1 << 47

// PointerWords returns the words of a frame's printed arguments that can
// be addresses, in order, each with its position among all the printed
// words. Aggregates ("{0x1, 0x2}") are flattened; "...", "_" and non-hex
// words are skipped.
func PointerWords(args string, out []Word) []Word {
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
		if err == nil && v >= MinPointer && v < MaxPointer {
			out = append(out, Word{V: v, Pos: pos, Unsure: unsure})
		}
		pos++
		i = j
	}
	return out
}

// FirstWord returns the first argument word of a frame (its receiver for
// a method), if it is a certain address.
func FirstWord(args string) (uint64, bool) {
	return WordAt(args, 0)
}

// WordAt returns the printed word at position pos of a frame's
// arguments, if it is present and not marked "?"; small values (a Cond
// ticket, a count) included.
func WordAt(args string, pos int) (uint64, bool) {
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

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}
