package web

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/leakscope/leakscope/ingest/bundle"
)

// TestQuota fills a data directory to its quota: the upload past it is
// refused with 413 saying why, leaves nothing behind, and fits again once
// a capture is deleted.
func TestQuota(t *testing.T) {
	f := getFixture(t)
	s, h := newServer(t, Options{})
	var first map[string]string
	if rec := do(t, h, "POST", "/api/captures", f.archive, &first); rec.Code != 201 {
		t.Fatalf("first upload: %d %s", rec.Code, rec.Body)
	}
	s.Wait() // its analysis, kept beside it, counts too
	used, _ := s.Used()
	if used <= 0 {
		t.Fatalf("the store counts %d bytes used", used)
	}
	s.SetQuota(used + used/2)
	before, _ := os.ReadDir(s.Dir())
	rec := do(t, h, "POST", "/api/captures", f.archive, nil)
	wantError(t, rec, http.StatusRequestEntityTooLarge, "quota")
	if after, _ := os.ReadDir(s.Dir()); len(after) != len(before) {
		t.Errorf("the refused upload left files: %v", after)
	}
	if rec := do(t, h, "DELETE", "/api/captures/"+first["id"], nil, nil); rec.Code != 200 {
		t.Fatalf("delete: %d", rec.Code)
	}
	s.Wait()
	if u, _ := s.Used(); u != 0 {
		t.Errorf("after the delete the store counts %d bytes", u)
	}
	if rec := do(t, h, "POST", "/api/captures", f.archive, nil); rec.Code != 201 {
		t.Errorf("upload after the delete: %d %s", rec.Code, rec.Body)
	}
}

// bigRawArchive packs a bundle with a raw artifact of n random bytes.
func bigRawArchive(t *testing.T, n int) []byte {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "big.lsb")
	w, err := bundle.Create(dir, bundle.NewManifest("big", "test"), memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := w.CopyRaw("big.bin", io.LimitReader(rand.Reader, int64(n))); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := bundle.Pack(dir, &buf, bundle.FormatTarZstd); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestStalledDownload starts a download of a 32 MiB artifact from a real
// server and stops reading it: the server drops the client once its
// writes have stalled for the idle timeout, so deleting the capture, which
// waits for its readers, completes instead of blocking forever.
func TestStalledDownload(t *testing.T) {
	s, err := openStoreT(t, t.TempDir(), nil, bundle.Limits{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(NewRouter(s, Options{Loopback: true, WriteIdle: 500 * time.Millisecond}))
	defer srv.Close()
	resp, err := http.Post(srv.URL+"/api/captures", "application/zstd", bytes.NewReader(bigRawArchive(t, 32<<20)))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	id := strings.TrimSuffix(strings.TrimPrefix(string(body), `{"id":"`), `"}`)
	if resp.StatusCode != 201 || id == "" {
		t.Fatalf("upload: %d %s", resp.StatusCode, body)
	}
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "GET /api/captures/%s/raw/big.bin HTTP/1.1\r\nHost: %s\r\n\r\n", id, srv.Listener.Addr())
	status, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil || !strings.Contains(status, "200") {
		t.Fatalf("download: %q %v", status, err)
	}
	// Stop reading: the server's writes fill the socket buffers and stall.
	done := make(chan int, 1)
	go func() {
		req, _ := http.NewRequest("DELETE", srv.URL+"/api/captures/"+id, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			done <- -1
			return
		}
		resp.Body.Close()
		done <- resp.StatusCode
	}()
	select {
	case code := <-done:
		if code != 200 {
			t.Errorf("delete: %d", code)
		}
	case <-time.After(2 * time.Minute):
		t.Fatal("DELETE still waits for a client that stopped reading")
	}
}
