package fleet

import (
	"slices"
	"sort"
	"time"

	"github.com/leakscope/leakscope/analysis"
)

// Leak is one leak — the same kind and pattern at the same location from
// the same origin in the user's code — as seen across the service's
// captures.
type Leak struct {
	Kind     string `json:"kind"`
	Pattern  string `json:"pattern"`
	Title    string `json:"title"`
	Location string `json:"location"`
	// Origin is the user function the report traced it to (the suspect's
	// origin, else its creator); Creator the creator function.
	Origin  string `json:"origin,omitempty"`
	Creator string `json:"creator,omitempty"`
	// Nodes are the named nodes with a capture showing it; UnknownNodes
	// counts the captures showing it that name no node. Captures is how
	// many captures show it.
	Nodes        []string `json:"nodes"`
	UnknownNodes int      `json:"unknown_node_captures,omitempty"`
	Captures     int      `json:"captures"`
	// FirstSeen is the earliest first_seen of its suspects; LastSeen the
	// end of the latest capture showing it.
	FirstSeen time.Time `json:"first_seen,omitzero"`
	LastSeen  time.Time `json:"last_seen,omitzero"`
	// Since is when the leak began: the earliest onset its suspects'
	// reports estimate (Suspect.Onset.At); zero when none does.
	Since time.Time `json:"since,omitzero"`
	// Worst is the sighting with the highest score (the latest capture
	// among equals): its count, growth and score are the row's, all from
	// that one capture.
	Worst Sighting `json:"worst"`
	// Builds says, per build of the service, in how many of its analysed
	// captures the leak is present.
	Builds []BuildPresence `json:"builds"`
	// Display holds the row's figures and texts as every view prints
	// them.
	Display LeakText `json:"display"`
	// Seen lists each capture's suspect, newest capture first.
	Seen []Sighting `json:"seen"`
}

// Sighting is the suspect one capture reported for a leak (its highest
// scored one, when the capture reported several).
type Sighting struct {
	Capture      string    `json:"capture"`
	Node         string    `json:"node,omitempty"`
	Build        string    `json:"build,omitempty"`
	Suspect      string    `json:"suspect"`
	Count        int64     `json:"count"`
	GrowthPerMin float64   `json:"growth_per_min"`
	Score        float64   `json:"score"`
	FirstSeen    time.Time `json:"first_seen,omitzero"`
	// Onset is the report's onset estimate for the suspect (zero: none).
	Onset time.Time `json:"onset,omitzero"`
	// Trigger is what started the capture, in the report's words.
	Trigger string `json:"trigger,omitempty"`
}

// BuildPresence is one build's captures for a leak: Present of its
// Captures (the analysed ones) show it, Since the earliest onset among
// them.
type BuildPresence struct {
	Build    string    `json:"build,omitempty"`
	Present  int       `json:"present"`
	Captures int       `json:"captures"`
	Since    time.Time `json:"since,omitzero"`
}

// key identifies a leak across captures.
type key struct{ kind, pattern, location, origin string }

// suspectKey is s's leak key: its origin in the user's code, else its
// creator.
func suspectKey(s analysis.Suspect) key {
	origin := s.Creator
	if s.Origin != nil && s.Origin.Function != "" {
		origin = s.Origin.Function
	}
	return key{s.Kind, s.Pattern, s.Location, origin}
}

// leaks groups the captures' suspects (newest capture first) into leaks,
// on most nodes first.
func leaks(caps []Capture, builds []BuildRef) []Leak {
	by := map[key]*Leak{}
	var order []key
	for _, c := range caps {
		if c.Report == nil {
			continue
		}
		best := map[key]analysis.Suspect{}
		var keys []key
		for _, s := range c.Report.Suspects {
			k := suspectKey(s)
			if b, ok := best[k]; !ok || s.Score > b.Score {
				if !ok {
					keys = append(keys, k)
				}
				best[k] = s
			}
		}
		for _, k := range keys {
			l := by[k]
			if l == nil {
				s := best[k]
				l = &Leak{Kind: s.Kind, Pattern: s.Pattern, Title: s.Title, Location: s.Location, Origin: k.origin, Creator: s.Creator, Nodes: []string{}}
				by[k] = l
				order = append(order, k)
			}
			l.add(c, best[k])
		}
	}
	out := make([]Leak, 0, len(order))
	for _, k := range order {
		l := by[k]
		l.Builds = presence(l, caps, builds)
		l.display()
		out = append(out, *l)
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if na, nb := len(a.Nodes)+a.UnknownNodes, len(b.Nodes)+b.UnknownNodes; na != nb {
			return na > nb
		}
		if a.Captures != b.Captures {
			return a.Captures > b.Captures
		}
		return a.Worst.Score > b.Worst.Score
	})
	return out
}

// add records one capture's suspect of the leak; captures come newest
// first.
func (l *Leak) add(c Capture, s analysis.Suspect) {
	m := c.Manifest
	node := m.NodeName()
	switch {
	case node == "":
		l.UnknownNodes++
	case !slices.Contains(l.Nodes, node):
		l.Nodes = append(l.Nodes, node)
		sort.Strings(l.Nodes)
	}
	l.Captures++
	var onset time.Time
	if s.Onset != nil {
		onset = s.Onset.At
	}
	seen := Sighting{Capture: c.ID, Node: node, Build: m.Target.Build(), Suspect: s.ID, Count: s.Count,
		GrowthPerMin: s.GrowthPerMin, Score: s.Score, FirstSeen: s.FirstSeen, Onset: onset, Trigger: c.Report.Bundle.TriggerText}
	l.Seen = append(l.Seen, seen)
	if !s.FirstSeen.IsZero() && (l.FirstSeen.IsZero() || s.FirstSeen.Before(l.FirstSeen)) {
		l.FirstSeen = s.FirstSeen
	}
	if !onset.IsZero() && (l.Since.IsZero() || onset.Before(l.Since)) {
		l.Since = onset
	}
	if m.End.After(l.LastSeen) {
		l.LastSeen = m.End
	}
	if len(l.Seen) == 1 || seen.Score > l.Worst.Score {
		l.Worst = seen
	}
}

// presence counts, per build, the analysed captures showing the leak.
func presence(l *Leak, caps []Capture, builds []BuildRef) []BuildPresence {
	out := make([]BuildPresence, 0, len(builds))
	at := map[string]int{}
	for _, b := range builds {
		if b.Captures > 0 {
			at[b.Build] = len(out)
			out = append(out, BuildPresence{Build: b.Build, Captures: b.Captures})
		}
	}
	for _, s := range l.Seen {
		p := &out[at[s.Build]]
		p.Present++
		if !s.Onset.IsZero() && (p.Since.IsZero() || s.Onset.Before(p.Since)) {
			p.Since = s.Onset
		}
	}
	// Builds it is present in first, most captures first.
	sort.SliceStable(out, func(i, j int) bool { return (out[i].Present > 0) && out[j].Present == 0 })
	return out
}
