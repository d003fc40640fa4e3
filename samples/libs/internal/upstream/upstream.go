// Package upstream runs a sample's upstream service (the HTTP API or gRPC
// server it calls) in a child process of its own, as in production: the
// recorded process then holds only the client side of every leak, not
// the server goroutines that answer it.
package upstream

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// env marks the child process.
const env = "LEAKSCOPE_SAMPLE_UPSTREAM"

// Child reports whether this process is the upstream started by [Start].
func Child() bool { return os.Getenv(env) == "1" }

// Listen binds a loopback port in the child and tells the parent its
// address (the child's first stdout line).
func Listen() (net.Listener, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("upstream: %w", err)
	}
	fmt.Println(ln.Addr())
	return ln, nil
}

// Start runs this executable again as the upstream and returns the
// address it listens on. The child is killed when ctx ends or when this
// process dies.
func Start(ctx context.Context) (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("upstream: %w", err)
	}
	cmd := exec.CommandContext(ctx, exe)
	cmd.Env = append(os.Environ(), env+"=1")
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return "", fmt.Errorf("upstream: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return "", fmt.Errorf("upstream: %w", err)
	}
	line := make(chan string, 1)
	go func() {
		br := bufio.NewReader(out)
		l, _ := br.ReadString('\n')
		line <- strings.TrimSpace(l)
		_, _ = io.Copy(io.Discard, br)
		_ = cmd.Wait()
	}()
	select {
	case l := <-line:
		if l == "" {
			return "", fmt.Errorf("upstream: the child printed no address")
		}
		return l, nil
	case <-time.After(30 * time.Second):
		return "", fmt.Errorf("upstream: no address after 30 s")
	}
}
