package bundle

import "time"

// What started a capture ([Trigger.Source]).
const (
	// TriggerAlert: an Alertmanager alert the node agent matched to the
	// process.
	TriggerAlert = "alert"
	// TriggerRule: the node agent's own growth rule.
	TriggerRule = "rule"
)

// Trigger is what started a capture: an Alertmanager alert or the node
// agent's own growth rule. A capture started by hand has none.
type Trigger struct {
	// Source is [TriggerAlert] or [TriggerRule].
	Source string `json:"source"`
	// Reason is the agent's own words for it ("growth rule: goroutines
	// growing +120/min over 5m0s", "alert X (matched by instance)").
	Reason string `json:"reason,omitempty"`
	// At is when the agent triggered the capture.
	At time.Time `json:"at,omitzero"`
	// Node is the node the agent that triggered it runs on.
	Node string `json:"node,omitempty"`
	// Alert is the alert, for [TriggerAlert].
	Alert *Alert `json:"alert,omitempty"`
}

// Alert is an Alertmanager alert as its webhook delivered it.
type Alert struct {
	// Name is the alert's alertname label.
	Name   string            `json:"name"`
	Labels map[string]string `json:"labels,omitempty"`
	// StartsAt is when the alert began firing, as Alertmanager says.
	StartsAt time.Time `json:"starts_at,omitzero"`
	// GeneratorURL links the alert's rule in Prometheus; Alertmanager is
	// the notification's externalURL.
	GeneratorURL string `json:"generator_url,omitempty"`
	Alertmanager string `json:"alertmanager,omitempty"`
	Fingerprint  string `json:"fingerprint,omitempty"`
}
