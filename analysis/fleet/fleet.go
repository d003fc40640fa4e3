// Package fleet compares the captures of one service across nodes: which
// leaks appear in how many captures on how many nodes, and since when. It
// reads the reports [analysis.Analyze] wrote and computes nothing the
// report already holds: every count, growth and score is a suspect's own.
package fleet

import (
	"github.com/leakscope/leakscope/internal/format"
	"slices"
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
	Service  string       `json:"service"`
	Nodes    []string     `json:"nodes"`
	Captures []CaptureRef `json:"captures"` // newest first
	Leaks    []Leak       `json:"leaks"`    // on most nodes first
}

// CaptureRef is one capture of the service. Start is when the capture
// began ([analysis.CaptureStart]: after the node agent's history).
type CaptureRef struct {
	ID       string    `json:"id"`
	Node     string    `json:"node"`
	Start    time.Time `json:"start,omitzero"`
	End      time.Time `json:"end,omitzero"`
	Suspects int       `json:"suspects"`
	// Incident is the capture's first incident in the report's words
	// (its summary), when it has one.
	Incident string `json:"incident,omitempty"`
}

// Leak is one leak (the same kind, pattern, location and creator) as seen
// across the service's captures.
type Leak struct {
	Kind     string `json:"kind"`
	Pattern  string `json:"pattern"`
	Title    string `json:"title"`
	Location string `json:"location"`
	Creator  string `json:"creator,omitempty"`
	// Nodes are the nodes with a capture showing it; Captures how many
	// captures do.
	Nodes    []string `json:"nodes"`
	Captures int      `json:"captures"`
	// FirstSeen is the earliest first_seen of its suspects; LastSeen the
	// end of the latest capture showing it.
	FirstSeen time.Time `json:"first_seen,omitzero"`
	LastSeen  time.Time `json:"last_seen,omitzero"`
	// Since is when the leak began: the earliest onset of its suspects
	// (the report's estimate, Suspect.Onset.At), else FirstSeen.
	Since time.Time `json:"since,omitzero"`
	// MaxScore, MaxCount and MaxGrowthPerMin are the largest of its
	// suspects' score, count and growth_per_min.
	MaxScore        float64 `json:"max_score"`
	MaxCount        int64   `json:"max_count"`
	MaxGrowthPerMin float64 `json:"max_growth_per_min"`
	// Display holds those three as every view prints them, with units.
	Display LeakText `json:"display"`
	// Seen lists each capture's suspect, newest capture first.
	Seen []Sighting `json:"seen"`
}

// LeakText is a [Leak]'s largest figures as text: "97.6",
// "4.5 MiB" or "308 goroutines", "+814/min" or "+11.3 MiB/min".
type LeakText struct {
	MaxScore        string `json:"max_score"`
	MaxCount        string `json:"max_count"`
	MaxGrowthPerMin string `json:"max_growth_per_min"`
}

func (l *Leak) display() {
	c := analysis.Suspect{Kind: l.Kind, Count: l.MaxCount}
	l.Display = LeakText{MaxScore: format.Score(l.MaxScore), MaxCount: analysis.CountText(c), MaxGrowthPerMin: analysis.FormatRate(l.MaxGrowthPerMin, l.Kind)}
}

// Sighting is the suspect one capture reported for a leak.
type Sighting struct {
	Capture      string    `json:"capture"`
	Node         string    `json:"node"`
	Suspect      string    `json:"suspect"`
	Count        int64     `json:"count"`
	GrowthPerMin float64   `json:"growth_per_min"`
	Score        float64   `json:"score"`
	FirstSeen    time.Time `json:"first_seen,omitzero"`
	// Onset is the report's onset estimate for the suspect (zero: none).
	Onset time.Time `json:"onset,omitzero"`
}

// Services lists the services the captures are of, each with its
// capture count, most captures first.
func Services(caps []Capture) []ServiceRef {
	by := map[string]*ServiceRef{}
	nodes := map[string]map[string]bool{}
	for _, c := range caps {
		name := c.Manifest.Target.Service()
		r := by[name]
		if r == nil {
			r = &ServiceRef{Service: name}
			by[name] = r
			nodes[name] = map[string]bool{}
		}
		r.Captures++
		nodes[name][c.Manifest.Node] = true
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

// ServiceRef is one row of [Services].
type ServiceRef struct {
	Service     string    `json:"service"`
	Captures    int       `json:"captures"`
	Nodes       int       `json:"nodes"`
	LastCapture time.Time `json:"last_capture,omitzero"`
}

// key identifies a leak across captures.
type key struct{ kind, pattern, location, creator string }

// Summarize returns the fleet view of service from the captures of it
// among caps (others are ignored). Captures whose report is nil (analysis
// failed) count as captures but show no leaks.
func Summarize(service string, caps []Capture) Service {
	out := Service{Service: service, Nodes: []string{}, Captures: []CaptureRef{}, Leaks: []Leak{}}
	mine := make([]Capture, 0, len(caps))
	for _, c := range caps {
		if c.Manifest.Target.Service() == service {
			mine = append(mine, c)
		}
	}
	sort.SliceStable(mine, func(i, j int) bool { return mine[i].Manifest.Start.After(mine[j].Manifest.Start) })
	nodes := map[string]bool{}
	leaks := map[key]*Leak{}
	var order []key
	for _, c := range mine {
		m := c.Manifest
		nodes[m.Node] = true
		ref := CaptureRef{ID: c.ID, Node: m.Node, Start: analysis.CaptureStart(m), End: m.End}
		if c.Report != nil {
			ref.Suspects = len(c.Report.Suspects)
			if len(c.Report.Incidents) > 0 {
				ref.Incident = c.Report.Incidents[0].Summary
			}
			for _, s := range c.Report.Suspects {
				k := key{s.Kind, s.Pattern, s.Location, s.Creator}
				l := leaks[k]
				if l == nil {
					l = &Leak{Kind: s.Kind, Pattern: s.Pattern, Title: s.Title, Location: s.Location, Creator: s.Creator}
					leaks[k] = l
					order = append(order, k)
				}
				l.add(c, s)
			}
		}
		out.Captures = append(out.Captures, ref)
	}
	for n := range nodes {
		out.Nodes = append(out.Nodes, n)
	}
	sort.Strings(out.Nodes)
	for _, k := range order {
		leaks[k].display()
		out.Leaks = append(out.Leaks, *leaks[k])
	}
	sort.SliceStable(out.Leaks, func(i, j int) bool {
		a, b := out.Leaks[i], out.Leaks[j]
		if len(a.Nodes) != len(b.Nodes) {
			return len(a.Nodes) > len(b.Nodes)
		}
		if a.Captures != b.Captures {
			return a.Captures > b.Captures
		}
		return a.MaxScore > b.MaxScore
	})
	return out
}

// add records one capture's suspect of the leak.
func (l *Leak) add(c Capture, s analysis.Suspect) {
	m := c.Manifest
	if !slices.Contains(l.Nodes, m.Node) {
		l.Nodes = append(l.Nodes, m.Node)
		sort.Strings(l.Nodes)
	}
	if len(l.Seen) == 0 || l.Seen[len(l.Seen)-1].Capture != c.ID {
		l.Captures++
	}
	var onset time.Time
	if s.Onset != nil {
		onset = s.Onset.At
	}
	l.Seen = append(l.Seen, Sighting{Capture: c.ID, Node: m.Node, Suspect: s.ID, Count: s.Count,
		GrowthPerMin: s.GrowthPerMin, Score: s.Score, FirstSeen: s.FirstSeen, Onset: onset})
	if !s.FirstSeen.IsZero() && (l.FirstSeen.IsZero() || s.FirstSeen.Before(l.FirstSeen)) {
		l.FirstSeen = s.FirstSeen
	}
	since := onset
	if since.IsZero() {
		since = s.FirstSeen
	}
	if !since.IsZero() && (l.Since.IsZero() || since.Before(l.Since)) {
		l.Since = since
	}
	if m.End.After(l.LastSeen) {
		l.LastSeen = m.End
	}
	l.MaxScore = max(l.MaxScore, s.Score)
	l.MaxCount = max(l.MaxCount, s.Count)
	l.MaxGrowthPerMin = max(l.MaxGrowthPerMin, s.GrowthPerMin)
}
