package agent

import (
	"mime"
	"net/http"

	"github.com/leakscope/leakscope/internal/httpguard"
)

// Webhook bounds: a notification's body, the notifications handled at
// once (more are answered 429, which Alertmanager retries), and the alerts
// of one notification looked at (the rest are answered "skipped").
const (
	maxWebhookBody     = 1 << 20
	maxWebhookInFlight = 2
	maxAlertsPerNote   = 256
)

// guard applies the agent's access rules before any handler, as the
// workbench does (internal/httpguard):
//   - An agent on a loopback address answers only loopback clients whose
//     Host header names a loopback host (no DNS rebinding to /status).
//   - On any other address, everything but /metrics and /healthz needs the
//     webhook token.
//   - Writes from a page of another origin are refused, and the webhook
//     takes only application/json (a cross-site form or text/plain POST
//     is not an Alertmanager notification).
func (a *Agent) guard(next http.Handler) http.Handler {
	loopback := httpguard.IsLoopback(a.cfg.Listen)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if loopback && (!httpguard.LoopbackClient(r.RemoteAddr) || !httpguard.LoopbackHost(r.Host)) {
			writeError(w, http.StatusForbidden, "this agent is bound to a loopback address and answers local clients by a loopback name only")
			return
		}
		open := r.URL.Path == "/metrics" || r.URL.Path == "/healthz"
		needToken := a.cfg.WebhookToken != "" && (r.Method == http.MethodPost || (!loopback && !open))
		if needToken && !httpguard.TokenOK(r, "", a.cfg.WebhookToken) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="leakscope-agent"`)
			writeError(w, http.StatusUnauthorized, "this needs the agent's token (Authorization: Bearer TOKEN)")
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			if o := r.Header.Get("Origin"); o != "" && !httpguard.SameOrigin(o, r.Host) {
				writeError(w, http.StatusForbidden, "cross-origin write refused (origin "+escape(o)+")")
				return
			}
			if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
				writeError(w, http.StatusUnsupportedMediaType, "the webhook takes Content-Type: application/json (an Alertmanager notification)")
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// limitInFlight answers 429 while maxWebhookInFlight notifications are
// being handled, so a flood costs bounded memory and CPU.
func (a *Agent) limitInFlight(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case a.webhookSlots <- struct{}{}:
			defer func() { <-a.webhookSlots }()
		default:
			a.m.alerts.WithLabelValues("throttled").Inc()
			w.Header().Set("Retry-After", "1")
			writeError(w, http.StatusTooManyRequests, "the agent is handling other notifications; try again")
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, maxWebhookBody)
		next.ServeHTTP(w, r)
	})
}

func writeError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]string{"error": msg})
}
