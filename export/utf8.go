package export

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
)

// validUTF8 returns s with every byte that is not part of valid UTF-8
// written as \xNN, as the report shows it (Parquet strings must be UTF-8:
// DuckDB refuses a file that is not, and with it a whole fleet query).
func validUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			fmt.Fprintf(&b, `\x%02x`, s[i])
		} else {
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// validStrings returns a string array with invalid UTF-8 escaped, or a
// (retained) a itself when every value is valid. The caller releases it.
func validStrings(a *array.String, mem memory.Allocator) arrow.Array {
	bad := false
	for i := 0; i < a.Len() && !bad; i++ {
		bad = a.IsValid(i) && !utf8.ValidString(a.Value(i))
	}
	if !bad {
		a.Retain()
		return a
	}
	b := array.NewStringBuilder(mem)
	defer b.Release()
	b.Reserve(a.Len())
	for i := 0; i < a.Len(); i++ {
		if a.IsNull(i) {
			b.AppendNull()
			continue
		}
		b.Append(validUTF8(a.Value(i)))
	}
	return b.NewArray()
}

// validLists is validStrings for a list-of-string array (frame
// arguments): a itself, retained, when every value is valid UTF-8.
func validLists(a *array.List, mem memory.Allocator) arrow.Array {
	vals, ok := a.ListValues().(*array.String)
	if !ok {
		a.Retain()
		return a
	}
	bad := false
	for i := 0; i < vals.Len() && !bad; i++ {
		bad = vals.IsValid(i) && !utf8.ValidString(vals.Value(i))
	}
	if !bad {
		a.Retain()
		return a
	}
	b := array.NewListBuilder(mem, arrow.BinaryTypes.String)
	defer b.Release()
	vb := b.ValueBuilder().(*array.StringBuilder)
	offs := a.Offsets()
	for i := 0; i < a.Len(); i++ {
		if a.IsNull(i) {
			b.AppendNull()
			continue
		}
		b.Append(true)
		for j := offs[i]; j < offs[i+1]; j++ {
			if vals.IsNull(int(j)) {
				vb.AppendNull()
				continue
			}
			vb.Append(validUTF8(vals.Value(int(j))))
		}
	}
	return b.NewArray()
}
