package dump

import (
	"bytes"
	"fmt"
)

// substates of a goroutine block.
const (
	stFrames      = iota // expecting a frame, "created by", elision or the end
	stFile               // a function line was read; its location follows
	stCreatedFile        // "created by" was read; its location follows
	stDone               // "created by" complete; only ancestors may follow
	stAncestor           // inside "[originating from goroutine N]:"
	stAncFile            // an ancestor's function line was read
)

// blocks parses the goroutine blocks of one stream of the input. A block
// starts at a header line and ends at a blank line, at the next header, at
// a line that ends it by its form (a register dump, "exit status 2", a
// race report...), once its "created by" frame is complete at any other
// line, or at a line that belongs to no traceback — the block is then kept
// as far as it goes.
type blocks struct {
	r    *Reader
	race races

	gs     [2]Goroutine
	cur    int
	in     bool
	sub    int
	pend   Frame // function line waiting for its location
	dots   bool  // pend's arguments were "..."
	guess  bool  // pend is a line taken for a cgo frame (no parentheses)
	indent []byte
	h      header
	// args holds the argument text of the current block's frames, one
	// after the other; argEnds where each frame's ends. end turns them
	// into one string per goroutine that the frames' Args slice.
	args    []byte
	argEnds []int
}

// feed consumes one line and returns a goroutine when the line ends one.
// A line that ends a block but belongs to what follows is fed again as a
// line outside any block.
func (p *blocks) feed(ln logLine) *Goroutine {
	if !p.in {
		p.outside(ln)
		return nil
	}
	line, ok := p.dedent(ln.text)
	if !ok {
		g := p.end()
		p.outside(ln)
		return g
	}
	if ln.partial && !endsBlock(line) && !wholeLocation(line, p.sub) {
		if couldContinue(line, p.sub) {
			// The input stops mid-line inside the block: cut off.
			p.r.cut(&p.gs[p.cur], "mid-line")
			p.in = false
			return nil
		}
		p.r.skipped++
		return p.end()
	}
	if ln.tooLong {
		p.interrupted(ln, line, "a line longer than 1 MiB")
		return p.end()
	}
	g, refeed := p.inside(ln, line)
	if refeed {
		p.outside(ln)
	}
	return g
}

// outside handles a line between blocks.
func (p *blocks) outside(ln logLine) {
	if ln.tooLong {
		p.r.skipped++
		return
	}
	if indent, ok := headerAt(ln.text, &p.h); ok {
		if ln.partial {
			p.r.cutHeader(ln)
			return
		}
		p.start(ln.num, indent)
		return
	}
	if ln.partial && couldBeHeader(ln.text) {
		p.r.cutHeader(ln)
		return
	}
	if len(bytes.TrimSpace(ln.text)) > 0 {
		p.r.skipped++
		if p.race.feed(ln) {
			p.r.skipped--
		} else {
			p.r.ft.line(ln.text)
			if looksLikeFrame(ln.text) {
				p.r.strayFrames++
			}
		}
	}
}

// dedent strips the block's indentation from line; ok is false for a
// non-blank line without it.
func (p *blocks) dedent(line []byte) ([]byte, bool) {
	if len(p.indent) == 0 {
		return line, true
	}
	if rest, ok := bytes.CutPrefix(line, p.indent); ok {
		return rest, true
	}
	if len(bytes.TrimSpace(line)) == 0 {
		return nil, true
	}
	return nil, false
}

// start begins a block from the header in p.h.
func (p *blocks) start(num int, indent []byte) {
	g := &p.gs[p.cur]
	g.reset(p.h.id, num)
	p.r.ft.block()
	p.args, p.argEnds = p.args[:0], p.argEnds[:0]
	p.indent = append(p.indent[:0], indent...)
	g.State = p.r.intern(p.h.state)
	g.WaitMinutes = p.h.minutes
	g.LockedToThread = p.h.locked
	g.Bubble = p.h.bubble
	if p.h.labels != nil {
		if l, ok := parseLabels(p.h.labels, p.h.labelsBare); ok {
			g.Labels = p.r.intern([]byte(l))
		}
	}
	p.in = true
	p.sub = stFrames
	p.guess = false
}

// end closes the current block and returns it, or nil for a block with
// no stack at all (a header-like line in a log).
func (p *blocks) end() *Goroutine {
	g := &p.gs[p.cur]
	p.in = false
	if len(g.Frames) == 0 && !g.StackUnavailable {
		p.r.emptyBlocks++
		return nil
	}
	if len(p.args) > 0 && len(p.argEnds) == len(g.Frames) {
		all, from := string(p.args), 0
		for i, to := range p.argEnds {
			g.Frames[i].Args = all[from:to]
			from = to
		}
	}
	p.cur ^= 1
	return g
}

// argBase is where the next frame's arguments start in p.args.
func (p *blocks) argBase() int {
	if n := len(p.argEnds); n > 0 {
		return p.argEnds[n-1]
	}
	return 0
}

// interrupted records a block ended by a line that is not part of it,
// where the block cannot be complete.
func (p *blocks) interrupted(ln logLine, line []byte, what string) {
	p.r.interrupted++
	if p.r.firstInterrupt == "" {
		p.r.firstInterrupt = fmt.Sprintf("goroutine %d (line %d) ended at line %d by %s %q", p.gs[p.cur].ID, p.gs[p.cur].Line, ln.num, what, clip(line))
	}
}

// inside handles a line of a block (without its indentation). refeed asks
// for the line to be handled again outside the block it ended.
func (p *blocks) inside(ln logLine, line []byte) (g *Goroutine, refeed bool) {
	cur := &p.gs[p.cur]
	switch p.sub {
	case stFile, stCreatedFile, stAncFile:
		var fl fileLine
		if !parseFileLine(line, &fl) {
			if p.guess {
				// The line taken for a cgo frame was other output.
				p.r.skipped++
				return p.end(), true
			}
			p.interrupted(ln, line, "a line that is not the frame's file:line")
			return p.end(), true
		}
		p.location(cur, fl)
		return nil, false
	}
	switch {
	case len(line) == 0:
		return p.end(), false
	case parseHeader(line, &p.h):
		done := p.end()
		p.start(ln.num, p.indent)
		return done, false
	case parseAncestor(line):
		cur.Ancestors++
		p.sub = stAncestor
		return nil, false
	case p.sub == stDone || endsBlock(line):
		// The block is complete; what follows is other output.
		return p.end(), true
	}
	return p.frameLine(ln, cur, line)
}

// location completes the pending frame (or "created by") with fl.
func (p *blocks) location(g *Goroutine, fl fileLine) {
	switch p.sub {
	case stFile:
		f := p.pend
		f.File = p.r.intern(fl.file)
		f.Line = fl.line
		f.Inlined = p.dots && !fl.hasOffset
		g.Frames = append(g.Frames, f)
		p.argEnds = append(p.argEnds, len(p.args))
		p.sub = stFrames
	case stCreatedFile:
		g.createdBy.File = p.r.intern(fl.file)
		g.createdBy.Line = fl.line
		g.CreatedBy = &g.createdBy
		p.sub = stDone
	default:
		p.sub = stAncestor
	}
	p.guess = false
}

// frameLine handles the lines of a stack: functions, "created by",
// elisions and the runtime's notes.
func (p *blocks) frameLine(ln logLine, g *Goroutine, line []byte) (*Goroutine, bool) {
	anc := p.sub == stAncestor
	if fn, goid, ok := parseCreatedBy(line); ok {
		if anc {
			p.sub = stAncFile
			return nil, false
		}
		g.createdBy = Frame{Function: p.r.intern(fn)}
		g.CreatorGoid = goid
		p.sub = stCreatedFile
		return nil, false
	}
	if n, ok := parseElided(line); ok {
		if !anc {
			g.FramesElided = true
			g.ElidedFrames += n
		}
		return nil, false
	}
	if bytes.Equal(line, unavailable) {
		g.StackUnavailable = true
		return nil, false
	}
	if bytes.HasPrefix(line, nonGo) {
		if !anc {
			g.Frames = append(g.Frames, Frame{Function: "non-Go function"})
			p.args = p.args[:p.argBase()]
			p.argEnds = append(p.argEnds, len(p.args))
		}
		return nil, false
	}
	name, args, ok := parseFunc(line)
	guess := false
	if !ok && cgoFrame(line) {
		// A cgo symbolizer prints C functions without parentheses.
		name, guess, ok = line, true, true
	}
	if !ok {
		if len(g.Frames) == 0 && !g.StackUnavailable {
			p.r.skipped++ // a header-like line in other output
		} else if anc {
			p.interrupted(ln, line, "a line that is not part of a stack")
		}
		return p.end(), true
	}
	if anc {
		p.sub = stAncFile
		return nil, false
	}
	fn := p.r.intern(name)
	if fn == "panic" {
		// The runtime prints runtime.gopanic as "panic"; profiles name
		// it in full.
		fn = "runtime.gopanic"
	}
	p.pend = Frame{Function: fn}
	p.dots = bytes.Equal(args, []byte("..."))
	p.args = append(p.args[:p.argBase()], args...)
	p.sub = stFile
	p.guess = guess
	return nil, false
}
