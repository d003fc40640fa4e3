package main

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
)

// TestByteSize: every size flag takes units (K, M, G, T, with B or iB
// after them) and refuses what is not a size, or overflows.
func TestByteSize(t *testing.T) {
	for in, want := range map[string]int64{"512": 512, "20M": 20 << 20, "20mb": 20 << 20, "20MiB": 20 << 20, "2G": 2 << 30, "1T": 1 << 40, " 4K ": 4 << 10, "0": 0} {
		if got, err := parseByteSize(in); err != nil || got != want {
			t.Errorf("%q: %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "M", "-1", "1X", "1.5G", "9999999999T", "20 M B"} {
		if got, err := parseByteSize(in); err == nil {
			t.Errorf("%q: accepted as %d", in, got)
		}
	}
	b := byteSize(32 << 30)
	if b.String() != "32G" {
		t.Errorf("32 GiB shown as %q", b.String())
	}
}

// TestServeQuotaUnits: serve --quota 20M is a size, as the agent's
// --spool-max is (the listen error shows the flags were taken).
func TestServeQuotaUnits(t *testing.T) {
	var out, errb bytes.Buffer
	err := runServe(context.Background(), []string{"--quota", "20M", "--max-upload", "1G", "--max-unpacked", "2G", "--addr", "256.0.0.1:1"}, &out, &errb)
	var ue usageError
	if err == nil || errors.As(err, &ue) || !strings.Contains(err.Error(), "serve:") {
		t.Fatalf("serve --quota 20M: %v (%s), want a listen error", err, errb.String())
	}
}
