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
	ctxs := c.p.ctxOf(c)
	if len(ctxs) == 0 {
		return false, false, false
	}
	for n := range c.p.ancestors(ctxs) {
		d := c.p.flow.cl.data(n)
		timer = timer || d.flags&fTimer != 0
		opaque = opaque || d.flags&fOpaque != 0
	}
	return timer, opaque, true
}

// CancelCalled reports, for a context's Done channel c, whether a cancel
// function of its context or of one it derives from is called by some
// statement of the program or given to code not read, which may call it.
// When none is, only a deadline can close c.
func (c Class) CancelCalled() bool {
	c.p.calledOnce.Do(c.p.indexCalled)
	for _, k := range c.p.cancelsOf(c) {
		if k.Opaque() || c.p.called[k.n] {
			return true
		}
	}
	return false
}

// indexCalled records the cancel functions the program's statements call.
func (p *Program) indexCalled() {
	p.called = map[node]bool{}
	for _, f := range p.funcs.all {
		for _, e := range f.events {
			if e.op == OpCancel {
				p.called[p.flow.cl.find(e.obj)] = true
			}
		}
	}
}
