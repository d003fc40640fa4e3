package flame

import (
	"unsafe"

	"github.com/apache/arrow/go/v15/arrow"
)

// arrowTimestamps views timestamp values as int64 without copying
// (arrow.Timestamp is an int64).
func arrowTimestamps(v []arrow.Timestamp) []int64 {
	if len(v) == 0 {
		return nil
	}
	return unsafe.Slice((*int64)(unsafe.Pointer(&v[0])), len(v))
}
