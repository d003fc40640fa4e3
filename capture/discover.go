package capture

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Listener is a listening TCP socket read from /proc/PID/net/tcp{,6}.
type Listener struct {
	Addr  netip.AddrPort
	Inode uint64
}

// tcpListen is the st column value of a socket in LISTEN state.
const tcpListen = "0A"

// ParseListeners reads a /proc/net/tcp or /proc/net/tcp6 table and returns
// its sockets in LISTEN state. name labels errors. A malformed line is an
// error naming the line.
func ParseListeners(r io.Reader, name string) ([]Listener, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), 64*1024)
	var out []Listener
	line := 0
	for sc.Scan() {
		line++
		if line == 1 {
			if !strings.Contains(sc.Text(), "local_address") {
				return nil, fmt.Errorf("%s:1: not a /proc/net/tcp table (no header)", name)
			}
			continue
		}
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		if len(f) < 10 {
			return nil, fmt.Errorf("%s:%d: %d fields, want at least 10", name, line, len(f))
		}
		if f[3] != tcpListen {
			continue
		}
		ap, err := parseProcAddr(f[1])
		if err != nil {
			return nil, fmt.Errorf("%s:%d: local address %q: %w", name, line, f[1], err)
		}
		inode, err := strconv.ParseUint(f[9], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: inode %q: %w", name, line, f[9], err)
		}
		out = append(out, Listener{Addr: ap, Inode: inode})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s:%d: %w", name, line+1, err)
	}
	if line == 0 {
		return nil, fmt.Errorf("%s: empty table", name)
	}
	if out == nil {
		out = []Listener{}
	}
	return out, nil
}

// parseProcAddr decodes "0100007F:1F90" (IPv4) or a 32-digit IPv6 address:
// 32-bit words in host (little-endian) byte order, port in big-endian hex.
func parseProcAddr(s string) (netip.AddrPort, error) {
	host, port, ok := strings.Cut(s, ":")
	if !ok {
		return netip.AddrPort{}, errors.New("no port")
	}
	p, err := strconv.ParseUint(port, 16, 16)
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("port: %w", err)
	}
	raw, err := hex.DecodeString(host)
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("address: %w", err)
	}
	if len(raw) != 4 && len(raw) != 16 {
		return netip.AddrPort{}, fmt.Errorf("address of %d bytes", len(raw))
	}
	for i := 0; i < len(raw); i += 4 {
		binary.BigEndian.PutUint32(raw[i:], binary.LittleEndian.Uint32(raw[i:]))
	}
	a, _ := netip.AddrFromSlice(raw)
	return netip.AddrPortFrom(a.Unmap(), uint16(p)), nil
}

// socketInodes returns the inodes of the sockets open in /proc/PID/fd.
func socketInodes(pid int) (map[uint64]bool, error) {
	dir := fmt.Sprintf("/proc/%d/fd", pid)
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("list sockets of pid %d: %w", pid, err)
	}
	out := map[uint64]bool{}
	for _, e := range ents {
		l, err := os.Readlink(filepath.Join(dir, e.Name()))
		if err != nil {
			continue // closed meanwhile
		}
		if s, ok := strings.CutPrefix(l, "socket:["); ok {
			if n, err := strconv.ParseUint(strings.TrimSuffix(s, "]"), 10, 64); err == nil {
				out[n] = true
			}
		}
	}
	return out, nil
}

// ProcessListeners returns the TCP sockets the process is listening on.
func ProcessListeners(pid int) ([]Listener, error) {
	inodes, err := socketInodes(pid)
	if err != nil {
		return nil, err
	}
	var out []Listener
	for _, table := range []string{"tcp", "tcp6"} {
		path := fmt.Sprintf("/proc/%d/net/%s", pid, table)
		f, err := os.Open(path)
		if errors.Is(err, os.ErrNotExist) {
			continue // no IPv6
		}
		if err != nil {
			return nil, fmt.Errorf("read listening sockets: %w", err)
		}
		ls, err := ParseListeners(f, path)
		f.Close()
		if err != nil {
			return nil, err
		}
		for _, l := range ls {
			if inodes[l.Inode] {
				out = append(out, l)
			}
		}
	}
	return out, nil
}

// DiscoverURL finds the base URL of the process's net/http/pprof endpoint:
// it probes GET /debug/pprof/ on each socket the process listens on and
// returns the first that answers 200. Wildcard listeners are probed on the
// loopback address.
func DiscoverURL(ctx context.Context, c *http.Client, pid int) (string, error) {
	ls, err := ProcessListeners(pid)
	if err != nil {
		return "", fmt.Errorf("discover pprof endpoint: %w", err)
	}
	if len(ls) == 0 {
		return "", fmt.Errorf("discover pprof endpoint: pid %d listens on no TCP socket; pass --url", pid)
	}
	var tried []string
	for _, l := range ls {
		a := l.Addr.Addr()
		if a.IsUnspecified() {
			if a.Is4() {
				a = netip.AddrFrom4([4]byte{127, 0, 0, 1})
			} else {
				a = netip.IPv6Loopback()
			}
		}
		base := "http://" + netip.AddrPortFrom(a, l.Addr.Port()).String()
		tried = append(tried, base)
		if probePprof(ctx, c, base) == nil {
			return base, nil
		}
	}
	return "", fmt.Errorf("discover pprof endpoint: none of pid %d's listening sockets (%s) serves /debug/pprof/; pass --url", pid, strings.Join(tried, ", "))
}

// probePprof checks that base serves the net/http/pprof index.
func probePprof(ctx context.Context, c *http.Client, base string) error {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	url := base + "/debug/pprof/goroutine?debug=1"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	head := make([]byte, 512)
	n, _ := io.ReadFull(resp.Body, head)
	head = head[:n]
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64*1024))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", url, resp.Status)
	}
	if !bytes.HasPrefix(head, []byte("goroutine profile: total ")) {
		return &NotPprofError{URL: url, Want: "a goroutine profile (\"goroutine profile: total N\")", Got: describeBody(resp.Header.Get("Content-Type"), head)}
	}
	return nil
}

// NotPprofError is a reply with status 200 that is not what the pprof
// path it answers serves (an HTML page from a proxy or a web app, an
// empty body): the target is not a net/http/pprof endpoint.
type NotPprofError struct {
	URL  string
	Want string // what the path serves
	Got  string // what came back
}

func (e *NotPprofError) Error() string {
	return fmt.Sprintf("%s answered 200 with %s, not %s: this is not a Go net/http/pprof endpoint. "+
		"Point --url at the base URL of a Go server that imports net/http/pprof (for example http://127.0.0.1:6060), or use --pid to find it", e.URL, e.Got, e.Want)
}

// describeBody says in a few words what a reply held: its content type
// and its first bytes.
func describeBody(ctype string, head []byte) string {
	if len(head) == 0 {
		return "an empty body"
	}
	if ctype == "" {
		ctype = http.DetectContentType(head)
	}
	start := strings.Join(strings.Fields(string(head[:min(len(head), 48)])), " ")
	return fmt.Sprintf("%s (%q…)", ctype, start)
}

// normalizeURL strips a trailing /debug/pprof[/] and slash from a base URL.
func normalizeURL(u string) string {
	u = strings.TrimRight(u, "/")
	u = strings.TrimSuffix(u, "/debug/pprof")
	if !strings.Contains(u, "://") {
		u = "http://" + u
	}
	return strings.TrimRight(u, "/")
}
