package flame

import (
	"fmt"
	"regexp"

	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/ingest/schema"
)

// Stacks holds the frame and stack dictionaries of one bundle, indexed by
// id, so that many trees can be built without reading them again. It is
// immutable after [LoadStacks] and safe for concurrent use.
type Stacks struct {
	funcs     []string // function names, by function index
	funcFiles []string // file of each function (the first one seen)
	frameFn   []int32  // frame id -> function index (-1: no such frame)
	frameLine []int64  // frame id -> line
	stackOff  []int32  // stack id -> start in stackFrm; stackOff[id+1] is the end
	stackFrm  []int32  // frame ids, leaf first, of all stacks back to back
	funcOwn   []bool   // function index -> the capture's own machinery (Own)
}

// maxIDSlack bounds how sparse frame and stack ids may be: ids are
// allocated densely from 1 by the bundle writer.
const maxIDSlack = 1 << 20

// LoadStacks reads the frames and stacks tables of b.
func LoadStacks(b *bundle.Bundle, mem memory.Allocator) (*Stacks, error) {
	s := &Stacks{}
	if err := s.loadFrames(b, mem); err != nil {
		return nil, err
	}
	read, err := readStacks(b, mem, int64(len(s.frameFn)))
	if err != nil {
		return nil, err
	}
	s.layOut(read)
	// Frame id 0 stands for frames the frames table does not hold.
	if s.hasUnknownFrames() {
		s.frameFn[0] = s.addFunc("[unknown frame]", "")
	}
	s.funcOwn = make([]bool, len(s.funcs)+1) // +1: the unknown-stack function of tree
	for i, name := range s.funcs {
		s.funcOwn[i] = Own(name)
	}
	return s, nil
}

// loadFrames reads the frames table of b into the frame-indexed
// dictionaries, giving each distinct function name one function index.
func (s *Stacks) loadFrames(b *bundle.Bundle, mem memory.Allocator) error {
	fnIndex := map[string]int32{}
	var frames []schema.Frame
	var maxFrame int64
	err := b.Frames(mem, func(f schema.Frame) {
		frames = append(frames, f)
		maxFrame = max(maxFrame, f.ID)
	})
	if err != nil {
		return fmt.Errorf("read frames of %s: %w", b.Dir, err)
	}
	if maxFrame > int64(len(frames))+maxIDSlack || maxFrame >= 1<<31 {
		return fmt.Errorf("read frames of %s: frame id %d is far beyond the %d frames present", b.Dir, maxFrame, len(frames))
	}
	s.frameFn = make([]int32, maxFrame+1)
	s.frameLine = make([]int64, maxFrame+1)
	for i := range s.frameFn {
		s.frameFn[i] = -1
	}
	for _, f := range frames {
		if f.ID <= 0 {
			return fmt.Errorf("read frames of %s: bad frame id %d", b.Dir, f.ID)
		}
		fi, ok := fnIndex[f.Function]
		if !ok {
			fi = int32(len(s.funcs))
			fnIndex[f.Function] = fi
			s.funcs = append(s.funcs, f.Function)
			s.funcFiles = append(s.funcFiles, f.File)
		}
		s.frameFn[f.ID] = fi
		s.frameLine[f.ID] = f.Line
	}
	return nil
}

// stackList is the stacks table as read, in table order: each row's stack
// id and range in flat, which holds the frame ids of all rows back to back.
type stackList struct {
	rows  []stackRow
	flat  []int32
	maxID int64
}

// stackRow is one row of a [stackList].
type stackRow struct {
	id  int64
	off int32
	n   int32
}

// readStacks reads the stacks table of b. Frame ids outside [0, frames)
// become 0, the unknown frame.
func readStacks(b *bundle.Bundle, mem memory.Allocator, frames int64) (stackList, error) {
	var t stackList
	err := b.Stacks(mem, func(st schema.Stack) {
		e := stackRow{id: st.ID, off: int32(len(t.flat)), n: int32(len(st.FrameIDs))}
		for _, fid := range st.FrameIDs {
			if fid < 0 || fid >= frames {
				fid = 0 // unknown frame, resolved to a placeholder in LoadStacks
			}
			t.flat = append(t.flat, int32(fid))
		}
		t.rows = append(t.rows, e)
		t.maxID = max(t.maxID, st.ID)
	})
	if err != nil {
		return t, fmt.Errorf("read stacks of %s: %w", b.Dir, err)
	}
	if t.maxID > int64(len(t.rows))+maxIDSlack || t.maxID >= 1<<31 {
		return t, fmt.Errorf("read stacks of %s: stack id %d is far beyond the %d stacks present", b.Dir, t.maxID, len(t.rows))
	}
	return t, nil
}

// layOut lays the stacks of t out in id order; ids missing from the table
// get an empty range and are reported as unknown when used.
func (s *Stacks) layOut(t stackList) {
	s.stackOff = make([]int32, t.maxID+2)
	byID := make([]int32, t.maxID+1)
	for i := range byID {
		byID[i] = -1
	}
	for i, e := range t.rows {
		if e.id > 0 {
			byID[e.id] = int32(i)
		}
	}
	s.stackFrm = make([]int32, 0, len(t.flat))
	for id := int64(0); id <= t.maxID; id++ {
		s.stackOff[id] = int32(len(s.stackFrm))
		if k := byID[id]; k >= 0 {
			e := t.rows[k]
			s.stackFrm = append(s.stackFrm, t.flat[e.off:e.off+e.n]...)
		}
	}
	s.stackOff[t.maxID+1] = int32(len(s.stackFrm))
}

func (s *Stacks) hasUnknownFrames() bool {
	for _, fid := range s.stackFrm {
		if fid == 0 || s.frameFn[fid] < 0 {
			return true
		}
	}
	return false
}

func (s *Stacks) addFunc(name, file string) int32 {
	s.funcs = append(s.funcs, name)
	s.funcFiles = append(s.funcFiles, file)
	return int32(len(s.funcs) - 1)
}

// NumStacks returns one more than the largest stack id.
func (s *Stacks) NumStacks() int { return len(s.stackOff) - 1 }

// frames returns the frame ids of a stack, leaf first, and whether the
// stack id is known (id 0, the empty stack, is known).
func (s *Stacks) frames(id int64) ([]int32, bool) {
	if id == 0 {
		return nil, true
	}
	if id < 0 || id >= int64(len(s.stackOff)-1) {
		return nil, false
	}
	a, b := s.stackOff[id], s.stackOff[id+1]
	if a == b {
		return nil, false
	}
	return s.stackFrm[a:b], true
}

// fn returns the function index of a frame id.
func (s *Stacks) fn(fid int32) int32 {
	if f := s.frameFn[fid]; f >= 0 {
		return f
	}
	return s.frameFn[0]
}

// matchFuncs returns, per function index, whether any of res matches the
// function's name or file (nil when res is empty).
func (s *Stacks) matchFuncs(res []*regexp.Regexp) []bool {
	if len(res) == 0 {
		return nil
	}
	m := make([]bool, len(s.funcs))
	for i, name := range s.funcs {
		for _, re := range res {
			if re.MatchString(name) || (s.funcFiles[i] != "" && re.MatchString(s.funcFiles[i])) {
				m[i] = true
				break
			}
		}
	}
	return m
}
