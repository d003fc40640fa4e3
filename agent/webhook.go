package agent

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"
)

// maxWebhookBody bounds an Alertmanager notification.
const maxWebhookBody = 4 << 20

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
// listens on), exe.
func matches(a Alert, node string, p Process, ports []int) (string, bool) {
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
		_, port, err := net.SplitHostPort(v)
		if err != nil {
			return "", false
		}
		for _, lp := range ports {
			if port == strconv.Itoa(lp) {
				return "instance", true
			}
		}
		return "", false
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
func (a *Agent) webhookHandler() http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if a.cfg.WebhookToken != "" && r.Header.Get("Authorization") != "Bearer "+a.cfg.WebhookToken {
			http.Error(w, `{"error":"this webhook needs the agent's token (Authorization: Bearer TOKEN)"}`, http.StatusUnauthorized)
			return
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, maxWebhookBody+1))
		if err != nil || len(body) > maxWebhookBody {
			http.Error(w, `{"error":"notification unreadable or larger than 4 MiB"}`, http.StatusBadRequest)
			return
		}
		var n Notification
		if err := json.Unmarshal(body, &n); err != nil {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "not an Alertmanager webhook notification: " + err.Error()})
			return
		}
		out := []alertAnswer{}
		for _, al := range n.Alerts {
			out = append(out, a.onAlert(al))
		}
		writeJSON(w, http.StatusOK, map[string]any{"alerts": out})
	}
}

// onAlert handles one alert of a notification.
func (a *Agent) onAlert(al Alert) alertAnswer {
	ans := alertAnswer{Alert: al.describe()}
	if al.Status == "resolved" {
		a.m.alerts.WithLabelValues("resolved").Inc()
		ans.Result = "resolved"
		return ans
	}
	t, label := a.findTarget(al)
	if t == nil {
		a.m.alerts.WithLabelValues("no_match").Inc()
		ans.Result = "no_match"
		ans.Detail = "no watched process on " + a.cfg.Node + " matches the alert's labels (node, pid, pod, instance, exe)"
		a.logf("alert %s: %s", ans.Alert, ans.Detail)
		return ans
	}
	a.m.alerts.WithLabelValues("matched").Inc()
	ans.PID = t.proc.PID
	ans.Result = a.trigger(t, "alert", fmt.Sprintf("alert %s (matched by %s)", ans.Alert, label))
	return ans
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}
