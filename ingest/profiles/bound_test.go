package profiles

import (
	"bytes"
	"compress/gzip"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/pprof/profile"
)

// bombProfile is a valid goroutine profile followed by n copies of one
// sample: gzipped, a few hundred bytes per million samples, and pprof
// would allocate about 170 bytes per sample to read it.
func bombProfile(t *testing.T, n int) []byte {
	t.Helper()
	fn := &profile.Function{ID: 1, Name: "main.f", Filename: "f.go"}
	loc := &profile.Location{ID: 1, Line: []profile.Line{{Function: fn, Line: 1}}}
	p := &profile.Profile{SampleType: []*profile.ValueType{{Type: "goroutine", Unit: "count"}}, PeriodType: &profile.ValueType{Type: "goroutine", Unit: "count"},
		Period: 1, TimeNanos: time.Now().UnixNano(), Function: []*profile.Function{fn}, Location: []*profile.Location{loc},
		Sample: []*profile.Sample{{Location: []*profile.Location{loc}, Value: []int64{1}}}}
	var raw bytes.Buffer
	if err := p.WriteUncompressed(&raw); err != nil {
		t.Fatal(err)
	}
	raw.Write(bytes.Repeat([]byte{0x12, 0x05, 0x0a, 0x01, 0x01, 0x10, 0x01}, n))
	return gz(raw.Bytes())
}

func gz(b []byte) []byte {
	var out bytes.Buffer
	w := gzip.NewWriter(&out)
	w.Write(b)
	w.Close()
	return out.Bytes()
}

// TestProfileBounds: a profile is refused, with ErrTooLarge and words
// saying which bound, when it decompresses past MaxBytes (one gzip layer
// or two), when its records would take more than MaxMemory, or when it
// is gzipped three times; within the bounds it is read.
func TestProfileBounds(t *testing.T) {
	small := bombProfile(t, 10)
	if _, err := ParseLimits(bytes.NewReader(small), Limits{}); err != nil {
		t.Fatalf("a small profile: %v", err)
	}
	lim := Limits{MaxBytes: 1 << 20, MaxMemory: 16 << 20}
	for name, c := range map[string]struct {
		data []byte
		want string
	}{
		"decompresses past MaxBytes": {bombProfile(t, 200_000), "decompresses to more than 1.0 MiB"},
		"two layers past MaxBytes":   {gz(bombProfile(t, 200_000)), "decompresses to more than 1.0 MiB"},
		"plain past MaxBytes":        {bytes.Repeat([]byte{0x12, 0x00}, 1<<20), "larger than 1.0 MiB"},
		"records past MaxMemory":     {bombProfile(t, 140_000), "reading it would take about"},
		"three gzip layers":          {gz(gz(gz([]byte("x")))), "gzip inside gzip inside gzip"},
	} {
		p, err := ParseLimits(bytes.NewReader(c.data), lim)
		if p != nil || err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error saying %q", name, err, c.want)
		}
		if c.want != "gzip inside gzip inside gzip" && !errors.Is(err, ErrTooLarge) {
			t.Errorf("%s: %v does not wrap ErrTooLarge", name, err)
		}
	}
}

// TestEstimateHoldsParse: the estimate is at least what pprof's parse of
// the bomb's shape and of a real-looking profile allocate.
func TestEstimateHoldsParse(t *testing.T) {
	raw, err := readBounded(bytes.NewReader(bombProfile(t, 50_000)), DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	est, n := estimate(raw)
	if n[0] != 50_001 {
		t.Errorf("counted %d samples, want 50,001", n[0])
	}
	if est < 50_000*170 {
		t.Errorf("estimate %d for 50,000 samples, below what pprof allocates for them", est)
	}
}
