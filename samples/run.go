package samples

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"
)

// StartTimeout bounds how long [Start] waits for the "listening on" line
// after the process has been started.
const StartTimeout = 30 * time.Second

// stopGrace is how long [Process.Stop] waits after SIGTERM before killing.
const stopGrace = 5 * time.Second

// Root returns the absolute directory of the samples package source, found
// from this file's compile-time path. It fails for binaries built with
// -trimpath or moved away from the source tree.
func Root() (string, error) {
	_, file, _, ok := runtime.Caller(0)
	if !ok || !filepath.IsAbs(file) {
		return "", errors.New("samples root: source path unknown")
	}
	dir := filepath.Dir(file)
	if _, err := os.Stat(filepath.Join(dir, "doc.go")); err != nil {
		return "", fmt.Errorf("samples root: %w", err)
	}
	return dir, nil
}

// builds caches compiled samples for the life of the process.
var builds struct {
	mu   sync.Mutex
	tmp  string
	byID map[string]*buildResult
}

type buildResult struct {
	mu   sync.Mutex
	done bool
	path string
	err  error
}

// Build compiles the sample in dir with `go build` into a process-wide
// temporary directory and returns the binary path. Results (including
// compile failures) are cached per directory for the life of the process,
// so repeated calls are cheap; a build cancelled through ctx is retried by
// the next call. The linked binary is also kept for later processes (see
// sharedBinary), which link again only when the sample changed. Build is
// safe for concurrent use. Call [Cleanup] to remove the binaries.
func Build(ctx context.Context, dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("build sample: %w", err)
	}
	builds.mu.Lock()
	if builds.byID == nil {
		builds.byID = make(map[string]*buildResult)
	}
	r := builds.byID[abs]
	if r == nil {
		r = new(buildResult)
		builds.byID[abs] = r
	}
	if builds.tmp == "" {
		builds.tmp, err = os.MkdirTemp("", "leakscope-samples-")
	}
	tmp := builds.tmp
	builds.mu.Unlock()
	if err != nil {
		return "", fmt.Errorf("build sample: %w", err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.done {
		r.path, r.err = compile(ctx, abs, tmp)
		// A build cut short by ctx is not cached; compile errors are.
		r.done = r.err == nil || ctx.Err() == nil
	}
	return r.path, r.err
}

func compile(ctx context.Context, dir, tmp string) (string, error) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		return "", fmt.Errorf("build sample %s: %w", dir, err)
	}
	out, err := os.MkdirTemp(tmp, filepath.Base(dir)+"-")
	if err != nil {
		return "", fmt.Errorf("build sample %s: %w", dir, err)
	}
	bin := filepath.Join(out, filepath.Base(dir))
	if shared := sharedBinary(dir); shared != "" {
		if err := buildShared(ctx, goBin, dir, shared); err != nil {
			return "", err
		}
		if err := os.Link(shared, bin); err == nil {
			return bin, nil
		}
		return bin, copyFile(shared, bin)
	}
	cmd := exec.CommandContext(ctx, goBin, "build", "-o", bin, ".")
	cmd.Dir = dir
	if msg, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build sample %s: %w\n%s", dir, err, msg)
	}
	return bin, nil
}

// sharedBinary is where the binary of the sample in dir is kept between
// processes: `go build -o` into the same path again only links when
// something it depends on changed, and linking is most of a sample's
// build (seconds each, minutes for the client-go ones on a loaded
// machine), which every test package that runs the sample paid. The path
// is keyed by the sample's directory and the environment that changes
// the build; "" when there is no cache directory. LEAKSCOPE_SAMPLE_CACHE
// names another directory, or "off".
func sharedBinary(dir string) string {
	root := os.Getenv("LEAKSCOPE_SAMPLE_CACHE")
	if root == "off" {
		return ""
	}
	if root == "" {
		c, err := os.UserCacheDir()
		if err != nil {
			return ""
		}
		root = filepath.Join(c, "leakscope", "samples")
	}
	h := sha256.New()
	fmt.Fprintln(h, dir)
	for _, k := range []string{"GOFLAGS", "GOEXPERIMENT", "GOTOOLCHAIN", "CGO_ENABLED", "GOOS", "GOARCH", "GOAMD64"} {
		fmt.Fprintf(h, "%s=%s\n", k, os.Getenv(k))
	}
	return filepath.Join(root, hex.EncodeToString(h.Sum(nil))[:16], filepath.Base(dir))
}

// buildShared builds the sample in dir to shared, holding a lock on it
// against other processes building the same sample. A process running an
// earlier binary keeps it: cmd/go replaces the file rather than writing
// into it, and each caller runs a link or copy of its own.
func buildShared(ctx context.Context, goBin, dir, shared string) error {
	if err := os.MkdirAll(filepath.Dir(shared), 0o755); err != nil {
		return fmt.Errorf("build sample %s: %w", dir, err)
	}
	lock, err := os.OpenFile(shared+".lock", os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return fmt.Errorf("build sample %s: %w", dir, err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return fmt.Errorf("build sample %s: lock %s: %w", dir, lock.Name(), err)
	}
	defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)
	cmd := exec.CommandContext(ctx, goBin, "build", "-o", shared, ".")
	cmd.Dir = dir
	if msg, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("build sample %s: %w\n%s", dir, err, msg)
	}
	return nil
}

func copyFile(from, to string) error {
	src, err := os.Open(from)
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(dst, src); err != nil {
		dst.Close()
		return err
	}
	return dst.Close()
}

// Cleanup removes the binaries built by [Build]. Later calls to [Build]
// compile again. Typically called from TestMain after m.Run.
func Cleanup() error {
	builds.mu.Lock()
	defer builds.mu.Unlock()
	tmp := builds.tmp
	builds.tmp, builds.byID = "", nil
	if tmp == "" {
		return nil
	}
	if err := os.RemoveAll(tmp); err != nil {
		return fmt.Errorf("clean sample builds: %w", err)
	}
	return nil
}

// Process is a running sample started by [Start].
type Process struct {
	// URL is the base URL from the "listening on" line, for example
	// "http://127.0.0.1:40123" (no trailing slash).
	URL string
	// PID is the operating-system process id.
	PID int
	// Cmd is the underlying command; do not call Wait on it, use Stop.
	Cmd *exec.Cmd

	stderr   *tailBuffer
	waitDone chan struct{}
	waitErr  error
	stopOnce sync.Once
	stopErr  error
}

// Start builds the sample in dir (see [Build]), runs it with args, waits
// for its "listening on http://HOST:PORT" first line and returns the
// running process. The process is killed (SIGTERM, then SIGKILL) when ctx
// is done, so pass a context that outlives its use, and call
// [Process.Stop] when finished. Stdout after the first line is discarded;
// the tail of stderr is kept for [Process.Stderr].
func Start(ctx context.Context, dir string, args ...string) (*Process, error) {
	bin, err := Build(ctx, dir)
	if err != nil {
		return nil, err
	}
	return StartBinary(ctx, bin, args...)
}

// StartBinary runs an already built program as [Start] runs a sample: it
// waits for the "listening on" line and returns the running process.
func StartBinary(ctx context.Context, bin string, args ...string) (*Process, error) {
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = stopGrace
	p := &Process{Cmd: cmd, stderr: &tailBuffer{max: 64 << 10}, waitDone: make(chan struct{})}
	cmd.Stderr = p.stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	p.PID = cmd.Process.Pid
	lines := make(chan string, 1)
	go func() {
		br := bufio.NewReader(stdout)
		line, _ := br.ReadString('\n')
		lines <- line
		_, _ = io.Copy(io.Discard, br)
		p.waitErr = cmd.Wait()
		close(p.waitDone)
	}()
	timer := time.NewTimer(StartTimeout)
	defer timer.Stop()
	select {
	case line := <-lines:
		u, err := parseListening(line)
		if err != nil {
			_ = p.Stop()
			return nil, fmt.Errorf("start %s: %w; stderr:\n%s", bin, err, p.Stderr())
		}
		p.URL = u
		return p, nil
	case <-timer.C:
		_ = p.Stop()
		return nil, fmt.Errorf("start %s: no listening line after %v; stderr:\n%s", bin, StartTimeout, p.Stderr())
	case <-ctx.Done():
		_ = p.Stop()
		return nil, fmt.Errorf("start %s: %w", bin, ctx.Err())
	}
}

// parseListening checks a "listening on http://HOST:PORT" line and returns
// the URL.
func parseListening(line string) (string, error) {
	const prefix = "listening on "
	line = strings.TrimRight(line, "\r\n")
	if !strings.HasPrefix(line, prefix) {
		return "", fmt.Errorf("first stdout line %q does not start with %q", line, prefix)
	}
	raw := strings.TrimPrefix(line, prefix)
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "http" || u.Host == "" || u.Port() == "" || (u.Path != "" && u.Path != "/") {
		return "", fmt.Errorf("first stdout line %q has no http://HOST:PORT url", line)
	}
	return strings.TrimSuffix(raw, "/"), nil
}

// Stop sends SIGTERM, waits up to 5 s for the process to exit, then kills
// it. It returns nil when the process exited with status 0 (the samples
// exit cleanly on SIGTERM), also after Start's ctx was cancelled. Stop is idempotent and safe for concurrent use.
func (p *Process) Stop() error {
	p.stopOnce.Do(func() {
		select {
		case <-p.waitDone:
		default:
			_ = p.Cmd.Process.Signal(syscall.SIGTERM)
			t := time.NewTimer(stopGrace)
			select {
			case <-p.waitDone:
			case <-t.C:
				_ = p.Cmd.Process.Kill()
				<-p.waitDone
			}
			t.Stop()
		}
		if ps := p.Cmd.ProcessState; p.waitErr != nil && (ps == nil || !ps.Success()) {
			p.stopErr = fmt.Errorf("sample pid %d: %w; stderr:\n%s", p.PID, p.waitErr, p.Stderr())
		}
	})
	return p.stopErr
}

// Exited is closed when the process has exited.
func (p *Process) Exited() <-chan struct{} { return p.waitDone }

// Stderr returns the last 64 KiB the process wrote to stderr.
func (p *Process) Stderr() string { return p.stderr.String() }

// tailBuffer keeps the last max bytes written to it; safe for concurrent use.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (b *tailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	if over := len(b.buf) - b.max; over > 0 {
		b.buf = append(b.buf[:0], b.buf[over:]...)
	}
	return len(p), nil
}

func (b *tailBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return string(b.buf)
}
