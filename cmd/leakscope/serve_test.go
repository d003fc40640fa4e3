package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestServeBadAddrNoToken checks that serve on an address it cannot bind
// fails without printing a token first.
func TestServeBadAddrNoToken(t *testing.T) {
	var out, errb bytes.Buffer
	err := run(context.Background(), []string{"serve", "--addr", "bogus", "--data", t.TempDir(), "--no-samples"}, &out, &errb)
	if err == nil || exitCode(err, &bytes.Buffer{}) != 1 || !strings.Contains(err.Error(), "bogus") {
		t.Fatalf("serve --addr bogus: err %v, want a failure naming the address", err)
	}
	if strings.Contains(out.String()+errb.String(), "token") {
		t.Errorf("serve --addr bogus printed a token before failing: %q %q", out.String(), errb.String())
	}
}

// TestUsageListsVersion checks that the command list names help and
// version, which are not in the commands table.
func TestUsageListsVersion(t *testing.T) {
	var out bytes.Buffer
	if err := run(context.Background(), []string{"--help"}, &out, &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"\n  version ", "\n  help ", "\n  capture "} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("usage lacks %q:\n%s", want, out.String())
		}
	}
}
