package gosrc

// The context package, modeled: a derived context records its parents,
// a cancel function the contexts it cancels, and a context's Done
// channel is a class of its own ([flow.dones]).

// ctxOf returns the context classes whose Done channel c is.
func (p *Program) ctxOf(c Class) []node {
	if !c.Valid() {
		return nil
	}
	var out []node
	for _, d := range p.flow.dones {
		if p.flow.cl.find(d[1]) == c.n {
			out = append(out, p.flow.cl.find(d[0]))
		}
	}
	return out
}

// ancestors lists a context class and every class it derives from.
func (p *Program) ancestors(ctxs []node) map[node]bool {
	seen := map[node]bool{}
	work := append([]node(nil), ctxs...)
	for len(work) > 0 {
		n := p.flow.cl.find(work[len(work)-1])
		work = work[:len(work)-1]
		if seen[n] {
			continue
		}
		seen[n] = true
		work = append(work, p.flow.cl.data(n).parents...)
	}
	return seen
}

// cancelsOf lists the cancel-function classes whose call closes Done
// channel c: those cancelling its context or one it derives from.
func (p *Program) cancelsOf(c Class) []Class {
	ctxs := p.ctxOf(c)
	if len(ctxs) == 0 {
		return nil
	}
	anc := p.ancestors(ctxs)
	var out []Class
	for n, d := range p.flow.cl.info {
		if d == nil || d.flags&fCancel == 0 || p.flow.cl.find(node(n)) != node(n) {
			continue
		}
		for _, x := range d.cancels {
			if anc[p.flow.cl.find(x)] {
				out = append(out, Class{p: p, n: node(n)})
				break
			}
		}
	}
	return out
}

// DoneOf says, for a context's Done channel c, whether a deadline of it
// or of a context it derives from closes it by itself (timer), and
// whether one of them comes from code not read (opaque: that code may
// cancel it). ok is false when c is no context's Done channel.
func (c Class) DoneOf() (timer, opaque, ok bool) {
	d := c.doneFacts()
	return d.timer, d.opaque, d.ok
}

// CancelCalled reports, for a context's Done channel c, whether a cancel
// function of its context or of one it derives from is called by some
// statement of the program or given to code not read, which may call it.
// When none is, only a deadline can close c.
func (c Class) CancelCalled() bool { return c.doneFacts().called }

// doneFacts is what DoneOf and CancelCalled answer of one class, worked
// out once per Program (every waiter on a context asks).
type doneFacts struct{ timer, opaque, ok, called bool }

func (c Class) doneFacts() doneFacts {
	if !c.Valid() {
		return doneFacts{}
	}
	p := c.p
	p.calledOnce.Do(p.indexCalled)
	p.lazy.Lock()
	defer p.lazy.Unlock()
	if d, ok := p.doneMemo[c.n]; ok {
		return d
	}
	var d doneFacts
	if ctxs := p.ctxOf(c); len(ctxs) > 0 {
		d.ok = true
		for n := range p.ancestors(ctxs) {
			f := p.flow.cl.data(n).flags
			d.timer = d.timer || f&fTimer != 0
			d.opaque = d.opaque || f&fOpaque != 0
		}
		for _, k := range p.cancelsOf(c) {
			d.called = d.called || k.Opaque() || p.called[k.n]
		}
	}
	p.doneMemo[c.n] = d
	return d
}

// indexCalled records the cancel functions the program's statements call.
func (p *Program) indexCalled() {
	p.called = map[node]bool{}
	p.doneMemo = map[node]doneFacts{}
	for _, f := range p.funcs.all {
		for _, e := range f.events {
			if e.op == OpCancel {
				p.called[p.flow.cl.find(e.obj)] = true
			}
		}
	}
}
