package dump

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

const (
	// RuntimeCap is the size at which runtime/pprof stops filling a
	// debug=2 goroutine dump (64 MiB).
	RuntimeCap = 64 << 20
	// maxLine is the longest line kept; longer lines are an error inside a
	// goroutine block and skipped between blocks.
	maxLine = 1 << 20
	// maxInterned bounds the table of interned function and file names.
	maxInterned = 1 << 16
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

// Reader reads goroutines one at a time from a goroutine dump or crash
// traceback. It is not safe for concurrent use.
type Reader struct {
	br      *bufio.Reader
	long    []byte
	tooLong bool
	line    int
	bytes   int64
	lastNL  bool
	eof     bool
	err     error

	gs   [2]Goroutine
	cur  int
	in   bool
	sub  int
	pend Frame // function line waiting for its location
	dots bool  // pend's arguments were "..."
	// args holds the argument text of the current block's frames, one
	// after the other; argEnds where each frame's ends. end turns them
	// into one string per goroutine that the frames' Args slice.
	args    []byte
	argEnds []int
	h       header
	names   map[string]string

	count     int
	skipped   int
	truncated bool
	detail    string
}

// NewReader returns a reader of the dump in r. It buffers r itself.
func NewReader(r io.Reader) *Reader {
	return &Reader{br: bufio.NewReaderSize(r, 256<<10), names: make(map[string]string)}
}

// Next returns the next complete goroutine. At the end of the input it
// returns io.EOF; an input without any goroutine yields an error wrapping
// [ErrNoGoroutines] instead, and a line that breaks the format inside a
// block yields a [*SyntaxError]. Errors are sticky. The returned goroutine
// and its slices are only valid until the next call (see [Goroutine.Clone]).
func (r *Reader) Next() (*Goroutine, error) {
	if r.err != nil {
		return nil, r.err
	}
	for {
		line, err := r.readLine()
		if err == io.EOF {
			return r.finish()
		}
		if err != nil {
			r.err = fmt.Errorf("read goroutine dump after line %d: %w", r.line, err)
			return nil, r.err
		}
		g, err := r.feed(line)
		if err != nil {
			r.err = err
			return nil, err
		}
		if g != nil {
			r.count++
			return g, nil
		}
	}
}

// Truncated reports, once Next has returned io.EOF, whether the input was
// cut off inside a goroutine block (that block was dropped).
func (r *Reader) Truncated() bool { return r.truncated }

// TruncationDetail says where the input was cut off ("" if it was not).
func (r *Reader) TruncationDetail() string { return r.detail }

// Lines returns the number of lines read so far.
func (r *Reader) Lines() int { return r.line }

// Bytes returns the number of bytes read so far.
func (r *Reader) Bytes() int64 { return r.bytes }

// SkippedLines returns the number of non-blank lines outside goroutine
// blocks (preamble, register dumps, log noise) skipped so far.
func (r *Reader) SkippedLines() int { return r.skipped }

// readLine returns the next line without its line ending. The slice is
// valid until the next call.
func (r *Reader) readLine() ([]byte, error) {
	if r.eof {
		return nil, io.EOF
	}
	b, err := r.br.ReadSlice('\n')
	r.bytes += int64(len(b))
	r.tooLong = false
	if err == bufio.ErrBufferFull {
		r.long = append(r.long[:0], b...)
		for err == bufio.ErrBufferFull {
			b, err = r.br.ReadSlice('\n')
			r.bytes += int64(len(b))
			if len(r.long)+len(b) <= maxLine {
				r.long = append(r.long, b...)
			} else {
				r.tooLong = true
			}
		}
		b = r.long
	}
	switch {
	case err == io.EOF:
		r.eof = true
		if len(b) == 0 && !r.tooLong {
			return nil, io.EOF
		}
		r.lastNL = false
	case err != nil:
		return nil, err
	default:
		r.lastNL = true
	}
	r.line++
	b = bytes.TrimSuffix(b, []byte("\n"))
	b = bytes.TrimSuffix(b, []byte("\r"))
	return b, nil
}

func (r *Reader) intern(b []byte) string {
	if s, ok := r.names[string(b)]; ok {
		return s
	}
	s := string(b)
	if len(r.names) < maxInterned {
		r.names[s] = s
	}
	return s
}

// start begins a block from the header in r.h.
func (r *Reader) start() error {
	g := &r.gs[r.cur]
	g.reset(r.h.id, r.line)
	r.args, r.argEnds = r.args[:0], r.argEnds[:0]
	g.State = r.intern(r.h.state)
	g.WaitMinutes = r.h.minutes
	g.LockedToThread = r.h.locked
	g.Bubble = r.h.bubble
	if r.h.labels != nil {
		l, ok := parseLabels(r.h.labels)
		if !ok {
			return &SyntaxError{Line: r.line, Goroutine: g.ID, Text: clip(r.h.labels), Msg: "malformed labels"}
		}
		g.Labels = r.intern([]byte(l))
	}
	r.in = true
	r.sub = stFrames
	return nil
}

// argBase is where the next frame's arguments start in r.args.
func (r *Reader) argBase() int {
	if n := len(r.argEnds); n > 0 {
		return r.argEnds[n-1]
	}
	return 0
}

// end closes the current block and returns it.
func (r *Reader) end() *Goroutine {
	g := &r.gs[r.cur]
	if len(r.args) > 0 && len(r.argEnds) == len(g.Frames) {
		all, from := string(r.args), 0
		for i, to := range r.argEnds {
			g.Frames[i].Args = all[from:to]
			from = to
		}
	}
	r.cur ^= 1
	r.in = false
	return g
}

var (
	exitStatus  = []byte("exit status ")
	unavailable = []byte("\tgoroutine running on other thread; stack unavailable")
	nonGo       = []byte("non-Go function at pc=")
)

// feed consumes one line and returns a goroutine when the line ends one.
func (r *Reader) feed(line []byte) (*Goroutine, error) {
	if !r.in {
		if !r.tooLong && parseHeader(line, &r.h) {
			return nil, r.start()
		}
		if len(line) > 0 {
			r.skipped++
		}
		return nil, nil
	}
	g := &r.gs[r.cur]
	if r.eof && !r.lastNL {
		// The input stops mid-line inside a block: whatever this line
		// is, the block is cut off (see finish).
		return nil, nil
	}
	if r.tooLong {
		return nil, r.syntax(g, line, fmt.Sprintf("line longer than %d bytes", maxLine))
	}
	switch r.sub {
	case stFile, stCreatedFile, stAncFile:
		var fl fileLine
		if !parseFileLine(line, &fl) {
			return nil, r.syntax(g, line, "expected the file:line of the frame before, got")
		}
		switch r.sub {
		case stFile:
			f := r.pend
			f.File = r.intern(fl.file)
			f.Line = fl.line
			f.Inlined = r.dots && !fl.hasOffset
			g.Frames = append(g.Frames, f)
			r.argEnds = append(r.argEnds, len(r.args))
			r.sub = stFrames
		case stCreatedFile:
			g.createdBy.File = r.intern(fl.file)
			g.createdBy.Line = fl.line
			g.CreatedBy = &g.createdBy
			r.sub = stDone
		default:
			r.sub = stAncestor
		}
		return nil, nil
	}
	if len(line) == 0 {
		return r.end(), nil
	}
	if parseHeader(line, &r.h) {
		done := r.end()
		return done, r.start()
	}
	if parseAncestor(line) {
		g.Ancestors++
		r.sub = stAncestor
		return nil, nil
	}
	if r.sub == stDone || bytes.HasPrefix(line, exitStatus) {
		// The block is complete; what follows is other output.
		r.skipped++
		return r.end(), nil
	}
	anc := r.sub == stAncestor
	if fn, goid, ok := parseCreatedBy(line); ok {
		if anc {
			r.sub = stAncFile
			return nil, nil
		}
		g.createdBy = Frame{Function: r.intern(fn)}
		g.CreatorGoid = goid
		r.sub = stCreatedFile
		return nil, nil
	}
	if n, ok := parseElided(line); ok {
		if !anc {
			g.FramesElided = true
			g.ElidedFrames += n
		}
		return nil, nil
	}
	if bytes.Equal(line, unavailable) {
		g.StackUnavailable = true
		return nil, nil
	}
	if bytes.HasPrefix(line, nonGo) {
		if !anc {
			g.Frames = append(g.Frames, Frame{Function: "non-Go function"})
			r.args = r.args[:r.argBase()]
			r.argEnds = append(r.argEnds, len(r.args))
		}
		return nil, nil
	}
	if name, args, ok := parseFunc(line); ok {
		if anc {
			r.sub = stAncFile
			return nil, nil
		}
		fn := r.intern(name)
		if fn == "panic" {
			// The runtime prints runtime.gopanic as "panic"; profiles
			// name it in full.
			fn = "runtime.gopanic"
		}
		r.pend = Frame{Function: fn}
		r.dots = bytes.Equal(args, []byte("..."))
		r.args = append(r.args[:r.argBase()], args...)
		r.sub = stFile
		return nil, nil
	}
	return nil, r.syntax(g, line, "unexpected")
}

func (r *Reader) syntax(g *Goroutine, line []byte, msg string) error {
	return &SyntaxError{Line: r.line, Goroutine: g.ID, Text: clip(line), Msg: msg}
}

func clip(b []byte) string {
	if len(b) > 120 {
		return string(b[:120]) + "..."
	}
	return string(b)
}

// finish handles the end of the input.
func (r *Reader) finish() (*Goroutine, error) {
	if r.in {
		g := &r.gs[r.cur]
		complete := r.lastNL && r.bytes != RuntimeCap &&
			(r.sub == stFrames || r.sub == stDone || r.sub == stAncestor) &&
			(len(g.Frames) > 0 || g.StackUnavailable)
		if complete {
			r.count++
			return r.end(), nil
		}
		r.in = false
		r.truncated = true
		why := "inside its block"
		switch {
		case r.bytes == RuntimeCap:
			why = "at exactly 64 MiB, the runtime's cap for debug=2 dumps"
		case !r.lastNL:
			why = "mid-line"
		}
		r.detail = fmt.Sprintf("cut off %s at byte %d (line %d) in goroutine %d, whose block starts at line %d; %d complete goroutines kept",
			why, r.bytes, r.line, g.ID, g.Line, r.count)
	}
	if r.count == 0 {
		if r.truncated {
			r.err = fmt.Errorf("%w: the only goroutine block is %s", ErrNoGoroutines, r.detail)
		} else {
			r.err = fmt.Errorf("%w in %d lines (not a goroutine dump or crash traceback)", ErrNoGoroutines, r.line)
		}
		return nil, r.err
	}
	r.err = io.EOF
	return nil, io.EOF
}

// IsSyntax reports whether err is (or wraps) a [*SyntaxError].
func IsSyntax(err error) bool {
	var se *SyntaxError
	return errors.As(err, &se)
}
