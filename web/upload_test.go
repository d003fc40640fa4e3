package web

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/rand"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/leakscope/leakscope/ingest/bundle"
)

// gatedBody sends the first 64 KiB of an archive, then waits for gate
// before the rest, so that every upload of a test is in flight at once.
type gatedBody struct {
	data  []byte
	sent  int
	ready *sync.WaitGroup
	gate  <-chan struct{}
	once  sync.Once
}

func (b *gatedBody) Read(p []byte) (int, error) {
	const head = 64 << 10
	if b.sent >= head {
		b.once.Do(func() { b.ready.Done(); <-b.gate })
	}
	if b.sent >= len(b.data) {
		return 0, io.EOF
	}
	end := len(b.data)
	if b.sent < head {
		end = min(end, head)
	}
	n := copy(p, b.data[b.sent:end])
	b.sent += n
	return n, nil
}

// TestConcurrentUploadsFitDefaultQuota: 20 uploads of 6 MB in flight at
// once, under the default quota and --max-unpacked, are all stored (an
// upload sets aside what its archive declares, not the most one could
// take).
func TestConcurrentUploadsFitDefaultQuota(t *testing.T) {
	s, err := openStoreT(t, t.TempDir(), nil, bundle.Limits{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(NewRouter(s, Options{Loopback: true}))
	defer srv.Close()
	const n = 20
	archives := make([][]byte, n)
	for i := range archives {
		archives[i] = bigRawArchive(t, 6<<20)
	}
	var ready sync.WaitGroup
	ready.Add(n)
	gate := make(chan struct{})
	go func() { ready.Wait(); close(gate) }()
	codes, msgs := make([]int, n), make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			body := &gatedBody{data: archives[i], ready: &ready, gate: gate}
			resp, err := http.Post(srv.URL+"/api/captures", "application/zstd", body)
			if err != nil {
				body.once.Do(ready.Done)
				msgs[i] = err.Error()
				return
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			body.once.Do(ready.Done)
			codes[i], msgs[i] = resp.StatusCode, string(b)
		})
	}
	wg.Wait()
	for i := range n {
		if codes[i] != http.StatusCreated {
			t.Errorf("upload %d: %d %s", i, codes[i], msgs[i])
		}
	}
	if len(s.List()) != n {
		t.Errorf("%d captures stored, want %d", len(s.List()), n)
	}
	if s.reservedBytes() != 0 {
		t.Errorf("%d bytes still set aside after every upload ended", s.reservedBytes())
	}
}

// TestSlowlorisDoesNotBlockUploads: 8 connections trickling an upload a
// byte at a time set nothing aside and are dropped after the idle
// deadline (408); an upload meanwhile is stored.
func TestSlowlorisDoesNotBlockUploads(t *testing.T) {
	s, err := openStoreT(t, t.TempDir(), nil, bundle.Limits{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(NewRouter(s, Options{Loopback: true, ReadIdle: time.Second}))
	defer srv.Close()
	archive := bigRawArchive(t, 1<<20)
	stop := make(chan struct{})
	defer close(stop)
	answers := make(chan string, 8)
	for range 8 {
		conn, err := net.Dial("tcp", srv.Listener.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		fmt.Fprintf(conn, "POST /api/captures HTTP/1.1\r\nHost: %s\r\nContent-Type: application/zstd\r\nContent-Length: %d\r\n\r\n", srv.Listener.Addr(), len(archive))
		go func() {
			for i := 0; ; i++ {
				if _, err := conn.Write(archive[i : i+1]); err != nil {
					return
				}
				select {
				case <-stop:
					return
				case <-time.After(300 * time.Millisecond):
				}
			}
		}()
		go func() {
			b := make([]byte, 4096)
			n, _ := io.ReadAtLeast(conn, b, 12)
			answers <- string(b[:n])
		}()
	}
	// Every trickling upload has reached the store (it made its
	// temporary directory) before the real one is sent.
	deadline := time.Now().Add(time.Minute)
	for unpacking(t, s) < 8 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	resp, err := http.Post(srv.URL+"/api/captures", "application/zstd", bytes.NewReader(archive))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Errorf("upload beside 8 trickling ones: %d %s", resp.StatusCode, b)
	}
	for range 8 {
		select {
		case a := <-answers:
			if !strings.Contains(a, " 408 ") || !strings.Contains(a, "stalled") {
				t.Errorf("trickling upload answered %q, want 408 stalled", a)
			}
		case <-time.After(2 * time.Minute):
			t.Fatal("a trickling upload still holds its connection")
		}
	}
}

// unpacking counts the uploads in flight (their temporary directories).
func unpacking(t *testing.T, s *Store) int {
	t.Helper()
	es, err := os.ReadDir(s.Dir())
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range es {
		if strings.HasPrefix(e.Name(), ".unpack-") {
			n++
		}
	}
	return n
}

// TestQuotaAnswerSaysWhichBound: an upload refused for the quota says the
// quota and what stored captures and uploads in flight take; one refused
// for --max-unpacked says that.
func TestQuotaAnswerSaysWhichBound(t *testing.T) {
	f := getFixture(t)
	s, h := newServer(t, Options{})
	s.SetQuota(int64(len(f.archive)) / 4)
	wantError(t, do(t, h, "POST", "/api/captures", f.archive, nil), http.StatusRequestEntityTooLarge, "uploads in flight have set aside")
	s2, err := openStoreT(t, t.TempDir(), nil, bundle.Limits{MaxBytes: 1 << 10}, nil)
	if err != nil {
		t.Fatal(err)
	}
	wantError(t, do(t, NewRouter(s2, Options{Loopback: true}), "POST", "/api/captures", f.archive, nil), http.StatusRequestEntityTooLarge, "--max-unpacked")
}

// TestReservationFollowsBytes: an upload whose tar header claims 3.9 GiB
// sets aside what it has sent (plus a step), not what the header claims,
// so that under a 64 MiB quota another upload is stored while it trickles;
// cut short, it is refused and sets nothing aside.
func TestReservationFollowsBytes(t *testing.T) {
	s, err := openStoreT(t, t.TempDir(), nil, bundle.Limits{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	s.SetQuota(64 << 20)
	srv := httptest.NewServer(NewRouter(s, Options{Loopback: true}))
	defer srv.Close()
	var claim bytes.Buffer
	gz := gzip.NewWriter(&claim)
	tw := tar.NewWriter(gz)
	tw.WriteHeader(&tar.Header{Name: "raw/huge.bin", Mode: 0o644, Size: 39 << 30 / 10, Typeflag: tar.TypeReg})
	io.CopyN(tw, rand.Reader, 256<<10)
	gz.Flush()
	var ready sync.WaitGroup
	ready.Add(1)
	gate := make(chan struct{})
	answer := make(chan int, 1)
	go func() {
		resp, err := http.Post(srv.URL+"/api/captures", "application/gzip", &gatedBody{data: claim.Bytes(), ready: &ready, gate: gate})
		if err != nil {
			answer <- 0
			return
		}
		resp.Body.Close()
		answer <- resp.StatusCode
	}()
	ready.Wait()
	if got := s.reservedBytes(); got > 2<<20 {
		t.Errorf("the trickling upload sets aside %d bytes, more than it sent and a step", got)
	}
	resp, err := http.Post(srv.URL+"/api/captures", "application/zstd", bytes.NewReader(bigRawArchive(t, 1<<20)))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Errorf("an upload beside the trickling one: %s", resp.Status)
	}
	close(gate)
	if code := <-answer; code != http.StatusBadRequest {
		t.Errorf("the upload cut short: %d, want 400", code)
	}
	if got := s.reservedBytes(); got != 0 {
		t.Errorf("%d bytes still set aside", got)
	}
}

// reservedBytes is what uploads in flight have set aside.
func (s *Store) reservedBytes() int64 {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.reserved
}
