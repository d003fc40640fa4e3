package profiles

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/leakscope/leakscope/internal/format"
)

// A profile is read whole, and pprof's parser allocates per record: a
// gzipped profile of one sample repeated ten million times is 100 KB on
// disk, 70 MB decompressed and 1.7 GB parsed. So a profile is bounded
// twice before it is parsed: what it decompresses to, and the memory its
// records would take, estimated by walking its protobuf fields (no
// allocation per record).

// Limits bound what reading one profile may cost.
type Limits struct {
	// MaxBytes is the most a profile may decompress to (gzip, as many
	// layers as pprof reads); a profile that is not compressed may not be
	// larger either.
	MaxBytes int64
	// MaxMemory is the most the parsed profile may be estimated to take.
	MaxMemory int64
}

// DefaultLimits bound the profiles leakscope ingest reads (zero Limits
// fields take these): above the runtime's largest real profiles (the
// heap profile of 200,000 samples over 20,000 functions that profbench
// reads is 16 MB decompressed, estimated at 146 MB).
var DefaultLimits = Limits{MaxBytes: 128 << 20, MaxMemory: 1 << 30}

// ErrTooLarge is wrapped by the error for a profile past its [Limits].
var ErrTooLarge = errors.New("profile too large")

func (l Limits) orDefault() Limits {
	if l.MaxBytes <= 0 {
		l.MaxBytes = DefaultLimits.MaxBytes
	}
	if l.MaxMemory <= 0 {
		l.MaxMemory = DefaultLimits.MaxMemory
	}
	return l
}

// readBounded reads r whole, gunzipping it (twice at most, as pprof would
// have) within lim.MaxBytes.
func readBounded(r io.Reader, lim Limits) ([]byte, error) {
	data, err := readAtMost(r, lim.MaxBytes, "")
	if err != nil {
		return nil, err
	}
	for layer := 0; layer < 2 && len(data) >= 2 && data[0] == 0x1f && data[1] == 0x8b; layer++ {
		// Decompressed here rather than in pprof: it reports a truncated
		// stream only as a generic parse failure, and has no bound.
		zr, err := gzip.NewReader(bytes.NewReader(data))
		if err != nil {
			return nil, fmt.Errorf("corrupt gzip header: %w", err)
		}
		if data, err = readAtMost(zr, lim.MaxBytes, "gzip-compressed "); err != nil {
			return nil, err
		}
	}
	if len(data) >= 2 && data[0] == 0x1f && data[1] == 0x8b {
		return nil, errors.New("gzip inside gzip inside gzip: not a profile the runtime writes")
	}
	return data, nil
}

func readAtMost(r io.Reader, max int64, what string) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, max+1))
	switch {
	case err != nil && what != "":
		return nil, fmt.Errorf("corrupt or truncated gzip stream: %w", err)
	case err != nil:
		return nil, fmt.Errorf("read profile: %w", err)
	case int64(len(data)) > max && what != "":
		return nil, fmt.Errorf("%w: it decompresses to more than %s, the most a profile may take; refusing what may be a decompression bomb", ErrTooLarge, format.Bytes(float64(max)))
	case int64(len(data)) > max:
		return nil, fmt.Errorf("%w: it is larger than %s (decompressed), the most a profile may take", ErrTooLarge, format.Bytes(float64(max)))
	}
	return data, nil
}

// Estimated bytes per record of pprof's parsed profile (64-bit; measured
// against runtime.MemStats, rounded up): a sample with its slices and
// label maps, each location id (the id and the pointer it becomes), value
// and label of a sample, a location, a line, a function, a mapping and a
// string's header.
const (
	costSample   = 200
	costLocID    = 16
	costValue    = 8
	costLabel    = 160
	costLocation = 150
	costLine     = 50
	costFunction = 120
	costMapping  = 200
	costString   = 16
)

// checkMemory refuses a protobuf profile whose parse is estimated to take
// more than max. Input that is not a well-formed protobuf is estimated up
// to where it stops being one (the parser reads that far too), so a text
// profile passes.
func checkMemory(data []byte, max int64) error {
	est, counts := estimate(data)
	if est <= max {
		return nil
	}
	return fmt.Errorf("%w: reading it would take about %s (%s samples, %s locations, %s functions), more than the %s a profile may take",
		ErrTooLarge, format.Bytes(float64(est)), format.Int(counts[0]), format.Int(counts[1]), format.Int(counts[2]), format.Bytes(float64(max)))
}

// estimate walks the top-level fields of a Profile message and returns
// the estimated bytes of its parse and its samples, locations and
// functions.
func estimate(data []byte) (int64, [3]int64) {
	est := int64(len(data))
	var n [3]int64
	for p := data; len(p) > 0; {
		field, body, rest, ok := nextField(p)
		if !ok {
			break
		}
		p = rest
		switch field {
		case 2:
			n[0]++
			est += costSample + sampleCost(body)
		case 3:
			est += costMapping
		case 4:
			n[1]++
			est += costLocation + costLine*countField(body, 4)
		case 5:
			n[2]++
			est += costFunction
		case 6:
			est += costString + int64(len(body))
		}
	}
	return est, n
}

// sampleCost is a Sample message's location ids, values and labels.
func sampleCost(b []byte) int64 {
	var est int64
	for len(b) > 0 {
		field, body, rest, ok := nextField(b)
		if !ok {
			break
		}
		b = rest
		switch field {
		case 1:
			est += costLocID * varints(body)
		case 2:
			est += costValue * varints(body)
		case 3:
			est += costLabel
		}
	}
	return est
}

// countField counts the fields numbered field in message b.
func countField(b []byte, field uint64) int64 {
	var n int64
	for len(b) > 0 {
		f, _, rest, ok := nextField(b)
		if !ok {
			break
		}
		b = rest
		if f == field {
			n++
		}
	}
	return n
}

// varints is how many values a field holds: one for a varint, each
// varint of a packed run.
func varints(body []byte) int64 {
	if body == nil {
		return 1
	}
	var n int64
	for _, c := range body {
		if c < 0x80 {
			n++
		}
	}
	return n
}

// nextField splits the next field off b: its number and, for a
// length-delimited field, its body (nil for other wire types).
func nextField(b []byte) (field uint64, body, rest []byte, ok bool) {
	key, n := binary.Uvarint(b)
	if n <= 0 {
		return 0, nil, nil, false
	}
	b = b[n:]
	switch key & 7 {
	case 0:
		if _, n = binary.Uvarint(b); n <= 0 {
			return 0, nil, nil, false
		}
		return key >> 3, nil, b[n:], true
	case 1:
		if len(b) < 8 {
			return 0, nil, nil, false
		}
		return key >> 3, nil, b[8:], true
	case 5:
		if len(b) < 4 {
			return 0, nil, nil, false
		}
		return key >> 3, nil, b[4:], true
	case 2:
		l, n := binary.Uvarint(b)
		if n <= 0 || l > uint64(len(b)-n) {
			return 0, nil, nil, false
		}
		return key >> 3, b[n : n+int(l)], b[n+int(l):], true
	}
	return 0, nil, nil, false
}
