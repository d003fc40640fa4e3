package dump

import (
	"fmt"
	"io"
	"strings"
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

// Reader reads goroutines one at a time from a goroutine dump, a crash
// traceback or a log holding them, and collects the race detector's
// reports it meets on the way. It is not safe for concurrent use.
type Reader struct {
	lr      *lineReader
	streams [numStreams]*blocks
	names   map[string]string
	recent  [1 << recentBits]string // see intern
	err     error
	done    bool      // the input has ended
	fin     int       // next stream to finish at the end
	par     *parallel // parser workers reading ahead, nil for none (see par.go)

	tally
	truncated bool
	detail    string
}

// tally is what a reader counts and collects on the way, apart from the
// goroutines: the parser workers of par.go each keep one for their part
// of the input, added to the reader's in input order.
type tally struct {
	count          int
	skipped        int
	emptyBlocks    int
	strayFrames    int
	interrupted    int
	firstInterrupt string
	races          []Race
	raceTotal      int
	ft             fatalTrack
}

// add adds o, which counts the input after t's, to t: what t keeps
// first (the first interruption, the first maxRaces races) stays, and the
// tracebacks' fatal messages add up (fatalTrack.add).
func (t *tally) add(o *tally) {
	t.count += o.count
	t.skipped += o.skipped
	t.emptyBlocks += o.emptyBlocks
	t.strayFrames += o.strayFrames
	t.interrupted += o.interrupted
	if t.firstInterrupt == "" {
		t.firstInterrupt = o.firstInterrupt
	}
	t.ft.add(o.ft)
	t.raceTotal += o.raceTotal
	for _, rc := range o.races {
		if len(t.races) < maxRaces {
			t.races = append(t.races, rc)
		}
	}
}

// NewReader returns a reader of the dump in r. It buffers r itself.
func NewReader(r io.Reader) *Reader {
	return &Reader{lr: newLineReader(r), names: make(map[string]string)}
}

// Next returns the next complete goroutine. At the end of the input it
// returns io.EOF; an input without any goroutine or race report yields an
// error wrapping [ErrNoGoroutines] instead. Errors are sticky. The returned
// goroutine and its slices are only valid until the next call (see
// [Goroutine.Clone]).
func (r *Reader) Next() (*Goroutine, error) {
	if r.err != nil {
		return nil, r.err
	}
	if r.par != nil {
		if g := r.par.next(r); g != nil {
			return g, nil
		}
	}
	for !r.done {
		if r.par != nil && r.par.resume(r) {
			if g := r.par.next(r); g != nil {
				return g, nil
			}
		}
		ln, err := r.lr.next()
		if err == io.EOF {
			r.done = true
			break
		}
		if err != nil {
			r.err = fmt.Errorf("read goroutine dump after line %d: %w", r.lr.num, err)
			return nil, r.err
		}
		if g := r.stream(ln.stream).feed(ln); g != nil {
			r.count++
			return g, nil
		}
	}
	return r.finish()
}

// stream returns the parser of one stream.
func (r *Reader) stream(s int) *blocks {
	if r.streams[s] == nil {
		r.streams[s] = &blocks{r: r}
		r.streams[s].race.r = r
	}
	return r.streams[s]
}

// Truncated reports, once Next has returned io.EOF, whether the input was
// cut off inside a goroutine block (that block was dropped).
func (r *Reader) Truncated() bool { return r.truncated }

// TruncationDetail says where the input was cut off ("" if it was not).
func (r *Reader) TruncationDetail() string { return r.detail }

// Lines returns the number of lines read so far.
func (r *Reader) Lines() int { return r.lr.num }

// Bytes returns the number of bytes read so far.
func (r *Reader) Bytes() int64 { return r.lr.bytes }

// SkippedLines returns the number of non-blank lines outside goroutine
// blocks and race reports (preamble, register dumps, log noise) skipped
// so far.
func (r *Reader) SkippedLines() int { return r.skipped }

// Fatal returns the message of the "fatal error: " line heading the
// traceback of every goroutine read so far (the runtime's reason for a
// crash, such as "all goroutines are asleep - deadlock!"), at most
// maxFatal bytes; "" when there was none, or when goroutines came before
// it, another crash's traceback after it, or other output between it and
// its first goroutine (see fatalTrack).
func (r *Reader) Fatal() string { return r.ft.fatal() }

// Races returns the race reports read so far (at most 10,000; RaceCount
// counts them all).
func (r *Reader) Races() []Race { return r.races }

// RaceCount returns how many race reports were read.
func (r *Reader) RaceCount() int { return r.raceTotal }

// Notes says, once Next has returned io.EOF, what a reader of the result
// should know beyond truncation: goroutine blocks other output
// interrupted, stack lines found outside any block, race reports beyond
// those kept. It is "" when there is nothing to say.
func (r *Reader) Notes() string {
	var notes []string
	if r.interrupted > 0 {
		notes = append(notes, fmt.Sprintf("%d goroutine blocks ended at a line that is not part of a traceback, their stacks possibly incomplete (first: %s)", r.interrupted, r.firstInterrupt))
	}
	if r.strayFrames > 0 {
		notes = append(notes, fmt.Sprintf("%d stack lines found outside any goroutine block (other output mixed into the traceback?)", r.strayFrames))
	}
	if r.raceTotal > len(r.races) {
		notes = append(notes, fmt.Sprintf("%d race reports, the first %d kept", r.raceTotal, len(r.races)))
	}
	return strings.Join(notes, "; ")
}

// intern returns b as a string, the same string for the same bytes while
// the table of names has room. Names repeat from goroutine to goroutine,
// mostly in the same order: a small table indexed by a hash of b's length
// and last bytes finds most of them with one comparison, before the map.
func (r *Reader) intern(b []byte) string {
	slot := recentSlot(b)
	if s := r.recent[slot]; s == string(b) && s != "" {
		return s
	}
	s, ok := r.names[string(b)]
	if !ok {
		s = string(b)
		if len(r.names) < maxInterned {
			r.names[s] = s
		}
	}
	r.recent[slot] = s
	return s
}

// recentSlot is the slot of b in Reader.recent.
func recentSlot(b []byte) int {
	h := uint32(len(b)) * 0x9e3779b1
	if n := len(b); n >= 4 {
		h ^= uint32(b[n-1]) | uint32(b[n-2])<<8 | uint32(b[n-3])<<16 | uint32(b[n-4])<<24
		h ^= uint32(b[n/2]) << 5
	}
	h *= 0x85ebca6b
	return int(h >> (32 - recentBits))
}

// recentBits sizes Reader.recent.
const recentBits = 10

// cut records that the input ended inside g's block, which is dropped.
func (r *Reader) cut(g *Goroutine, why string) {
	if r.truncated {
		return
	}
	r.truncated = true
	r.detail = fmt.Sprintf("cut off %s at byte %d (line %d) in goroutine %d, whose block starts at line %d; %d complete goroutines kept",
		why, r.lr.bytes, r.lr.num, g.ID, g.Line, r.count)
}

// cutHeader records that the input ended inside a goroutine header line.
func (r *Reader) cutHeader(ln logLine) {
	if r.truncated {
		return
	}
	r.truncated = true
	what := "a goroutine header line"
	if id, ok := headerID(ln.text); ok {
		what = fmt.Sprintf("the header line of goroutine %d", id)
	}
	r.detail = fmt.Sprintf("cut off inside %s at byte %d (line %d); %d complete goroutines kept", what, r.lr.bytes, ln.num, r.count)
}

var (
	unavailable = []byte("\tgoroutine running on other thread; stack unavailable")
	nonGo       = []byte("non-Go function at pc=")
)

func clip(b []byte) string {
	if len(b) > 120 {
		return string(b[:120]) + "..."
	}
	return string(b)
}

// finish handles the end of the input: each stream's open block is
// complete or cut off.
func (r *Reader) finish() (*Goroutine, error) {
	for ; r.fin < numStreams; r.fin++ {
		p := r.streams[r.fin]
		if p == nil {
			continue
		}
		if p.race.active {
			p.race.done()
		}
		if !p.in {
			continue
		}
		if g := r.close(p); g != nil {
			r.fin++
			r.count++
			return g, nil
		}
	}
	if r.count == 0 && r.raceTotal == 0 {
		e := &NoGoroutinesError{Lines: r.lr.num, Notes: r.Notes()}
		if r.truncated {
			e.Cut = r.detail
		}
		r.err = e
		return nil, r.err
	}
	r.err = io.EOF
	return nil, io.EOF
}

// close ends a block still open at the end of the input: complete, or
// cut off (nil).
func (r *Reader) close(p *blocks) *Goroutine {
	g := &p.gs[p.cur]
	if p.sub == stFile && p.guess {
		p.sub = stFrames // the guessed cgo frame was other output
	}
	complete := r.lr.bytes != RuntimeCap &&
		(p.sub == stFrames || p.sub == stDone || p.sub == stAncestor) &&
		(len(g.Frames) > 0 || g.StackUnavailable)
	if complete {
		return p.end()
	}
	p.in = false
	why := "inside its block"
	if r.lr.bytes == RuntimeCap {
		why = "at exactly 64 MiB, the runtime's cap for debug=2 dumps"
	}
	r.cut(g, why)
	return nil
}
