package ingest

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/leakscope/leakscope/ingest/bundle"
)

// Plausible file-name times: a Unix number outside these years is some
// other number (a pid, a size, a build id).
var (
	minNameTime = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	maxNameTime = time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC)
)

// isoName matches an ISO 8601 date and time inside a file name, in the
// forms people and tools write: 2026-11-30T11:57:43.321Z, 20261130T115743Z
// (leakscope's raw names), 2026-11-30_11-57-43, 2026-11-30 11.57.43+01:00.
var isoName = regexp.MustCompile(`(\d{4})-?(\d{2})-?(\d{2})[T_ -]?(\d{2})[:.-]?(\d{2})[:.-]?(\d{2})(?:[.,](\d{1,9}))?(Z|[+-]\d{2}(?::?\d{2})?)?`)

// unixName matches a Unix time in seconds, milliseconds, microseconds or
// nanoseconds: a run of 10, 13, 16 or 19 digits not inside a longer one.
var unixName = regexp.MustCompile(`(?:^|\D)(\d{10}|\d{13}|\d{16}|\d{19})(?:\D|$)`)

// NameTime reads a timestamp from a file name (the base name of path):
// leakscope's own raw names (KIND-20261130T115743.321Z.ext), ISO 8601
// forms, or Unix seconds or milliseconds. A time without a zone is taken
// as UTC. detail says what was read and how.
func NameTime(path string) (t time.Time, detail string, ok bool) {
	name := filepath.Base(path)
	if m := isoName.FindStringSubmatch(name); m != nil {
		if t, ok := isoTime(m); ok {
			d := fmt.Sprintf("%q in the file name", m[0])
			if m[8] == "" {
				d += " (no zone: UTC assumed)"
			}
			return t, d, true
		}
	}
	if m := unixName.FindStringSubmatch(name); m != nil {
		n, err := strconv.ParseInt(m[1], 10, 64)
		if err == nil {
			var t time.Time
			unit := map[int]string{10: "seconds", 13: "milliseconds", 16: "microseconds", 19: "nanoseconds"}[len(m[1])]
			switch len(m[1]) {
			case 10:
				t = time.Unix(n, 0)
			case 13:
				t = time.UnixMilli(n)
			case 16:
				t = time.UnixMicro(n)
			default:
				t = time.Unix(0, n)
			}
			if t.After(minNameTime) && t.Before(maxNameTime) {
				return t.UTC(), fmt.Sprintf("%s in the file name (Unix %s)", m[1], unit), true
			}
		}
	}
	return time.Time{}, "", false
}

// isoTime builds the time of an isoName match, refusing impossible dates.
func isoTime(m []string) (time.Time, bool) {
	num := func(s string) int { n, _ := strconv.Atoi(s); return n }
	y, mo, d, h, mi, s := num(m[1]), num(m[2]), num(m[3]), num(m[4]), num(m[5]), num(m[6])
	if mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 60 {
		return time.Time{}, false
	}
	var ns int
	if f := m[7]; f != "" {
		ns = num(f + strings.Repeat("0", 9-len(f)))
	}
	loc := time.UTC
	if z := m[8]; z != "" && z != "Z" {
		zh, zm := num(z[1:3]), 0
		if rest := strings.TrimPrefix(z[3:], ":"); rest != "" {
			zm = num(rest)
		}
		off := zh*3600 + zm*60
		if z[0] == '-' {
			off = -off
		}
		loc = time.FixedZone(z, off)
	}
	t := time.Date(y, time.Month(mo), d, h, mi, s, ns, loc)
	if t.Day() != d || !t.After(minNameTime) || !t.Before(maxNameTime) {
		return time.Time{}, false
	}
	return t.UTC(), true
}

// ParseTime reads a time given on the command line: RFC 3339 or any form
// [NameTime] reads, or Unix seconds or milliseconds.
func ParseTime(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t.UTC(), nil
	}
	if t, _, ok := NameTime(s); ok {
		return t, nil
	}
	return time.Time{}, fmt.Errorf("%q is not a time (want RFC 3339 such as 2026-11-30T11:57:43Z, or Unix seconds)", s)
}

// captureTime looks path up in the manifest of the capture bundle it was
// taken from, when it sits in a bundle's raw/ directory: that manifest
// holds the request time of the capture.
func captureTime(path string) (time.Time, string, bool) {
	dir := filepath.Dir(path)
	if filepath.Base(dir) != bundle.RawDir {
		return time.Time{}, "", false
	}
	root := filepath.Dir(dir)
	if _, err := os.Stat(filepath.Join(root, bundle.ManifestFile)); err != nil {
		return time.Time{}, "", false
	}
	m, err := bundle.ReadManifest(root)
	if err != nil {
		return time.Time{}, "", false
	}
	want := bundle.RawDir + "/" + filepath.Base(path)
	for _, a := range m.Artifacts {
		if a.Name == want && !a.Time.IsZero() {
			return a.Time, fmt.Sprintf("from the manifest of capture %s (%s)", m.CaptureID, root), true
		}
	}
	return time.Time{}, "", false
}

// fileTime says when the file at path was taken: the time given, else the
// capture bundle it came from, else a timestamp in its name, else its
// modification time.
func fileTime(path string, st os.FileInfo, given time.Time) (time.Time, string, string) {
	if !given.IsZero() {
		return given.UTC(), bundle.TimeGiven, "given with --at"
	}
	if t, d, ok := captureTime(path); ok {
		return t, bundle.TimeCapture, d
	}
	if t, d, ok := NameTime(path); ok {
		return t, bundle.TimeFileName, d
	}
	return st.ModTime().UTC(), bundle.TimeMtime, "the file's modification time"
}
