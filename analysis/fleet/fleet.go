// Package fleet compares the captures of one service across nodes and
// builds: which leaks appear in how many captures on how many nodes, in
// which builds, and since when. It reads the reports [analysis.Analyze]
// wrote and computes nothing the report already holds: every count,
// growth, score and onset is a suspect's own.
//
// Identity has one rule each: a capture's service is
// [bundle.Target.Service], its node [bundle.Manifest.NodeName], its build
// [bundle.Target.Build]. A capture whose service is unknown is compared
// with nothing ([Unidentified]); an unknown node or build is counted and
// shown as unknown, never as an empty name.
package fleet

import (
	"sort"
	"time"

	"github.com/leakscope/leakscope/analysis"
	"github.com/leakscope/leakscope/ingest/bundle"
)

// Capture is one capture with its report.
type Capture struct {
	ID       string
	Manifest bundle.Manifest
	Report   *analysis.Report
}

// Service is the fleet view of one service.
type Service struct {
	Service string `json:"service"`
	// Nodes are the named nodes of its captures; UnknownNodes counts its
	// captures that name no node. Summary says both in words ("3
	// captures on 2 nodes: a, b").
	Nodes        []string     `json:"nodes"`
	UnknownNodes int          `json:"unknown_node_captures,omitempty"`
	Summary      string       `json:"summary"`
	Builds       []BuildRef   `json:"builds"`   // newest capture first
	Captures     []CaptureRef `json:"captures"` // newest first
	Leaks        []Leak       `json:"leaks"`    // on most nodes first
}

// CaptureRef is one capture of the service. Start is when the capture
// began ([analysis.CaptureStart]: after the node agent's history).
type CaptureRef struct {
	ID       string    `json:"id"`
	Node     string    `json:"node,omitempty"`
	Build    string    `json:"build,omitempty"`
	Start    time.Time `json:"start,omitzero"`
	End      time.Time `json:"end,omitzero"`
	Suspects int       `json:"suspects"`
	// Analysed is false when the capture has no report (its analysis
	// failed or still runs): it shows no leak, and is not counted as a
	// capture without one.
	Analysed bool `json:"analysed"`
	// Incident is the capture's first incident in the report's words
	// (its summary), when it has one.
	Incident string `json:"incident,omitempty"`
	// Trigger is what started the capture, in the report's words
	// (analysis.TriggerText); "" for a capture started by hand.
	Trigger string `json:"trigger,omitempty"`
}

// BuildRef is one build of the service and how many of its captures
// were analysed.
type BuildRef struct {
	Build    string `json:"build,omitempty"`
	Version  string `json:"module_version,omitempty"`
	Revision string `json:"vcs_revision,omitempty"`
	Captures int    `json:"captures"`
}

// Services lists the named services the captures are of, each with its
// capture count, most captures first. Captures of no known service are
// left out (see [Unidentified]).
func Services(caps []Capture) []ServiceRef {
	by := map[string]*ServiceRef{}
	nodes := map[string]map[string]bool{}
	for _, c := range caps {
		name := c.Manifest.Target.Service()
		if name == "" {
			continue
		}
		r := by[name]
		if r == nil {
			r = &ServiceRef{Service: name}
			by[name] = r
			nodes[name] = map[string]bool{}
		}
		r.Captures++
		if n := c.Manifest.NodeName(); n != "" {
			nodes[name][n] = true
		} else {
			r.UnknownNodes++
		}
		if c.Manifest.End.After(r.LastCapture) {
			r.LastCapture = c.Manifest.End
		}
	}
	out := make([]ServiceRef, 0, len(by))
	for name, r := range by {
		r.Nodes = len(nodes[name])
		out = append(out, *r)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Captures != out[j].Captures {
			return out[i].Captures > out[j].Captures
		}
		return out[i].Service < out[j].Service
	})
	return out
}

// ServiceRef is one row of [Services]. Nodes counts the named nodes;
// UnknownNodes the captures that name none.
type ServiceRef struct {
	Service      string    `json:"service"`
	Captures     int       `json:"captures"`
	Nodes        int       `json:"nodes"`
	UnknownNodes int       `json:"unknown_node_captures,omitempty"`
	LastCapture  time.Time `json:"last_capture,omitzero"`
}

// Unidentified lists the captures whose service is unknown (files
// ingested without build info or an executable name), newest first: no
// fleet row compares them with other captures.
func Unidentified(caps []Capture) []CaptureRef {
	var out []CaptureRef
	for _, c := range caps {
		if c.Manifest.Target.Service() == "" {
			out = append(out, captureRef(c))
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Start.After(out[j].Start) })
	return out
}

// Summarize returns the fleet view of service from the captures of it
// among caps (others are ignored). Captures whose report is nil (analysis
// failed) count as captures but show no leaks, and are counted neither
// with nor without any leak.
func Summarize(service string, caps []Capture) Service {
	out := Service{Service: service, Nodes: []string{}, Builds: []BuildRef{}, Captures: []CaptureRef{}, Leaks: []Leak{}}
	var mine []Capture
	for _, c := range caps {
		if service != "" && c.Manifest.Target.Service() == service {
			mine = append(mine, c)
		}
	}
	sort.SliceStable(mine, func(i, j int) bool { return mine[i].Manifest.Start.After(mine[j].Manifest.Start) })
	nodes := map[string]bool{}
	for _, c := range mine {
		if n := c.Manifest.NodeName(); n != "" {
			nodes[n] = true
		} else {
			out.UnknownNodes++
		}
		out.Captures = append(out.Captures, captureRef(c))
	}
	for n := range nodes {
		out.Nodes = append(out.Nodes, n)
	}
	sort.Strings(out.Nodes)
	out.Summary = summaryText(len(mine), out.Nodes, out.UnknownNodes)
	out.Builds = builds(mine)
	out.Leaks = leaks(mine, out.Builds)
	return out
}

// captureRef is c as the fleet lists it.
func captureRef(c Capture) CaptureRef {
	m := c.Manifest
	ref := CaptureRef{ID: c.ID, Node: m.NodeName(), Build: m.Target.Build(), Start: analysis.CaptureStart(m), End: m.End}
	if c.Report == nil {
		return ref
	}
	ref.Analysed = true
	ref.Suspects = len(c.Report.Suspects)
	ref.Trigger = c.Report.Bundle.TriggerText
	if len(c.Report.Incidents) > 0 {
		ref.Incident = c.Report.Incidents[0].Summary
	}
	return ref
}

// builds lists the builds of the captures, the one of the newest capture
// first; an unknown build is one entry ("").
func builds(caps []Capture) []BuildRef {
	out := []BuildRef{}
	at := map[string]int{}
	for _, c := range caps {
		t := c.Manifest.Target
		b := t.Build()
		i, ok := at[b]
		if !ok {
			i = len(out)
			at[b] = i
			out = append(out, BuildRef{Build: b, Version: t.ModuleVersion, Revision: t.VCSRevision})
		}
		if c.Report != nil {
			out[i].Captures++
		}
	}
	return out
}
