package flight

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// TestServeRecording reads the recording the import started from the
// default mux: a Go execution trace; other methods are refused.
func TestServeRecording(t *testing.T) {
	if Default == nil {
		t.Fatal("the import started no recorder")
	}
	if got := Default.Config(); got.MinAge != DefaultMinAge || got.MaxBytes != DefaultMaxBytes {
		t.Errorf("config %+v, want the defaults", got)
	}
	srv := httptest.NewServer(http.DefaultServeMux)
	defer srv.Close()
	done := make(chan struct{})
	go func() { // something to trace
		defer close(done)
		for deadline := time.Now().Add(200 * time.Millisecond); time.Now().Before(deadline); {
			ch := make(chan int)
			go func() { ch <- 1 }()
			<-ch
		}
	}()
	<-done
	resp, err := http.Get(srv.URL + Path)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !bytes.HasPrefix(body, []byte("go 1.")) || !bytes.Contains(body[:16], []byte(" trace")) {
		t.Fatalf("GET %s: %s, %d bytes starting %q; want a Go execution trace", Path, resp.Status, len(body), body[:min(16, len(body))])
	}
	resp, err = http.Post(srv.URL+Path, "text/plain", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST %s: %s, want 405", Path, resp.Status)
	}
}

func TestFromEnv(t *testing.T) {
	for _, c := range []struct {
		v    string
		age  time.Duration
		on   bool
		fail bool
	}{
		{"", 0, true, false}, {"off", 0, false, false}, {"2m", 2 * time.Minute, true, false},
		{"30", 30 * time.Second, true, false}, {"-1s", 0, false, true}, {"soon", 0, false, true},
	} {
		cfg, on, err := fromEnv(c.v)
		if cfg.MinAge != c.age || on != c.on || (err != nil) != c.fail {
			t.Errorf("LEAKSCOPE_FLIGHT=%q: %+v on %v err %v; want age %v on %v failing %v", c.v, cfg, on, err, c.age, c.on, c.fail)
		}
	}
}
