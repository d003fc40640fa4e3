package agent

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/leakscope/leakscope/ingest/bundle"
)

// Notification is Alertmanager's webhook payload (version 4).
type Notification struct {
	Version           string            `json:"version"`
	GroupKey          string            `json:"groupKey"`
	Status            string            `json:"status"`
	Receiver          string            `json:"receiver"`
	GroupLabels       map[string]string `json:"groupLabels"`
	CommonLabels      map[string]string `json:"commonLabels"`
	CommonAnnotations map[string]string `json:"commonAnnotations"`
	ExternalURL       string            `json:"externalURL"`
	Alerts            []Alert           `json:"alerts"`
}

// Alert is one alert of a [Notification].
type Alert struct {
	Status       string            `json:"status"` // firing, resolved
	Labels       map[string]string `json:"labels"`
	Annotations  map[string]string `json:"annotations"`
	StartsAt     time.Time         `json:"startsAt"`
	EndsAt       time.Time         `json:"endsAt"`
	GeneratorURL string            `json:"generatorURL"`
	Fingerprint  string            `json:"fingerprint"`
}

// alertAnswer is the webhook's JSON answer: what became of each alert.
type alertAnswer struct {
	Alert  string `json:"alert"`
	Result string `json:"result"` // started, busy, cooldown, no_match, resolved
	PID    int    `json:"pid,omitempty"`
	Detail string `json:"detail,omitempty"`
	// CaptureID is the started capture's id and Workbench its link on
	// the workbench (UPLOAD_TO/c/CAPTUREID): the preliminary capture
	// seconds after the first dump, the final one when the capture ends.
	CaptureID string `json:"capture_id,omitempty"`
	Workbench string `json:"workbench,omitempty"`
}

// describe names an alert by its alertname and sorted labels.
func (a Alert) describe() string {
	keys := make([]string, 0, len(a.Labels))
	for k := range a.Labels {
		if k != "alertname" {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + a.Labels[k]
	}
	return a.Labels["alertname"] + "{" + strings.Join(parts, ",") + "}"
}

// matches reports whether the alert's labels name the process p on this
// node, and by which label. Labels tried, in order: node (must equal the
// agent's node when present), pid, pod, instance (HOST:PORT of a socket p
// listens on: host and port, see [endpoint.matchInstance]), exe.
func matches(a Alert, node string, p Process, ep endpoint) (string, bool) {
	l := a.Labels
	if n := l["node"]; n != "" && n != node {
		return "", false
	}
	if v := l["pid"]; v != "" {
		return "pid", v == strconv.Itoa(p.PID)
	}
	if v := l["pod"]; v != "" {
		return "pod", p.Pod != "" && v == p.Pod
	}
	if v := l["instance"]; v != "" {
		return "instance", ep.matchInstance(v)
	}
	if v := l["exe"]; v != "" {
		return "exe", v == p.Name() || v == p.Comm
	}
	return "", false
}

// webhookHandler answers Alertmanager's POSTs: every firing alert whose
// labels name a watched process triggers its capture. The answer is 200
// as soon as the captures are queued (Alertmanager retries anything else),
// with what became of each alert.
func (a *Agent) webhookHandler() http.Handler {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			var tooBig *http.MaxBytesError
			if errors.As(err, &tooBig) {
				writeError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("notification larger than %d bytes", maxWebhookBody))
				return
			}
			writeError(w, http.StatusBadRequest, "notification unreadable: "+err.Error())
			return
		}
		var n Notification
		if err := json.Unmarshal(body, &n); err != nil {
			writeError(w, http.StatusBadRequest, "not an Alertmanager webhook notification: "+err.Error())
			return
		}
		body = nil
		out := []alertAnswer{}
		scan := scanOnce{a: a}
		for i, al := range n.Alerts {
			if i >= maxAlertsPerNote {
				out = append(out, alertAnswer{Alert: al.describe(), Result: "skipped",
					Detail: fmt.Sprintf("a notification's first %d alerts are looked at", maxAlertsPerNote)})
				continue
			}
			out = append(out, a.onAlert(al, n.ExternalURL, &scan))
		}
		writeJSON(w, http.StatusOK, map[string]any{"alerts": out})
	})
	return a.limitInFlight(h)
}

// onAlert handles one alert of a notification.
func (a *Agent) onAlert(al Alert, alertmanager string, scan *scanOnce) alertAnswer {
	ans := alertAnswer{Alert: al.describe()}
	if al.Status == "resolved" {
		a.m.alerts.WithLabelValues("resolved").Inc()
		ans.Result = "resolved"
		ans.Detail = a.recordResolved(al, scan)
		return ans
	}
	t, label, others := a.findTarget(al, scan)
	if len(others) > 0 {
		a.m.alerts.WithLabelValues("ambiguous").Inc()
		ans.Result = "ambiguous"
		ans.Detail = fmt.Sprintf("the alert's labels match %d watched processes (pids %v); give a pid or pod label", len(others)+1, append([]int{t.proc.PID}, others...))
		a.logQuiet("ambiguous", "alert %s: %s", ans.Alert, ans.Detail)
		return ans
	}
	if t == nil {
		a.m.alerts.WithLabelValues("no_match").Inc()
		ans.Result = "no_match"
		ans.Detail = "no watched process on " + a.cfg.Node + " matches the alert's labels (node, pid, pod, instance, exe)"
		a.logQuiet("no_match", "alert %s: %s", ans.Alert, ans.Detail)
		return ans
	}
	a.m.alerts.WithLabelValues("matched").Inc()
	ans.PID = t.proc.PID
	info := &AlertInfo{Alert: bundle.Alert{Name: al.Labels["alertname"], Labels: al.Labels, StartsAt: al.StartsAt,
		GeneratorURL: al.GeneratorURL, Alertmanager: alertmanager, Fingerprint: al.Fingerprint}}
	ans.Result, ans.CaptureID = a.trigger(t, "alert", fmt.Sprintf("alert %s (matched by %s)", ans.Alert, label), info)
	ans.Workbench = a.captureLink(ans.CaptureID)
	return ans
}

// recordResolved notes on the spool entries the alert triggered that it
// has resolved, and says which (or "" for none). An alert is the entry's
// when it has the entry's fingerprint, or its name, labels and start.
func (a *Agent) recordResolved(al Alert, scan *scanOnce) string {
	if scan.entries == nil {
		var err error
		if scan.entries, err = a.spool.Entries(); err != nil {
			a.logf("%v", err)
			return ""
		}
	}
	at := al.EndsAt
	if at.IsZero() {
		at = time.Now()
	}
	var names []string
	for _, e := range scan.entries {
		ai := e.Alert
		if ai == nil || !ai.ResolvedAt.IsZero() || !sameAlert(ai, al) {
			continue
		}
		ai.ResolvedAt = at.UTC()
		if err := a.spool.Save(e); err != nil {
			a.logf("%v", err)
			continue
		}
		names = append(names, e.Name)
	}
	if len(names) == 0 {
		return ""
	}
	a.logQuiet("resolved", "alert %s resolved at %s; recorded on %s", al.describe(), at.UTC().Format(time.RFC3339), strings.Join(names, ", "))
	return "recorded on " + strings.Join(names, ", ")
}

// sameAlert reports whether al is the alert ai records.
func sameAlert(ai *AlertInfo, al Alert) bool {
	if ai.Fingerprint != "" || al.Fingerprint != "" {
		return ai.Fingerprint == al.Fingerprint
	}
	if ai.Name != al.Labels["alertname"] || !ai.StartsAt.Equal(al.StartsAt) || len(ai.Labels) != len(al.Labels) {
		return false
	}
	for k, v := range ai.Labels {
		if al.Labels[k] != v {
			return false
		}
	}
	return true
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}
