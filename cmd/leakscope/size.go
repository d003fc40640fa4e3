package main

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// byteSize is a flag of bytes with an optional K, M, G or T suffix
// (powers of 1024, a trailing B or iB allowed: 20M, 20MB, 20MiB), the
// form every size flag of the command takes.
type byteSize int64

// String writes the size in the largest unit it is a whole number of.
func (b *byteSize) String() string {
	n := int64(*b)
	for _, u := range []struct {
		suffix string
		shift  uint
	}{{"T", 40}, {"G", 30}, {"M", 20}, {"K", 10}} {
		if n != 0 && n%(1<<u.shift) == 0 {
			return strconv.FormatInt(n>>u.shift, 10) + u.suffix
		}
	}
	return strconv.FormatInt(n, 10)
}

func (b *byteSize) Set(v string) error {
	n, err := parseByteSize(v)
	if err != nil {
		return err
	}
	*b = byteSize(n)
	return nil
}

// parseByteSize reads a size in bytes with an optional unit suffix.
func parseByteSize(v string) (int64, error) {
	s := strings.ToUpper(strings.TrimSpace(v))
	s = strings.TrimSuffix(strings.TrimSuffix(s, "B"), "I")
	if s == "" {
		return 0, fmt.Errorf("size %q: want bytes, e.g. 2G or 500M", v)
	}
	shift := map[byte]uint{'K': 10, 'M': 20, 'G': 30, 'T': 40}[s[len(s)-1]]
	if shift > 0 {
		s = s[:len(s)-1]
	}
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil || n < 0 || n > math.MaxInt64>>shift {
		return 0, fmt.Errorf("size %q: want bytes, e.g. 2G or 500M (suffixes K, M, G, T)", v)
	}
	return n << shift, nil
}
