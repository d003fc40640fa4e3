package capture

import (
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"
)

// listenerPID finds the local process listening on the port of base (a
// --url target on this host), for its start time. It returns 0 when the
// URL's host is not an address of this host's loopback, when no socket
// listens there, or when more than one process holds it.
func listenerPID(base string) int {
	u, err := url.Parse(base)
	if err != nil {
		return 0
	}
	ip, err := netip.ParseAddr(u.Hostname())
	if u.Hostname() == "localhost" {
		ip, err = netip.MustParseAddr("127.0.0.1"), nil
	}
	if err != nil || !ip.IsLoopback() {
		return 0
	}
	port, err := strconv.Atoi(u.Port())
	if err != nil {
		return 0
	}
	inodes := map[uint64]bool{}
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		f, err := os.Open(table)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return 0
		}
		ls, err := ParseListeners(f, table)
		f.Close()
		if err != nil {
			return 0
		}
		for _, l := range ls {
			a := l.Addr.Addr()
			if int(l.Addr.Port()) == port && (a.IsUnspecified() || a.IsLoopback()) {
				inodes[l.Inode] = true
			}
		}
	}
	if len(inodes) == 0 {
		return 0
	}
	return inodeOwner(inodes)
}

// inodeOwner returns the one process holding any of the socket inodes
// (0: none, or several).
func inodeOwner(inodes map[uint64]bool) int {
	procs, err := os.ReadDir("/proc")
	if err != nil {
		return 0
	}
	owner := 0
	for _, p := range procs {
		pid, err := strconv.Atoi(p.Name())
		if err != nil {
			continue
		}
		mine, err := socketInodes(pid)
		if err != nil {
			continue // gone, or not ours to read
		}
		for n := range mine {
			if inodes[n] {
				if owner != 0 && owner != pid {
					return 0
				}
				owner = pid
				break
			}
		}
	}
	return owner
}

// urlProcessStart is the start of the process serving base on this
// host, and where it was read; ok is false when it cannot be known.
func urlProcessStart(base string) (start time.Time, from string, ok bool) {
	pid := listenerPID(base)
	if pid == 0 {
		return time.Time{}, "", false
	}
	t, err := ProcessStart(pid)
	if err != nil {
		return time.Time{}, "", false
	}
	return t, fmt.Sprintf("/proc/%d/stat of the process listening on %s", pid, strings.TrimPrefix(base, "http://")), true
}
