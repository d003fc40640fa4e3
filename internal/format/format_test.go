package format

import (
	"math"
	"testing"
	"time"
)

func TestBytes(t *testing.T) {
	for v, want := range map[float64]string{
		0: "0 B", 512: "512 B", -512: "-512 B", 1023: "1023 B", 1024: "1.0 KiB", 1536: "1.5 KiB",
		4737046: "4.5 MiB", 1024*1024 - 1: "1.0 MiB", -0.2: "0 B", 3 << 30: "3.0 GiB", math.NaN(): "? B",
	} {
		if got := Bytes(v); got != want {
			t.Errorf("Bytes(%v) = %q, want %q", v, got, want)
		}
	}
}

func TestInt(t *testing.T) {
	for v, want := range map[int64]string{0: "0", 999: "999", 1000: "1,000", -1234567: "-1,234,567", 11869277: "11,869,277", 100000: "100,000"} {
		if got := Int(v); got != want {
			t.Errorf("Int(%d) = %q, want %q", v, got, want)
		}
	}
}

func TestCount(t *testing.T) {
	for _, c := range []struct {
		n    int64
		noun string
		want string
	}{{1, "goroutine", "1 goroutine"}, {0, "goroutine", "0 goroutines"}, {4737, "goroutine", "4,737 goroutines"}, {2, "process", "2 processes"}, {3, "entry", "3 entries"}, {2, "day", "2 days"}} {
		if got := Count(c.n, c.noun); got != c.want {
			t.Errorf("Count(%d, %q) = %q, want %q", c.n, c.noun, got, c.want)
		}
	}
	for n, want := range map[float64]string{1: "1 goroutine", 2: "2 goroutines", 0: "0 goroutines", 2.5: "2.5 goroutines", 1234: "1,234 goroutines", 0.25: "0.2 goroutines"} {
		if got := Count(n, "goroutine"); got != want {
			t.Errorf("Count(%v) = %q, want %q", n, got, want)
		}
	}
	if got := Count(3, "data race"); got != "3 data races" {
		t.Errorf("Count(int) = %q", got)
	}
}

// TestVerb checks that a verb agrees with its count as Count's noun does.
func TestVerb(t *testing.T) {
	for n, want := range map[int64]string{1: "1 goroutine is stuck", 2: "2 goroutines are stuck", 0: "0 goroutines are stuck"} {
		if got := Count(n, "goroutine") + " " + Verb(n, "is", "are") + " stuck"; got != want {
			t.Errorf("%d: %q, want %q", n, got, want)
		}
	}
}

func TestRates(t *testing.T) {
	for v, want := range map[float64]string{836.4: "+836/min", 99.94: "+99.9/min", 3.5: "+3.5/min", -2: "-2.0/min", 0: "+0.0/min", 1234.5: "+1,235/min", -0.01: "0.0/min"} {
		if got := Rate(v); got != want {
			t.Errorf("Rate(%v) = %q, want %q", v, got, want)
		}
	}
	if got := ByteRate(11869276.9); got != "+11.3 MiB/min" {
		t.Errorf("ByteRate = %q", got)
	}
	if got := ByteRate(-512); got != "-512 B/min" {
		t.Errorf("ByteRate(-512) = %q", got)
	}
}

func TestScore(t *testing.T) {
	for v, want := range map[float64]string{97.6: "97.6", 72.06: "72.1", 72: "72.0", 100: "100.0", 0: "0.0", 24.95: "25.0"} {
		if got := Score(v); got != want {
			t.Errorf("Score(%v) = %q, want %q", v, got, want)
		}
	}
}

func TestDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		25 * time.Second: "25 s", time.Minute: "1 minute", 250 * time.Second: "4 minutes 10 s",
		2*time.Hour + 5*time.Minute: "2 hours 5 minutes", time.Hour + 20*time.Second: "1 hour", 1500 * time.Millisecond: "2 s",
		-30 * time.Second: "-30 s",
	} {
		if got := Duration(d); got != want {
			t.Errorf("Duration(%v) = %q, want %q", d, got, want)
		}
	}
}

func TestTime(t *testing.T) {
	at := time.Date(2026, 12, 1, 12, 54, 18, 656_400_000, time.FixedZone("x", 3600))
	if got := Time(at); got != "2026-12-01 11:54:18.656 UTC" {
		t.Errorf("Time = %q", got)
	}
	if Time(time.Time{}) != "" {
		t.Error("zero time not empty")
	}
}

func TestValue(t *testing.T) {
	for _, c := range []struct {
		v    int64
		unit string
		want string
	}{{1536, "bytes", "1.5 KiB"}, {1_500_000, "nanoseconds", "1.50 ms"}, {-2e9, "nanoseconds", "-2.00 s"}, {999, "nanoseconds", "999 ns"}, {1234567, "count", "1,234,567"}} {
		if got := Value(c.v, c.unit); got != c.want {
			t.Errorf("Value(%d, %q) = %q, want %q", c.v, c.unit, got, c.want)
		}
	}
}
