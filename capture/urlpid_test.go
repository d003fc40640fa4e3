package capture

import (
	"net"
	"os"
	"strings"
	"testing"
	"time"
)

// TestURLProcessStart checks that a --url target on this host is found by
// its listening port: this test process listens, and its own start comes
// back, with where it was read.
func TestURLProcessStart(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	want, err := ProcessStart(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	at, from, ok := urlProcessStart("http://" + ln.Addr().String())
	if !ok || !at.Equal(want) || !strings.Contains(from, "listening on "+ln.Addr().String()) {
		t.Fatalf("urlProcessStart = %v, %q, %v; want %v from this process", at, from, ok, want)
	}
	if at.After(time.Now()) {
		t.Errorf("process start %v is in the future", at)
	}
	if _, _, ok := urlProcessStart("http://192.0.2.1:80"); ok {
		t.Error("a remote address was given a local process's start")
	}
}
