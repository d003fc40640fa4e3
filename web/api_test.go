package web

import (
	"io/fs"

	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/leakscope/leakscope/dev/bundletest"
	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/ingest/schema"
)

// fixture is one real bundle, packed, shared by the tests.
type fixture struct {
	dir     string
	archive []byte
	total   int64 // goroutines in the last profile
}

var (
	fixOnce sync.Once
	fix     fixture
)

func getFixture(t testing.TB) fixture {
	fixOnce.Do(func() {
		parent, err := os.MkdirTemp("", "web-fixture-")
		if err != nil {
			t.Fatal(err)
		}
		dir, total := realBundle(t, filepath.Join(parent, "leak.lsb"))
		var buf bytes.Buffer
		if err := bundle.Pack(dir, &buf, bundle.FormatTarGzip); err != nil {
			t.Fatal(err)
		}
		fix = fixture{dir: dir, archive: buf.Bytes(), total: total}
	})
	return fix
}

func newServer(t testing.TB, opts Options) (*Store, http.Handler) {
	t.Helper()
	s, err := openStoreT(t, t.TempDir(), nil, bundle.Limits{MaxBytes: 64 << 20, MaxFiles: 200}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !opts.Loopback && opts.Token == "" {
		opts.Loopback = true
	}
	return s, NewRouter(s, opts)
}

// do sends a request from a loopback client and decodes a JSON answer
// into out (when non-nil).
func do(t testing.TB, h http.Handler, method, path string, body []byte, out any, hdr ...string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(method, "http://127.0.0.1:7070"+path, bytes.NewReader(body))
	req.RemoteAddr = "127.0.0.1:5555"
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if out != nil && rec.Code < 300 {
		if err := json.Unmarshal(rec.Body.Bytes(), out); err != nil {
			t.Fatalf("%s %s: decode %q: %v", method, path, rec.Body.String(), err)
		}
	}
	return rec
}

// wantError checks an answer is a JSON error with the status.
func wantError(t testing.TB, rec *httptest.ResponseRecorder, status int, mention string) {
	t.Helper()
	var e apiError
	if rec.Code != status {
		t.Errorf("status %d, want %d (body %s)", rec.Code, status, rec.Body)
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil || e.Error == "" {
		t.Errorf("body %q is not a JSON error", rec.Body)
	}
	if !strings.Contains(e.Error, mention) {
		t.Errorf("error %q does not mention %q", e.Error, mention)
	}
}

func TestAPI(t *testing.T) {
	f := getFixture(t)
	s, h := newServer(t, Options{})
	var up map[string]string
	rec := do(t, h, "POST", "/api/captures", f.archive, &up)
	if rec.Code != http.StatusCreated || up["id"] == "" {
		t.Fatalf("upload: %d %s", rec.Code, rec.Body)
	}
	id := up["id"]
	checkListAndDetail(t, h, id)
	checkReportSeries(t, h, id)
	checkFlameAPI(t, h, f, id)
	checkViewsAndRaw(t, h, f, id)

	if rec := do(t, h, "DELETE", "/api/captures/"+id, nil, nil); rec.Code != 200 {
		t.Fatalf("delete: %d %s", rec.Code, rec.Body)
	}
	wantError(t, do(t, h, "GET", "/api/captures/"+id+"/report", nil, nil), 404, "no such capture")
	if entries, _ := os.ReadDir(s.Dir()); len(entries) != 0 {
		t.Errorf("data dir after delete: %v", entries)
	}
}

// checkListAndDetail checks the captures list and capture id's detail:
// the uploaded fixture, alone, with its four goroutine profiles.
func checkListAndDetail(t *testing.T, h http.Handler, id string) {
	var list []captureSummary
	do(t, h, "GET", "/api/captures", nil, &list)
	if len(list) != 1 || list[0].ID != id || list[0].Node != "test-node" || list[0].Process.PID != 4242 || list[0].Suspects == nil {
		t.Fatalf("list %+v", list)
	}
	var detail struct {
		Raw      []string            `json:"raw"`
		Profiles map[string][]string `json:"profiles"`
		Tables   []bundle.TableInfo  `json:"tables"`
	}
	do(t, h, "GET", "/api/captures/"+id, nil, &detail)
	if len(detail.Profiles["goroutine"]) != 4 || len(detail.Raw) != 1 {
		t.Errorf("detail profiles %v raw %v", detail.Profiles, detail.Raw)
	}
}

// checkReportSeries checks that the report answers with a goroutine
// series point per snapshot.
func checkReportSeries(t *testing.T, h http.Handler, id string) {
	var rep struct {
		Suspects []struct {
			ID, Location string
			Count        int64
		} `json:"suspects"`
		Series struct {
			Goroutines []json.RawMessage `json:"goroutines"`
		} `json:"series"`
	}
	if rec := do(t, h, "GET", "/api/captures/"+id+"/report", nil, &rep); rec.Code != 200 {
		t.Fatalf("report: %d %s", rec.Code, rec.Body)
	}
	if len(rep.Series.Goroutines) != 4 {
		t.Errorf("report series has %d goroutine points, want 4", len(rep.Series.Goroutines))
	}
}

// checkFlameAPI checks the flame graph's total, focus and sandwich, and
// its answers to a wrong profile or snapshot.
func checkFlameAPI(t *testing.T, h http.Handler, f fixture, id string) {
	// The flame graph total is the last profile's total, as go tool pprof
	// counts it.
	var tree struct {
		Total int64 `json:"total"`
		Root  struct {
			V int64 `json:"v"`
		} `json:"root"`
	}
	do(t, h, "GET", "/api/captures/"+id+"/flamegraph?profile=goroutine", nil, &tree)
	if tree.Total != f.total || tree.Root.V != f.total {
		t.Errorf("flame total %d (root %d), want %d", tree.Total, tree.Root.V, f.total)
	}
	var focused struct {
		Total int64 `json:"total"`
	}
	do(t, h, "GET", "/api/captures/"+id+"/flamegraph?focus=leakyWorker", nil, &focused)
	if focused.Total < 400 || focused.Total >= f.total+1 {
		t.Errorf("focus on leakyWorker: %d goroutines, want the 400 leaked", focused.Total)
	}
	var sw struct {
		Function string          `json:"function"`
		Callers  json.RawMessage `json:"callers"`
	}
	do(t, h, "GET", "/api/captures/"+id+"/flamegraph?sandwich=github.com/leakscope/leakscope/web.leakyWorker", nil, &sw)
	if sw.Function == "" || len(sw.Callers) == 0 {
		t.Errorf("sandwich %+v", sw)
	}
	wantError(t, do(t, h, "GET", "/api/captures/"+id+"/flamegraph?profile=nope", nil, nil), 400, "unknown profile")
	wantError(t, do(t, h, "GET", "/api/captures/"+id+"/flamegraph?snapshot=12", nil, nil), 404, "no such snapshot")
	wantError(t, do(t, h, "GET", "/api/captures/"+id+"/flamegraph?snapshot=yesterday", nil, nil), 400, "RFC 3339")
}

// checkViewsAndRaw checks that the other views answer, that a raw
// artifact downloads as stored and nothing outside raw/ does, and the
// answers to unknown captures and endpoints.
func checkViewsAndRaw(t *testing.T, h http.Handler, f fixture, id string) {
	for _, p := range []string{"/ancestry", "/timeline", "/report?format=md", "/report?format=html&postmortem=1"} {
		if rec := do(t, h, "GET", "/api/captures/"+id+p, nil, nil); rec.Code != 200 || rec.Body.Len() == 0 {
			t.Errorf("%s: %d %s", p, rec.Code, rec.Body)
		}
	}
	raw := do(t, h, "GET", "/api/captures/"+id+"/raw/goroutine.pb.gz", nil, nil)
	want, _ := os.ReadFile(filepath.Join(f.dir, "raw", "goroutine.pb.gz"))
	if raw.Code != 200 || !bytes.Equal(raw.Body.Bytes(), want) {
		t.Errorf("raw download: %d, %d bytes, want %d", raw.Code, raw.Body.Len(), len(want))
	}
	if rec := do(t, h, "GET", "/api/captures/"+id+"/raw/..%2fmanifest.json", nil, nil); rec.Code == 200 || strings.Contains(rec.Body.String(), "format_version") {
		t.Errorf("raw/..%%2fmanifest.json: %d %s", rec.Code, rec.Body)
	}
	wantError(t, do(t, h, "GET", "/api/captures/"+id+"/raw/manifest.json", nil, nil), 404, "no raw artifact")
	wantError(t, do(t, h, "GET", "/api/captures/nope", nil, nil), 404, "no such capture")
	wantError(t, do(t, h, "GET", "/api/nothing", nil, nil), 404, "no API endpoint")

	if rec := do(t, h, "GET", "/", nil, nil); rec.Code != 200 || !strings.Contains(rec.Body.String(), "app.js") {
		t.Errorf("index: %d", rec.Code)
	}
}

func tgz(entries map[string]string, links map[string]string) []byte {
	var buf bytes.Buffer
	gw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gw)
	for name, body := range entries {
		tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(body)), Typeflag: tar.TypeReg})
		io.WriteString(tw, body)
	}
	for name, target := range links {
		tw.WriteHeader(&tar.Header{Name: name, Linkname: target, Typeflag: tar.TypeSymlink})
	}
	tw.Close()
	gw.Close()
	return buf.Bytes()
}

func TestHostileUploads(t *testing.T) {
	f := getFixture(t)
	manifest, _ := os.ReadFile(filepath.Join(f.dir, "manifest.json"))
	var bomb bytes.Buffer
	gw := gzip.NewWriter(&bomb)
	tw := tar.NewWriter(gw)
	tw.WriteHeader(&tar.Header{Name: "manifest.json", Mode: 0o644, Size: int64(len(manifest)), Typeflag: tar.TypeReg})
	tw.Write(manifest)
	tw.WriteHeader(&tar.Header{Name: "raw/zeros", Mode: 0o644, Size: 100 << 20, Typeflag: tar.TypeReg})
	zero := make([]byte, 1<<20)
	for range 100 {
		tw.Write(zero)
	}
	tw.Close()
	gw.Close()

	cases := []struct {
		name   string
		body   []byte
		hdr    []string
		status int
		want   string
	}{
		{"oversize", bytes.Repeat([]byte("x"), 3<<20), nil, 413, "exceeds the limit"},
		{"traversal", tgz(map[string]string{"manifest.json": string(manifest), "../../etc/evil": "x"}, nil), nil, 400, "path traversal"},
		{"absolute", tgz(map[string]string{"/etc/evil": "x"}, nil), nil, 400, "absolute path"},
		{"symlink", tgz(map[string]string{"manifest.json": string(manifest)}, map[string]string{"raw/passwd": "/etc/passwd"}), nil, 400, "links are not allowed"},
		{"bomb", bomb.Bytes(), nil, 413, "unpacked, it holds more than"},
		{"not a bundle", []byte("GET / HTTP/1.1\r\nthis is not an archive at all"), nil, 400, "not a .tar.zst or .tar.gz"},
		{"no manifest", tgz(map[string]string{"metrics.arrow": "x"}, nil), nil, 400, "no manifest.json"},
		{"truncated", f.archive[:len(f.archive)*2/3], nil, 400, "bad bundle archive"},
		{"multipart", f.archive, []string{"Content-Type", "multipart/form-data; boundary=x"}, 415, "multipart"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, h := newServer(t, Options{MaxUploadBytes: 2 << 20})
			if int64(len(bomb.Bytes())) > 2<<20 {
				t.Fatalf("bomb archive is %d bytes; it must fit the upload limit", bomb.Len())
			}
			wantError(t, do(t, h, "POST", "/api/captures", c.body, nil, c.hdr...), c.status, c.want)
			if entries, _ := os.ReadDir(s.Dir()); len(entries) != 0 {
				t.Errorf("refused upload left %v", entries)
			}
			var list []captureSummary
			do(t, h, "GET", "/api/captures", nil, &list)
			if len(list) != 0 {
				t.Errorf("refused upload is listed: %+v", list)
			}
		})
	}
}

// TestHostileBundleUpload uploads small bundles whose tables claim a 1 TiB
// buffer, a 1 TiB message body or 2 GiB of metadata: validation refuses
// each with 400 naming the table, without running out of memory, and
// leaves nothing behind.
func TestHostileBundleUpload(t *testing.T) {
	for _, d := range bundletest.Damages {
		t.Run(string(d), func(t *testing.T) {
			dir := bundletest.Small(t, t.TempDir(), "hostile")
			bundletest.Corrupt(t, dir, schema.TableGoroutines, d)
			var buf bytes.Buffer
			if err := bundle.Pack(dir, &buf, bundle.FormatTarZstd); err != nil {
				t.Fatal(err)
			}
			s, h := newServer(t, Options{})
			rec := do(t, h, "POST", "/api/captures", buf.Bytes(), nil)
			wantError(t, rec, http.StatusBadRequest, "goroutines.arrow: corrupt table")
			if strings.Contains(rec.Body.String(), s.Dir()) {
				t.Errorf("error reveals the data directory: %s", rec.Body)
			}
			if entries, _ := os.ReadDir(s.Dir()); len(entries) != 0 {
				t.Errorf("refused upload left %v", entries)
			}
		})
	}
}

func TestGuard(t *testing.T) {
	f := getFixture(t)
	_, local := newServer(t, Options{Loopback: true})
	req := httptest.NewRequest("GET", "http://127.0.0.1:7070/api/captures", nil)
	req.RemoteAddr = "10.1.2.3:4444"
	rec := httptest.NewRecorder()
	local.ServeHTTP(rec, req)
	wantError(t, rec, 403, "local clients only")
	req = httptest.NewRequest("GET", "http://evil.example:7070/api/captures", nil)
	req.RemoteAddr = "127.0.0.1:4444"
	rec = httptest.NewRecorder()
	local.ServeHTTP(rec, req)
	wantError(t, rec, 403, "not a loopback name")
	wantError(t, do(t, local, "POST", "/api/captures", f.archive, nil, "Origin", "http://evil.example"), 403, "cross-origin")
	if rec := do(t, local, "POST", "/api/captures", f.archive, nil, "Origin", "http://127.0.0.1:7070"); rec.Code != 201 {
		t.Errorf("same-origin upload: %d %s", rec.Code, rec.Body)
	}

	_, remote := newServer(t, Options{Token: "s3cret"})
	wantError(t, do(t, remote, "POST", "/api/captures", f.archive, nil), 401, "token")
	wantError(t, do(t, remote, "POST", "/api/captures", f.archive, nil, "Authorization", "Bearer wrong"), 401, "token")
	var up map[string]string
	if rec := do(t, remote, "POST", "/api/captures", f.archive, &up, "Authorization", "Bearer s3cret"); rec.Code != 201 {
		t.Fatalf("upload with token: %d %s", rec.Code, rec.Body)
	}
	wantError(t, do(t, remote, "DELETE", "/api/captures/"+up["id"], nil, nil), 401, "token")
	// Off loopback, reads of the API need the token too: as a header or
	// as the page's cookie; the page itself loads without it.
	wantError(t, do(t, remote, "GET", "/api/captures/"+up["id"], nil, nil), 401, "token")
	wantError(t, do(t, remote, "GET", "/api/captures/"+up["id"]+"/raw/x", nil, nil, "Authorization", "Bearer wrong"), 401, "token")
	for _, hdr := range [][]string{{"Authorization", "Bearer s3cret"}, {"Cookie", TokenCookie + "=s3cret"}} {
		if rec := do(t, remote, "GET", "/api/captures/"+up["id"], nil, nil, hdr...); rec.Code != 200 {
			t.Errorf("read with %s: %d %s", hdr[0], rec.Code, rec.Body)
		}
	}
	if rec := do(t, remote, "GET", "/", nil, nil); rec.Code != 200 {
		t.Errorf("the page without token: %d", rec.Code)
	}
	wantError(t, do(t, remote, "DELETE", "/api/captures/"+up["id"], nil, nil, "Cookie", TokenCookie+"=s3cret"), 401, "token")
	_, public := newServer(t, Options{Token: "s3cret", PublicRead: true})
	if rec := do(t, public, "GET", "/api/captures", nil, nil); rec.Code != 200 {
		t.Errorf("public read without token: %d", rec.Code)
	}
	wantError(t, do(t, public, "POST", "/api/captures", f.archive, nil), 401, "token")
	if rec := do(t, remote, "DELETE", "/api/captures/"+up["id"], nil, nil, TokenHeader, "s3cret"); rec.Code != 200 {
		t.Errorf("delete with token: %d %s", rec.Code, rec.Body)
	}
	for addr, want := range map[string]bool{"127.0.0.1:7070": true, "localhost:1": true, "[::1]:80": true, ":7070": false, "0.0.0.0:7070": false, "10.0.0.1:80": false} {
		if got := IsLoopback(addr); got != want {
			t.Errorf("IsLoopback(%q) = %v", addr, got)
		}
	}
}

// TestConcurrent uploads, reads and deletes at once (run with -race):
// every answer is a success or a clean 404, and what is left on disk is
// exactly what the store lists.
func TestConcurrent(t *testing.T) {
	f := getFixture(t)
	s, h := newServer(t, Options{})
	var seed map[string]string
	do(t, h, "POST", "/api/captures", f.archive, &seed)
	var wg sync.WaitGroup
	errs := make(chan string, 200)
	ids := make(chan string, 20)
	for i := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// The same bundle each time: stored once, the others answer
			// the stored capture (which may be the seed, deleted meanwhile).
			var up uploadAnswer
			rec := do(t, h, "POST", "/api/captures", f.archive, &up)
			if rec.Code != 201 && !(rec.Code == 200 && up.Duplicate) || up.ID == "" {
				errs <- fmt.Sprintf("upload %d: %d %s", i, rec.Code, rec.Body)
				return
			}
			ids <- up.ID
		}()
	}
	for i := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, p := range []string{"/flamegraph", "/report", "/timeline", "/ancestry", ""} {
				rec := do(t, h, "GET", "/api/captures/"+seed["id"]+p, nil, nil)
				if rec.Code != 200 && rec.Code != 404 {
					errs <- fmt.Sprintf("reader %d %s: %d %s", i, p, rec.Code, rec.Body)
				}
			}
			if i == 3 {
				if rec := do(t, h, "DELETE", "/api/captures/"+seed["id"], nil, nil); rec.Code != 200 && rec.Code != 404 {
					errs <- fmt.Sprintf("delete: %d %s", rec.Code, rec.Body)
				}
			}
			do(t, h, "GET", "/api/captures", nil, nil)
		}()
	}
	wg.Wait()
	close(errs)
	close(ids)
	for e := range errs {
		t.Error(e)
	}
	if n := len(s.List()); n > 1 {
		t.Errorf("%d captures stored from one bundle uploaded 7 times", n)
	}
	var n int
	seen := map[string]bool{}
	for id := range ids {
		n++
		if seen[id] {
			continue
		}
		seen[id] = true
		if rec := do(t, h, "DELETE", "/api/captures/"+id, nil, nil); rec.Code != 200 && !(rec.Code == 404 && id == seed["id"]) {
			t.Errorf("delete %s: %d", id, rec.Code)
		}
	}
	if n != 6 {
		t.Errorf("%d uploads succeeded, want 6", n)
	}
	s.Wait() // files of a capture deleted while read go after the readers
	if entries, _ := os.ReadDir(s.Dir()); len(entries) != 0 {
		t.Errorf("left on disk: %v", entries)
	}
}

func TestSeedFirstStartOnly(t *testing.T) {
	f := getFixture(t)
	seed := os.DirFS(filepath.Dir(f.dir)) // holds leak.lsb
	data := t.TempDir()
	s, err := openStoreT(t, data, seed, bundle.Limits{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	list := s.List()
	if len(list) != 1 || list[0].id != "sample-leak" {
		t.Fatalf("seeded %v", list)
	}
	if err := s.Delete("sample-leak"); err != nil {
		t.Fatal(err)
	}
	s, err = openStoreT(t, data, seed, bundle.Limits{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.List()) != 0 {
		t.Errorf("samples came back after delete on a second start")
	}
}

// openStoreT is OpenStore for a test: the analyses and removals the
// store starts finish before the test's temporary directories go.
func openStoreT(t testing.TB, dataDir string, seed fs.FS, limits bundle.Limits, mem memory.Allocator) (*Store, error) {
	s, err := OpenStore(dataDir, seed, limits, mem)
	if err == nil {
		t.Cleanup(s.Wait)
	}
	return s, err
}
