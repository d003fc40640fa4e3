package capture

import (
	"context"
	"fmt"
	"net"
	"os"
	"runtime"
	"time"

	"golang.org/x/sys/unix"
)

// netnsDialer returns a dial function that opens connections from inside
// the network namespace of pid, or nil when pid shares the caller's
// namespace (or pid is 0, or its namespace cannot be read). A process in
// a container listens in its own namespace: /proc/PID/net/tcp shows its
// sockets, and 127.0.0.1 or a wildcard listener there is reachable only
// from inside. Entering a namespace needs CAP_SYS_ADMIN; without it the
// dial says so.
func netnsDialer(pid int) func(ctx context.Context, network, addr string) (net.Conn, error) {
	if pid <= 0 {
		return nil
	}
	path := fmt.Sprintf("/proc/%d/ns/net", pid)
	self, err1 := os.Readlink("/proc/self/ns/net")
	other, err2 := os.Readlink(path)
	if err1 != nil || err2 != nil || self == other {
		return nil
	}
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		type result struct {
			c   net.Conn
			err error
		}
		ch := make(chan result, 1)
		go func() {
			c, err := dialInNetns(ctx, path, network, addr)
			ch <- result{c, err}
		}()
		select {
		case r := <-ch:
			return r.c, r.err
		case <-ctx.Done():
			go func() {
				if r := <-ch; r.c != nil {
					r.c.Close()
				}
			}()
			return nil, ctx.Err()
		}
	}
}

// dialInNetns creates the socket on an OS thread moved into the namespace
// at nsPath (a socket belongs to the namespace it was created in), then
// moves the thread back. A thread that cannot be moved back stays locked,
// so the runtime discards it when the goroutine ends.
func dialInNetns(ctx context.Context, nsPath, network, addr string) (net.Conn, error) {
	runtime.LockOSThread()
	orig, err := os.Open("/proc/thread-self/ns/net")
	if err != nil {
		runtime.UnlockOSThread()
		return nil, fmt.Errorf("dial %s: own network namespace: %w", addr, err)
	}
	defer orig.Close()
	ns, err := os.Open(nsPath)
	if err != nil {
		runtime.UnlockOSThread()
		return nil, fmt.Errorf("dial %s: %w", addr, err)
	}
	defer ns.Close()
	if err := unix.Setns(int(ns.Fd()), unix.CLONE_NEWNET); err != nil {
		runtime.UnlockOSThread()
		return nil, fmt.Errorf("dial %s: enter the target's network namespace %s (needs CAP_SYS_ADMIN): %w", addr, nsPath, err)
	}
	c, err := (&net.Dialer{Timeout: 5 * time.Second}).DialContext(ctx, network, addr)
	if unix.Setns(int(orig.Fd()), unix.CLONE_NEWNET) == nil {
		runtime.UnlockOSThread()
	}
	return c, err
}
