package corpus

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// startTimeout bounds how long a program may take to serve pprof.
const startTimeout = 60 * time.Second

// proc is one running corpus program.
type proc struct {
	name   string
	cmd    *exec.Cmd
	base   string // http://127.0.0.1:PORT
	client *http.Client
	stderr *lockedBuffer
	exited chan struct{}
}

// lockedBuffer collects a process's stderr.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) Bytes() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return bytes.Clone(b.buf.Bytes())
}

// start runs bin with args in a fresh directory under tmp and waits until
// the hook has written its address. The process is killed when ctx ends.
func start(ctx context.Context, name, bin, tmp string, args ...string) (*proc, error) {
	dir, err := os.MkdirTemp(tmp, name+"-run-")
	if err != nil {
		return nil, err
	}
	addrFile := filepath.Join(dir, "addr")
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), AddrFileEnv+"="+addrFile, "GOTRACEBACK=all")
	p := &proc{name: name, cmd: cmd, stderr: &lockedBuffer{}, exited: make(chan struct{}),
		client: &http.Client{Timeout: 30 * time.Second}}
	cmd.Stderr = p.stderr
	cmd.Stdout = io.Discard
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	go func() { _ = cmd.Wait(); close(p.exited) }()
	deadline := time.Now().Add(startTimeout)
	for {
		if b, err := os.ReadFile(addrFile); err == nil {
			p.base = "http://" + strings.TrimSpace(string(b))
			return p, nil
		}
		select {
		case <-p.exited:
			return nil, fmt.Errorf("%s exited before serving pprof; stderr:\n%s", name, tail(p.stderr.Bytes()))
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			p.kill()
			return nil, fmt.Errorf("%s: no pprof address after %v", name, startTimeout)
		}
	}
}

// get fetches a pprof path ("/debug/pprof/goroutine?debug=2").
func (p *proc) get(path string) ([]byte, error) {
	resp, err := p.client.Get(p.base + path)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s GET %s: %s: %s", p.name, path, resp.Status, bytes.TrimSpace(body))
	}
	return body, nil
}

// dump fetches a debug=2 goroutine dump.
func (p *proc) dump() ([]byte, error) { return p.get("/debug/pprof/goroutine?debug=2") }

// quit sends SIGQUIT and returns what the process wrote to stderr by the
// time it exited (the traceback, with GOTRACEBACK=all).
func (p *proc) quit() ([]byte, error) {
	if err := p.cmd.Process.Signal(syscall.SIGQUIT); err != nil {
		return nil, err
	}
	select {
	case <-p.exited:
		return p.stderr.Bytes(), nil
	case <-time.After(30 * time.Second):
		p.kill()
		return nil, errors.New(p.name + ": still running 30 s after SIGQUIT")
	}
}

// waitExit waits for the process to end by itself (a test timeout) and
// returns its stderr.
func (p *proc) waitExit(d time.Duration) ([]byte, error) {
	select {
	case <-p.exited:
		return p.stderr.Bytes(), nil
	case <-time.After(d):
		p.kill()
		return nil, fmt.Errorf("%s: still running after %v", p.name, d)
	}
}

func (p *proc) kill() {
	_ = p.cmd.Process.Kill()
	<-p.exited
}

func tail(b []byte) []byte {
	if len(b) > 4096 {
		return b[len(b)-4096:]
	}
	return b
}

// runAlone runs bin with args without the pprof hook (nothing on the
// network, no timer), so a program whose goroutines all block dies with
// the runtime's "all goroutines are asleep" traceback. It returns stderr
// when the process ended by itself within d, nil when it was still
// running (and was killed).
func runAlone(ctx context.Context, bin, dir string, d time.Duration, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), AddrFileEnv+"=", "GOTRACEBACK=all")
	var stderr bytes.Buffer
	cmd.Stderr, cmd.Stdout = &stderr, io.Discard
	err := cmd.Run()
	if ctx.Err() != nil {
		return nil, nil
	}
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		return nil, err
	}
	return stderr.Bytes(), nil
}
