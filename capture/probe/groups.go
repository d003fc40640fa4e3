//go:build linux

package probe

import (
	"errors"
	"fmt"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
)

// uprobe is one location a program is attached to.
type uprobe struct {
	prog       *ebpf.Program
	symbol     string
	fileOffset uint64 // of the function in the executable
	off        uint64 // from the function start
}

// probeGroup is the uprobes of one group, attached or not.
type probeGroup struct {
	uprobes []uprobe
	links   []link.Link // one per uprobe while attached, nil while detached
}

// group returns the group named name, creating it attached.
func (t *Tracer) group(name string) *probeGroup {
	g := t.groups[name]
	if g == nil {
		g = &probeGroup{}
		t.groups[name] = g
	}
	return g
}

// add attaches u and keeps it in the group.
func (g *probeGroup) add(t *Tracer, u uprobe) error {
	l, err := t.link(u)
	if err != nil {
		return err
	}
	g.uprobes = append(g.uprobes, u)
	g.links = append(g.links, l)
	return nil
}

// link puts u's program on its location in the traced process.
func (t *Tracer) link(u uprobe) (link.Link, error) {
	l, err := t.ex.Uprobe("", u.prog, &link.UprobeOptions{Address: u.fileOffset, Offset: u.off, PID: t.pid})
	if err != nil {
		return nil, classify(fmt.Sprintf("attach uprobe %s+%#x", u.symbol, u.off), err)
	}
	return l, nil
}

// detach closes the group's links; the programs stay loaded. Each close
// waits in the kernel for handlers in flight (~90 ms a link on Linux
// 6.18, one at a time however many close together), a wait the traced
// process does not pay.
func (g *probeGroup) detach() error {
	var errs []error
	for _, l := range g.links {
		errs = append(errs, l.Close())
	}
	g.links = nil
	return errors.Join(errs...)
}

// SetAttached attaches (on) or detaches the probes of group (GroupGoroutines,
// GroupAlloc or GroupGC) without reloading their programs; a detached probe
// costs the traced process nothing. It does nothing when the group is
// already so, or was not enabled in [Options]. Events of the group are
// those that happened while it was attached: a time taken before
// SetAttached(true) and one taken after SetAttached(false) returns bound
// every one of them (capture's probe_windows are taken so); at the edges,
// while the uprobes are being attached or closed, some may be missed.
func (t *Tracer) SetAttached(group string, on bool) error {
	t.groupMu.Lock()
	defer t.groupMu.Unlock()
	if t.closed.Load() != nil {
		return errors.New("set probes: tracer closed")
	}
	g := t.groups[group]
	if g == nil || (g.links != nil) == on {
		return nil
	}
	if !on {
		return g.detach()
	}
	links := make([]link.Link, 0, len(g.uprobes))
	for _, u := range g.uprobes {
		l, err := t.link(u)
		if err != nil {
			for _, l := range links {
				l.Close()
			}
			return err
		}
		links = append(links, l)
	}
	g.links = links
	return nil
}

// Attached reports whether the probes of group are attached.
func (t *Tracer) Attached(group string) bool {
	t.groupMu.Lock()
	defer t.groupMu.Unlock()
	g := t.groups[group]
	return g != nil && g.links != nil
}
