package web

import (
	"crypto/subtle"
	"net/http"
	"net/url"
	"strings"

	"github.com/leakscope/leakscope/internal/httpguard"
)

// TokenHeader is the header (besides "Authorization: Bearer TOKEN") that
// carries the write token.
const TokenHeader = "X-Leakscope-Token"

// guard applies the server's access rules before any handler:
//   - Loopback servers answer only loopback clients whose Host header names
//     a loopback host (a page on another site cannot reach them through DNS
//     rebinding).
//   - Writes (any method but GET and HEAD) are refused when they come from a
//     page of another origin, and need the token when one is set.
//   - On any other address, reads of the API need the token too (as a
//     header, or the cookie the page sets), unless PublicRead is set, and
//     /metrics always does; the page itself loads without it, to ask for
//     it.
func guard(opts Options, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if opts.Loopback {
			if !loopbackAddr(r.RemoteAddr) {
				writeError(w, http.StatusForbidden, "this workbench is bound to a loopback address and answers local clients only")
				return
			}
			if !loopbackHost(r.Host) {
				writeError(w, http.StatusForbidden, "host "+r.Host+" is not a loopback name; open the workbench as http://127.0.0.1:PORT or http://localhost:PORT")
				return
			}
		}
		if read := r.Method == http.MethodGet || r.Method == http.MethodHead; read && needsReadToken(opts, r) && !tokenOK(r, opts.Token) && !cookieOK(r, opts.Token) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="leakscope"`)
			writeError(w, http.StatusUnauthorized, "this workbench is not on a loopback address: reading captures needs its token (header \"Authorization: Bearer TOKEN\" or "+TokenHeader+")")
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			if o := r.Header.Get("Origin"); o != "" && !sameOrigin(o, r.Host) {
				writeError(w, http.StatusForbidden, "cross-origin write refused (origin "+o+")")
				return
			}
			if opts.Token != "" && !tokenOK(r, opts.Token) {
				w.Header().Set("WWW-Authenticate", `Bearer realm="leakscope"`)
				writeError(w, http.StatusUnauthorized, "this write needs the server's token (header \"Authorization: Bearer TOKEN\" or "+TokenHeader+")")
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// TokenCookie is the cookie the workbench page sets to the token so that
// links (downloads) carry it on reads.
const TokenCookie = "leakscope-token"

// needsReadToken reports whether a read must carry the token: on a server
// that is not loopback-only, for the API, unless reads are public.
func needsReadToken(opts Options, r *http.Request) bool {
	if opts.Loopback || opts.Token == "" {
		return false
	}
	// /metrics names every capture's services, nodes and functions: off
	// loopback it always needs the token (Prometheus's authorization).
	// /c/CAPTUREID names a capture's id as the API does.
	return r.URL.Path == MetricsPath || (!opts.PublicRead && (strings.HasPrefix(r.URL.Path, "/api/") || strings.HasPrefix(r.URL.Path, "/c/")))
}

// cookieOK checks the token cookie (for reads only: a cookie rides along
// on cross-site requests, so writes take the header alone).
func cookieOK(r *http.Request, token string) bool {
	c, err := r.Cookie(TokenCookie)
	if err != nil {
		return false
	}
	v, err := url.QueryUnescape(c.Value)
	return err == nil && v != "" && subtle.ConstantTimeCompare([]byte(v), []byte(token)) == 1
}

func tokenOK(r *http.Request, token string) bool {
	return httpguard.TokenOK(r, TokenHeader, token)
}

// IsLoopback reports whether a listen address (HOST:PORT) binds only
// loopback interfaces. An empty host (all interfaces) is not loopback.
func IsLoopback(addr string) bool { return httpguard.IsLoopback(addr) }

func loopbackAddr(remote string) bool { return httpguard.LoopbackClient(remote) }

func loopbackHost(hostport string) bool { return httpguard.LoopbackHost(hostport) }

func sameOrigin(origin, host string) bool { return httpguard.SameOrigin(origin, host) }
