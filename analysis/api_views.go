package analysis

import (
	"time"
)

// AncestryTree is the goroutine creation tree returned by [Ancestry],
// rolled up by function: a node is every goroutine that started in
// Function and was created from a goroutine of the parent node.
type AncestryTree struct {
	Roots []*AncestryNode `json:"roots"`
	// Goroutines is how many distinct goroutines the tree covers.
	Goroutines int `json:"goroutines"`
	// Sources lists the tables that contributed ("goroutines",
	// "trace_goroutines", "ebpf_events").
	Sources []string `json:"sources"`
	// AliveAt is the snapshot the nodes' Alive counts are for: the last
	// goroutine dump (zero when there is none: alive at the end of the
	// traces and eBPF events).
	AliveAt time.Time `json:"alive_at,omitzero"`
	chains  map[int64]int64
	nodeOf  map[int64]*AncestryNode
	alive   map[int64]bool
}

// AncestryMembers is where one suspect's goroutines sit in the ancestry
// tree: how many of them are alive at AliveAt (every view shows the
// suspect's Count at its CountAt; this is the same figure), and on which
// nodes.
type AncestryMembers struct {
	ID      string           `json:"id"`
	Alive   int64            `json:"alive"`
	AliveAt time.Time        `json:"alive_at,omitzero"`
	Nodes   []AncestryMember `json:"nodes"`
}

// AncestryMember is one node holding members of a suspect: Node is the
// [AncestryNode.ID] (several nodes may share a function and creator in
// different places of the tree).
type AncestryMember struct {
	Node      int    `json:"node"`
	Function  string `json:"function"`
	CreatedBy string `json:"created_by,omitempty"`
	Members   int64  `json:"members"`
}

// AncestryNode is one function of the creation tree.
type AncestryNode struct {
	// ID names the node within its tree: 1, 2, … in the order the tree
	// lists its nodes (a node before its children).
	ID int `json:"id"`
	// Function is where the goroutines start (their entry function, ""
	// when no source shows it); CreatedBy the function holding the go
	// statement.
	Function  string `json:"function"`
	CreatedBy string `json:"created_by,omitempty"`
	// Label names the node for people: Function, or what is known of a
	// goroutine whose entry no source shows ("entry unknown · created in
	// time.goFunc").
	Label string `json:"label"`
	Count int64  `json:"count"` // goroutines seen at this node
	Alive int64  `json:"alive"` // of them alive at the end of the bundle
	// Subtree and SubtreeAlive are the same counts with every goroutine
	// created under this node added (its own included). Children come
	// largest subtree first.
	Subtree      int64           `json:"subtree"`
	SubtreeAlive int64           `json:"subtree_alive"`
	Children     []*AncestryNode `json:"children,omitempty"`
}

// LifetimeView holds goroutine and span bars for a timeline view, as
// returned by [Lifetimes].
type LifetimeView struct {
	From    time.Time `json:"from"`
	To      time.Time `json:"to"`
	Bars    []Bar     `json:"bars"`
	Total   int       `json:"total"`   // bars in range before downsampling
	Omitted int       `json:"omitted"` // bars dropped by downsampling
	// AliveAt is the snapshot "alive" refers to: the last goroutine dump
	// (zero without dumps: alive at the end of the traces and eBPF
	// events); Alive counts the goroutines alive then, before
	// downsampling.
	AliveAt time.Time `json:"alive_at,omitzero"`
	Alive   int       `json:"alive"`
	// Groups are the bars' groups, in the order a timeline draws them
	// (each bar's Group indexes them).
	Groups []LifetimeGroup `json:"groups"`
	alive  map[int64]bool
}

// LifetimeMembers is how many of one suspect's goroutines a timeline shows
// alive at AliveAt: the suspect's Count, at its CountAt.
type LifetimeMembers struct {
	ID      string    `json:"id"`
	Alive   int64     `json:"alive"`
	AliveAt time.Time `json:"alive_at,omitzero"`
}

// Bar is one lifetime: a goroutine, task or region.
type Bar struct {
	ID    string     `json:"id"`   // "g123", "task7", "region9"
	Kind  string     `json:"kind"` // "goroutine", "task", "region"
	Name  string     `json:"name"` // start function or span name
	Goid  int64      `json:"goid,omitempty"`
	Start time.Time  `json:"start"`
	End   *time.Time `json:"end"` // nil: still alive / never ended
	// EndUnknown says End is when the eBPF probes that saw the goroutine
	// created were detached (see the probe_windows table), not its exit:
	// it may have lived on.
	EndUnknown bool   `json:"end_unknown,omitempty"`
	State      string `json:"state,omitempty"`
	// Parent is the creator goid (goroutines) or the parent span id.
	Parent int64 `json:"parent,omitempty"`
	// CreatedIn is the function that ran the go statement, for a
	// goroutine whose entry (Name) is unknown.
	CreatedIn string `json:"created_in,omitempty"`
	// Group indexes LifetimeView.Groups.
	Group int `json:"group"`
	// Verdict is, for a goroutine, VerdictSuspect (Suspect names which),
	// VerdictHealthy or VerdictEnded.
	Verdict string `json:"verdict,omitempty"`
	Suspect string `json:"suspect,omitempty"`
}

// LifetimeGroup is one named group of a timeline's bars: the goroutines
// that start in one function (created in one place, when the entry is
// unknown), or the spans of one kind and name. Its figures count the
// view's bars.
type LifetimeGroup struct {
	Kind string `json:"kind"` // "goroutine", "task", "region"
	Name string `json:"name"` // start function or span name ("" unknown)
	// CreatedIn is, for goroutines whose entry is unknown, the function
	// that ran their go statement, when known.
	CreatedIn string `json:"created_in,omitempty"`
	// Label names the group for people: the function or span, or what
	// is known of it ("entry unknown · created in time.goFunc").
	Label string `json:"label"`
	Count int    `json:"count"`
	// Alive counts bars without an end (alive when the view ends);
	// AliveAtDump, when the view has an AliveAt (the last dump), those
	// alive then, as the view's Alive counts them. Members counts bars in
	// a suspect, and Suspects names the suspects they belong to.
	Alive       int      `json:"alive"`
	AliveAtDump *int     `json:"alive_at_dump,omitempty"`
	Members     int      `json:"members"`
	Suspects    []string `json:"suspects"`
	// Summary says the counts in words ("236 goroutines, 12 alive, 12 in
	// G1"; "6 tasks, 1 open").
	Summary string `json:"summary"`
}
