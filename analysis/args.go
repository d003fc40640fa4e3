package analysis

import "strconv"

// word is one argument word a frame printed: its value, and whether the
// runtime marked it "?" (possibly stale: a register argument whose spill
// slot may have been reused).
type word struct {
	v      uint64
	unsure bool
}

// minPointer is the smallest value taken for an address: lower words are
// lengths, counts, flags and small constants.
const minPointer = 0x10000

// maxPointer bounds user-space addresses on the 64-bit platforms Go runs
// on (48-bit virtual addresses).
const maxPointer = 1 << 47

// pointerWords returns the words of a frame's printed arguments that can
// be addresses, in order. Aggregates ("{0x1, 0x2}") are flattened;
// "...", "_" and non-hex words are skipped.
func pointerWords(args string, out []word) []word {
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
			out = append(out, word{v: v, unsure: unsure})
		}
		i = j
	}
	return out
}

// firstWord returns the first argument word of a frame (its receiver for
// a method), if it is a certain address.
func firstWord(args string) (uint64, bool) {
	j := 0
	for j < len(args) && args[j] != ',' && args[j] != ' ' {
		j++
	}
	var buf [1]word
	ws := pointerWords(args[:j], buf[:0])
	if len(ws) != 1 || ws[0].unsure {
		return 0, false
	}
	return ws[0].v, true
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}
