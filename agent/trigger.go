package agent

import "github.com/leakscope/leakscope/ingest/bundle"

// entryTrigger is what started the entry's capture, as the bundle's
// manifest records it: the alert, or the agent's growth rule.
func entryTrigger(e *Entry, node string) *bundle.Trigger {
	t := &bundle.Trigger{Source: bundle.TriggerRule, Reason: e.Trigger, At: e.Created.UTC(), Node: node}
	if e.Alert != nil {
		al := e.Alert.Alert
		t.Source, t.Alert = bundle.TriggerAlert, &al
	}
	return t
}
