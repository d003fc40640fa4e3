package main

import (
	"bytes"
	"context"
	"io"
	"testing"
)

// TestReportsByteIdentical runs report twice on each sample bundle in
// every format (and the postmortem) and wants the same bytes: no map
// order, clock or sample choice may reach the output.
func TestReportsByteIdentical(t *testing.T) {
	for _, b := range []string{"operator-sim", "timeout-send", "cache-pin"} {
		dir := "bundles/" + b + ".lsb"
		for _, args := range [][]string{{"--format", "json"}, {"--format", "md"}, {"--format", "html"}, {"--postmortem"}} {
			var first []byte
			for i := 0; i < 2; i++ {
				var out bytes.Buffer
				if err := run(context.Background(), append([]string{"report", dir}, args...), &out, io.Discard); err != nil {
					t.Fatalf("report %s %v: %v", b, args, err)
				}
				if i == 0 {
					first = out.Bytes()
				} else if !bytes.Equal(first, out.Bytes()) {
					t.Errorf("report %s %v: two runs differ (%d and %d bytes)", b, args, len(first), out.Len())
				}
			}
		}
	}
}
