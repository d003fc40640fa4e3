package agent

import (
	"bufio"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"strconv"
	"strings"
)

// endpoint is where a watched process can be reached: the sockets it
// listens on, the local addresses of its network namespace, and the names
// that stand for it (node, host and pod name).
type endpoint struct {
	listeners []netip.AddrPort
	local     []netip.Addr
	names     []string
}

// matchInstance reports whether an instance label (HOST:PORT, as
// Prometheus writes its scrape target) names a socket the process listens
// on: the port must be one of its listeners', and the host that
// listener's address, or, for a listener on every address, one of its
// namespace's local addresses or names. A loopback host matches a
// loopback or wildcard listener.
func (e endpoint) matchInstance(instance string) bool {
	host, portStr, err := net.SplitHostPort(instance)
	if err != nil {
		return false
	}
	port, err := strconv.ParseUint(portStr, 10, 16)
	if err != nil {
		return false
	}
	ip, ipErr := netip.ParseAddr(host)
	ip = ip.Unmap()
	for _, l := range e.listeners {
		if int(l.Port()) != int(port) {
			continue
		}
		la := l.Addr().Unmap()
		switch {
		case ipErr != nil: // a name
			if host == "localhost" && (la.IsLoopback() || la.IsUnspecified()) {
				return true
			}
			if la.IsUnspecified() && e.hasName(host) {
				return true
			}
		case la == ip:
			return true
		case la.IsUnspecified() && (ip.IsLoopback() || e.hasLocal(ip)):
			return true
		}
	}
	return false
}

func (e endpoint) hasName(h string) bool {
	for _, n := range e.names {
		if n != "" && strings.EqualFold(n, h) {
			return true
		}
	}
	return false
}

func (e endpoint) hasLocal(ip netip.Addr) bool {
	for _, a := range e.local {
		if a == ip {
			return true
		}
	}
	return false
}

// localAddrs reads the local addresses of a process's network namespace
// from /proc/PID/net/fib_trie (IPv4: the entries marked "/32 host LOCAL")
// and /proc/PID/net/if_inet6.
func localAddrs(pid int) ([]netip.Addr, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/net/fib_trie", pid))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out, err := parseFibTrie(f)
	if err != nil {
		return nil, err
	}
	if f6, err := os.Open(fmt.Sprintf("/proc/%d/net/if_inet6", pid)); err == nil {
		defer f6.Close()
		sc := bufio.NewScanner(f6)
		for sc.Scan() {
			fs := strings.Fields(sc.Text())
			if len(fs) == 0 || len(fs[0]) != 32 {
				continue
			}
			b, err := hex.DecodeString(fs[0])
			if err != nil {
				continue
			}
			out = append(out, netip.AddrFrom16([16]byte(b)))
		}
	}
	return out, nil
}

// parseFibTrie returns the addresses a fib_trie table marks as local.
func parseFibTrie(r io.Reader) ([]netip.Addr, error) {
	var out []netip.Addr
	var last netip.Addr
	seen := map[netip.Addr]bool{}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if ip, ok := strings.CutPrefix(line, "|-- "); ok {
			last, _ = netip.ParseAddr(ip)
			continue
		}
		if strings.HasPrefix(line, "/32 host LOCAL") && last.IsValid() && !seen[last] {
			seen[last] = true
			out = append(out, last)
		}
	}
	return out, sc.Err()
}
