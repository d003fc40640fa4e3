package gotrace

import (
	"encoding/binary"

	"golang.org/x/exp/trace"
)

// Steps are encoded in a part's byte buffer, a few bytes each (goids and
// times as deltas, strings as indexes into the part's strings), so that a
// worker reading a generation ahead of the merge holds megabytes, not
// the tens of megabytes the same steps take as structs.
//
// Each step starts with a byte: its kind in the low 2 bits, then a life's
// flags or a note's recKind.
const (
	stepStart = 1
	stepEnd   = 2
	stepNote  = 3
)

// part is a run of one generation's steps.
type part struct {
	buf  []byte
	n    int // steps in buf
	strs []string
	// stacks holds the stacks first used in this part; a generation's
	// stack indexes count on from its earlier parts (index 0, in no part,
	// is "no stack").
	stacks []genStack
	snap   *trace.ClockSnapshot // of the generation's Sync, in its first part
	pool   chan *part           // the worker's, where the merge returns the part

	// encoding state
	strIdx           map[string]uint64
	strCache         recentStrings[uint64]
	lastTS, lastGoid int64
	lastID           uint64 // of the last note with an id
}

// reset empties p, dropping its references to the generation's tables.
func (p *part) reset() {
	clear(p.strs)
	clear(p.stacks)
	clear(p.strIdx)
	p.strCache.reset()
	p.buf, p.strs, p.stacks = p.buf[:0], p.strs[:0], p.stacks[:0]
	p.n, p.snap, p.lastTS, p.lastGoid, p.lastID = 0, nil, 0, 0, 0
}

func (p *part) uvarint(v uint64) { p.buf = binary.AppendUvarint(p.buf, v) }
func (p *part) varint(v int64)   { p.buf = binary.AppendVarint(p.buf, v) }

func (p *part) ts(ts int64) {
	p.uvarint(uint64(ts - p.lastTS))
	p.lastTS = ts
}

func (p *part) goid(g int64) {
	p.varint(g - p.lastGoid)
	p.lastGoid = g
}

func (p *part) str(s string) {
	if s == "" {
		p.uvarint(0)
		return
	}
	// A part repeats few strings (wait reasons, region names).
	if i, ok := p.strCache.get(s); ok {
		p.uvarint(i)
		return
	}
	if p.strIdx == nil {
		p.strIdx = map[string]uint64{}
	}
	i, ok := p.strIdx[s]
	if !ok {
		p.strs = append(p.strs, s)
		i = uint64(len(p.strs))
		p.strIdx[s] = i
	}
	p.strCache.put(s, i)
	p.uvarint(i)
}

func (p *part) putStart(s *lifeStart) {
	p.n++
	p.buf = append(p.buf, stepStart|s.flags<<2)
	p.goid(s.goid)
	p.ts(s.ts)
	p.buf = append(p.buf, byte(s.firstTo))
	p.uvarint(uint64(s.firstStack))
	if s.flags&lifeCreated != 0 {
		p.uvarint(uint64(s.parent))
		p.uvarint(uint64(s.creationStack))
	}
}

func (p *part) putEnd(e *lifeEnd) {
	p.n++
	p.buf = append(p.buf, stepEnd|e.flags<<2)
	p.goid(e.goid)
	if e.flags&lifeEnded != 0 {
		p.ts(e.ts)
	}
	p.buf = append(p.buf, byte(e.state))
	p.str(e.reason)
	p.uvarint(uint64(e.stack))
	p.uvarint(uint64(e.rootStack))
}

// noteFields says which fields of a rec each kind of note carries: the
// others are zero and are not encoded.
var noteFields = [...]uint8{
	recSync:        noteVal,
	recTaskBegin:   noteID | noteParent | noteStr,
	recTaskEnd:     noteID | noteParent | noteStr,
	recRegionBegin: noteID | noteStr,
	recRegionEnd:   noteID | noteStr,
	recLog:         noteID | noteStr | noteMsg,
	recMetric:      noteStr | noteVal,
	recRangeBegin:  noteStr,
	recRangeEnd:    noteStr,
}

const (
	noteID uint8 = 1 << iota
	noteParent
	noteStr
	noteMsg
	noteVal
)

// fieldsOf returns the fields notes of kind k carry (every field for a
// kind the table lacks).
func fieldsOf(k recKind) uint8 {
	if int(k) < len(noteFields) {
		return noteFields[k]
	}
	return 0xff
}

// putNote encodes a note: its time and goroutine as deltas, then the
// fields its kind carries (a task's or region's id as a delta too: tasks
// are numbered in order).
func (p *part) putNote(r *rec) {
	p.n++
	p.buf = append(p.buf, stepNote|byte(r.kind)<<2)
	p.ts(r.ts)
	p.goid(r.g)
	f := fieldsOf(r.kind)
	if f&noteID != 0 {
		p.varint(int64(r.id - p.lastID))
		p.lastID = r.id
	}
	if f&noteParent != 0 {
		p.uvarint(r.parent)
	}
	if f&noteStr != 0 {
		p.str(r.str)
	}
	if f&noteMsg != 0 {
		p.str(r.msg)
	}
	if f&noteVal != 0 {
		p.uvarint(r.val)
	}
	if r.snap != nil {
		p.snap = r.snap
	}
}

// stepReader decodes a part's steps.
type stepReader struct {
	p                *part
	off              int
	lastTS, lastGoid int64
	lastID           uint64
	start            lifeStart
	end              lifeEnd
	note             rec
}

func (r *stepReader) reset(p *part) { *r = stepReader{p: p} }

func (r *stepReader) uvarint() uint64 {
	v, n := binary.Uvarint(r.p.buf[r.off:])
	r.off += n
	return v
}

func (r *stepReader) varint() int64 {
	v, n := binary.Varint(r.p.buf[r.off:])
	r.off += n
	return v
}

func (r *stepReader) ts() int64 {
	r.lastTS += int64(r.uvarint())
	return r.lastTS
}

func (r *stepReader) goid() int64 {
	r.lastGoid += r.varint()
	return r.lastGoid
}

func (r *stepReader) str() string {
	if i := r.uvarint(); i > 0 {
		return r.p.strs[i-1]
	}
	return ""
}

func (r *stepReader) byte() byte {
	b := r.p.buf[r.off]
	r.off++
	return b
}

// next decodes the next step into r.start, r.end or r.note and returns
// its kind, 0 at the end of the part.
func (r *stepReader) next() byte {
	if r.off >= len(r.p.buf) {
		return 0
	}
	b := r.byte()
	kind, bits := b&3, b>>2
	switch kind {
	case stepStart:
		s := &r.start
		*s = lifeStart{flags: bits}
		s.goid = r.goid()
		s.ts = r.ts()
		s.firstTo = trace.GoState(r.byte())
		s.firstStack = int32(r.uvarint())
		if bits&lifeCreated != 0 {
			s.parent = int64(r.uvarint())
			s.creationStack = int32(r.uvarint())
		}
	case stepEnd:
		e := &r.end
		*e = lifeEnd{flags: bits}
		e.goid = r.goid()
		if bits&lifeEnded != 0 {
			e.ts = r.ts()
		}
		e.state = trace.GoState(r.byte())
		e.reason = r.str()
		e.stack = int32(r.uvarint())
		e.rootStack = int32(r.uvarint())
	case stepNote:
		r.readNote(recKind(bits))
	}
	return kind
}

// readNote decodes a note of kind k into r.note.
func (r *stepReader) readNote(k recKind) {
	n := &r.note
	*n = rec{kind: k}
	n.ts = r.ts()
	n.g = r.goid()
	f := fieldsOf(k)
	if f&noteID != 0 {
		r.lastID += uint64(r.varint())
		n.id = r.lastID
	}
	if f&noteParent != 0 {
		n.parent = r.uvarint()
	}
	if f&noteStr != 0 {
		n.str = r.str()
	}
	if f&noteMsg != 0 {
		n.msg = r.str()
	}
	if f&noteVal != 0 {
		n.val = r.uvarint()
	}
	if k == recSync && r.p.snap != nil {
		n.snap, n.hasSnap = r.p.snap, true
	}
}
