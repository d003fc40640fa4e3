package capture

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/samples"
)

// nobody is the uid and gid the unprivileged test runs as.
const nobody = 65534

// TestCaptureUnprivileged runs a capture as an unprivileged user against a
// target of the same user: eBPF cannot load, and the manifest must say why
// while pprof and trace are recorded.
func TestCaptureUnprivileged(t *testing.T) {
	if testing.Short() {
		t.Skip("runs live processes")
	}
	if !isRoot() {
		t.Skip("needs root to switch to an unprivileged user")
	}
	t.Parallel()
	dir, err := os.MkdirTemp("", "leakscope-unpriv-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	root, err := samples.Root()
	if err != nil {
		t.Fatal(err)
	}
	sampleBin, err := samples.Build(context.Background(), filepath.Join(root, "stable-pool"))
	if err != nil {
		t.Fatal(err)
	}
	target := copyExe(t, sampleBin, filepath.Join(dir, "stable-pool"))
	self := copyExe(t, os.Args[0], filepath.Join(dir, "capture.test"))
	cred := &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}

	tc := exec.Command(target)
	tc.SysProcAttr = cred
	stdout, err := tc.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := tc.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tc.Process.Kill(); tc.Wait() })
	line := make([]byte, 128)
	n, err := stdout.Read(line)
	url, ok := strings.CutPrefix(strings.TrimSpace(string(line[:n])), "listening on ")
	if err != nil || !ok {
		t.Fatalf("target said %q, %v", line[:n], err)
	}
	go io.Copy(io.Discard, stdout)

	out := filepath.Join(dir, "u.lsb")
	cc := childCommand(t, self, Options{URL: url, PID: tc.Process.Pid, Out: out, Duration: 2 * time.Second,
		Interval: time.Second, TraceWindow: time.Second})
	cc.SysProcAttr = cred
	msg, err := cc.CombinedOutput()
	if err != nil {
		t.Fatalf("unprivileged capture: %v\n%s", err, msg)
	}
	if c := strings.Count(string(msg), "eBPF unavailable"); c != 1 {
		t.Errorf("capture said %d times that eBPF is unavailable, want once:\n%s", c, msg)
	}
	m, err := bundle.ReadManifest(out)
	if err != nil {
		t.Fatal(err)
	}
	s := source(t, m, bundle.SourceEBPF)
	if s.Status != bundle.StatusUnavailable || !strings.Contains(s.Detail, "not permitted") {
		t.Errorf("ebpf source %q %q, want unavailable because not permitted", s.Status, s.Detail)
	}
	for _, k := range []string{bundle.SourceDump, bundle.SourceTrace} {
		if s := source(t, m, k); s.Status != bundle.StatusComplete {
			t.Errorf("source %s: %q %q", k, s.Status, s.Detail)
		}
	}
	t.Logf("ebpf: %s", s.Detail)
}

// copyExe copies an executable to dst, readable and executable by all.
func copyExe(t *testing.T, src, dst string) string {
	t.Helper()
	in, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
	return dst
}
