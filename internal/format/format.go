// Package format writes leakscope's figures for people: byte sizes,
// counts, rates, scores and durations. It is the one place they are
// worded, so the CLI, the reports (Markdown, HTML, JSON display strings),
// the workbench's API, the fleet view and /metrics help text print every
// figure alike. It imports nothing of leakscope's (a leaf).
//
// The rules: bytes in binary units with one decimal above a kibibyte
// ("1.5 MiB", "512 B"); counts with comma thousands ("4,737,046"); rates
// per minute with their sign, whole above 100 and to a tenth below
// ("+814/min", "+3.5/min", "+1.5 MiB/min"); scores to a tenth ("97.6").
package format

import (
	"math"
	"strconv"
	"strings"
	"time"
)

var binaryUnits = []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB"}

// Bytes writes a byte count in binary units: "512 B", "1.5 MiB",
// "-3.0 KiB". Whole bytes below a KiB; one decimal above.
func Bytes(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "? B"
	}
	neg := v < 0
	if neg {
		v = -v
	}
	i := 0
	for v >= 1024 && i < len(binaryUnits)-1 {
		v /= 1024
		i++
	}
	var s string
	if i == 0 {
		s = strconv.FormatFloat(math.Round(v), 'f', 0, 64) + " B"
	} else {
		s = strconv.FormatFloat(v, 'f', 1, 64) + " " + binaryUnits[i]
		// 1023.96 KiB rounds to "1024.0 KiB": say "1.0 MiB" instead.
		if strings.HasPrefix(s, "1024.0 ") && i < len(binaryUnits)-1 {
			s = "1.0 " + binaryUnits[i+1]
		}
	}
	if neg && s != "0 B" {
		s = "-" + s
	}
	return s
}

// Int writes an integer with comma thousands separators: "-1,234,567".
func Int(v int64) string {
	s := strconv.FormatInt(v, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	head := len(s) % 3
	if head == 0 {
		head = 3
	}
	b.WriteString(s[:head])
	for i := head; i < len(s); i += 3 {
		b.WriteByte(',')
		b.WriteString(s[i : i+3])
	}
	return b.String()
}

// Count writes a count with its noun, plural when it is not one:
// "1 goroutine", "4,737 goroutines", "2.5 minutes", "3 entries". It is the
// module's one pluraliser.
func Count[N ~int | ~int32 | ~int64 | ~uint32 | ~uint64 | ~float64](n N, noun string) string {
	v := float64(n)
	if v == 1 || v == -1 {
		return Figure(v) + " " + noun
	}
	return Figure(v) + " " + pluralNoun(noun)
}

// Verb is the form of a verb that agrees with a count: one when n is
// one ("is", "leaks"), else many ("are", "leak").
func Verb[N ~int | ~int32 | ~int64 | ~uint32 | ~uint64 | ~float64](n N, one, many string) string {
	if v := float64(n); v == 1 || v == -1 {
		return one
	}
	return many
}

// Figure writes a figure with no needless ".0": whole with thousands
// separators ("4,737"), else as [Number] does ("2.5").
func Figure(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1<<62 {
		return Int(int64(v))
	}
	return Number(v)
}

func pluralNoun(noun string) string {
	switch {
	case strings.HasSuffix(noun, "s"), strings.HasSuffix(noun, "x"), strings.HasSuffix(noun, "ch"), strings.HasSuffix(noun, "sh"):
		return noun + "es"
	case strings.HasSuffix(noun, "y") && len(noun) > 1 && !strings.ContainsRune("aeiou", rune(noun[len(noun)-2])):
		return noun[:len(noun)-1] + "ies"
	}
	return noun + "s"
}

// Number writes a plain figure: whole above 100 (with thousands
// separators), to a tenth below ("836", "3.5", "-0.2").
func Number(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "?"
	}
	if math.Abs(v) >= 100 {
		return Int(int64(math.Round(v)))
	}
	s := strconv.FormatFloat(v, 'f', 1, 64)
	if s == "-0.0" {
		s = "0.0"
	}
	return s
}

// Rate writes a growth rate of a count per minute with its sign:
// "+814/min", "+3.5/min", "-2.0/min".
func Rate(perMin float64) string { return sign(perMin) + Number(perMin) + "/min" }

// ByteRate writes a growth rate of bytes per minute with its sign:
// "+1.5 MiB/min", "-512 B/min".
func ByteRate(perMin float64) string { return sign(perMin) + Bytes(perMin) + "/min" }

func sign(v float64) string {
	if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return ""
	}
	return "+"
}

// Score writes a 0–100 score to a tenth: "97.6", "25.0".
func Score(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "?"
	}
	return strconv.FormatFloat(math.Round(v*10)/10, 'f', 1, 64)
}

// Duration writes a length of time for people, to the second: "25 s",
// "1 minute", "4 minutes 10 s", "2 hours 5 minutes".
func Duration(d time.Duration) string {
	if d < 0 {
		return "-" + Duration(-d)
	}
	d = d.Round(time.Second)
	switch {
	case d < time.Minute:
		return strconv.FormatInt(int64(d/time.Second), 10) + " s"
	case d < time.Hour:
		m, s := int64(d/time.Minute), int64(d%time.Minute/time.Second)
		out := Count(m, "minute")
		if s > 0 {
			out += " " + strconv.FormatInt(s, 10) + " s"
		}
		return out
	}
	h, m := int64(d/time.Hour), int64(d%time.Hour/time.Minute)
	out := Count(h, "hour")
	if m > 0 {
		out += " " + Count(m, "minute")
	}
	return out
}

// Time writes an instant as every view prints it, in UTC to the
// millisecond: "2026-12-01 12:54:18.656 UTC"; the zero time is "".
func Time(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format("2006-01-02 15:04:05.000") + " UTC"
}

// Value writes a pprof sample value in its unit: "bytes" in binary units,
// "nanoseconds" in ns, µs, ms or s (two decimals), anything else as an
// integer with thousands separators.
func Value(v int64, unit string) string {
	switch unit {
	case "bytes":
		return Bytes(float64(v))
	case "nanoseconds":
		return Nanoseconds(v)
	}
	return Int(v)
}

// Nanoseconds writes a time in ns, µs, ms or s: "1.50 ms", "-2.00 s".
func Nanoseconds(v int64) string {
	sign, a := "", v
	if v < 0 {
		sign, a = "-", -v
	}
	f := float64(a)
	switch {
	case a >= 1e9:
		return sign + strconv.FormatFloat(f/1e9, 'f', 2, 64) + " s"
	case a >= 1e6:
		return sign + strconv.FormatFloat(f/1e6, 'f', 2, 64) + " ms"
	case a >= 1e3:
		return sign + strconv.FormatFloat(f/1e3, 'f', 2, 64) + " µs"
	}
	return sign + strconv.FormatInt(a, 10) + " ns"
}
