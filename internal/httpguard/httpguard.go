// Package httpguard holds the access checks the workbench and the agent
// share: which addresses and Host names are loopback, whether an Origin is
// the server's own, and a constant-time token comparison. It imports the
// standard library only.
package httpguard

import (
	"crypto/subtle"
	"net"
	"net/http"
	"net/url"
	"strings"
)

// IsLoopback reports whether a listen address (HOST:PORT) binds only
// loopback interfaces. An empty host (all interfaces) is not loopback.
func IsLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// LoopbackClient reports whether a request's remote address (HOST:PORT) is
// a loopback address.
func LoopbackClient(remote string) bool {
	host, _, err := net.SplitHostPort(remote)
	if err != nil {
		host = remote
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// LoopbackHost reports whether a Host header names a loopback host
// (localhost, *.localhost or a loopback IP), so that a name rebound to
// 127.0.0.1 by another site's DNS is told apart.
func LoopbackHost(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// SameOrigin reports whether an Origin header names the host the request
// was sent to.
func SameOrigin(origin, host string) bool {
	u, err := url.Parse(origin)
	return err == nil && u.Host != "" && strings.EqualFold(u.Host, host)
}

// TokenOK reports whether the request carries token, as "Authorization:
// Bearer TOKEN" or in the header named header (when not empty). An empty
// token never matches.
func TokenOK(r *http.Request, header, token string) bool {
	var got string
	if header != "" {
		got = r.Header.Get(header)
	}
	if auth := r.Header.Get("Authorization"); got == "" && strings.HasPrefix(auth, "Bearer ") {
		got = strings.TrimPrefix(auth, "Bearer ")
	}
	return token != "" && got != "" && subtle.ConstantTimeCompare([]byte(got), []byte(token)) == 1
}
