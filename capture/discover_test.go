package capture

import (
	"context"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/leakscope/leakscope/ingest/bundle"
)

const procTCP = `  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:9C41 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 81234 1 0000000000000000 100 0 0 10 0
   1: 00000000:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 81235 1 0000000000000000 100 0 0 10 0
   2: 0100007F:9C41 0100007F:D2F0 01 00000000:00000000 00:00000000 00000000     0        0 81236 1 0000000000000000 20 4 30 10 -1
`

const procTCP6 = `  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 00000000000000000000000001000000:1770 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 90001 1 0000000000000000 100 0 0 10 0
   1: 0000000000000000FFFF00000100007F:1771 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 90002 1 0000000000000000 100 0 0 10 0
`

func TestParseListeners(t *testing.T) {
	got, err := ParseListeners(strings.NewReader(procTCP), "tcp")
	if err != nil {
		t.Fatal(err)
	}
	want := []Listener{
		{netip.MustParseAddrPort("127.0.0.1:40001"), 81234},
		{netip.MustParseAddrPort("0.0.0.0:8080"), 81235},
	}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("got %v, want %v", got, want)
	}
	got, err = ParseListeners(strings.NewReader(procTCP6), "tcp6")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Addr.String() != "[::1]:6000" || got[1].Addr.String() != "127.0.0.1:6001" {
		t.Errorf("tcp6: got %v", got)
	}
	for _, bad := range []string{"", "garbage\n", "local_address\n 0: 0100007F 0 0A 0 0 0 0 0 1\n", "local_address\n 0: 0100007F:XYZ 0 0A 0 0 0 0 0 1\n", "local_address\n 0: 01:0050 0 0A 0 0 0 0 0 x\n"} {
		if ls, err := ParseListeners(strings.NewReader(bad), "bad"); err == nil || ls != nil {
			t.Errorf("%q: got %v, %v; want an error", bad, ls, err)
		}
	}
}

func FuzzParseListeners(f *testing.F) {
	f.Add([]byte(procTCP))
	f.Add([]byte(procTCP6))
	f.Fuzz(func(t *testing.T, data []byte) {
		ls, err := ParseListeners(strings.NewReader(string(data)), "fuzz")
		if (ls == nil) == (err == nil) {
			t.Fatalf("result %v and error %v", ls, err)
		}
	})
}

func TestDiscoverURL(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a live process")
	}
	t.Parallel()
	p := startSample(t, "stable-pool")
	c := newClient(0)
	got, err := DiscoverURL(context.Background(), c, p.PID)
	if err != nil {
		t.Fatal(err)
	}
	if got != p.URL {
		t.Errorf("discovered %s, want %s", got, p.URL)
	}
	if _, err := DiscoverURL(context.Background(), c, os.Getpid()); err == nil || !strings.Contains(err.Error(), "pass --url") {
		t.Errorf("a process without pprof: err %v", err)
	}
	ti, err := TargetInfo(p.PID)
	if err != nil {
		t.Fatal(err)
	}
	if ti.GoVersion == "" || ti.BuildID == "" || ti.ModulePath == "" || filepath.Base(ti.Exe) != "stable-pool" {
		t.Errorf("target info %+v", ti)
	}
}

func TestFetchProfile(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a live process")
	}
	t.Parallel()
	p := startSample(t, "stable-pool")
	c := newClient(0)
	body, err := FetchProfile(context.Background(), c, p.URL+"/debug/pprof/heap", 0)
	if err != nil {
		t.Fatal(err)
	}
	head := make([]byte, 2)
	if _, err := body.Read(head); err != nil || head[0] != 0x1f || head[1] != 0x8b {
		t.Errorf("heap profile does not start gzipped: % x, %v", head, err)
	}
	body.Close()
	_, err = FetchProfile(context.Background(), c, p.URL+"/debug/pprof/nosuch", 0)
	se, ok := err.(*StatusError)
	if !ok || se.Code != http.StatusNotFound || se.Body != "Unknown profile" {
		t.Errorf("err %#v, want 404 quoting the pprof handler", err)
	}
	_, err = FetchProfile(context.Background(), c, p.URL+"/nothing", 0)
	if se, ok := err.(*StatusError); !ok || se.Body != "" {
		t.Errorf("non-pprof 404: err %#v, want no quoted body", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if _, err := FetchProfile(ctx, c, "http://127.0.0.1:1/debug/pprof/heap", 0); err == nil {
		t.Error("fetch from a closed port succeeded")
	}
}

// TestTargetBuildInfoDeps reads the build info of the leakscope binary:
// the main module and its dependency modules, which analysis uses to tell
// the user's code from libraries.
func TestTargetBuildInfoDeps(t *testing.T) {
	exe := filepath.Join(t.TempDir(), "leakscope")
	if out, err := exec.Command("go", "build", "-o", exe, "../cmd/leakscope").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	var ti bundle.Target
	if err := readBuildInfo(&ti, exe); err != nil {
		t.Fatal(err)
	}
	if ti.ModulePath != "github.com/leakscope/leakscope" || ti.GoVersion == "" {
		t.Errorf("module path %q, go %q", ti.ModulePath, ti.GoVersion)
	}
	found := false
	for _, d := range ti.Deps {
		if d.Path == "github.com/apache/arrow/go/v15" && strings.HasPrefix(d.Version, "v15.") {
			found = true
		}
	}
	if !found {
		t.Errorf("deps %+v lack github.com/apache/arrow/go/v15", ti.Deps)
	}
}
