package profiles

import (
	"fmt"

	"github.com/google/pprof/profile"
	"github.com/leakscope/leakscope/ingest/bundle"
)

// stackCache interns a profile's locations into the bundle's frames and
// stacks, remembering each location's frames so a location shared by many
// samples is resolved once.
type stackCache struct {
	locs   map[uint64][]int64
	frames []int64
}

// id returns the bundle stack id of a sample's locations (leaf first). A
// location with inlined calls expands to several frames, innermost first,
// as pprof lists them in Location.Line.
func (c *stackCache) id(w *bundle.Writer, locs []*profile.Location) (int64, error) {
	if c.locs == nil {
		c.locs = map[uint64][]int64{}
	}
	c.frames = c.frames[:0]
	for _, loc := range locs {
		ids, ok := c.locs[loc.ID]
		if !ok {
			var err error
			ids, err = locationFrames(w, loc)
			if err != nil {
				return 0, err
			}
			c.locs[loc.ID] = ids
		}
		c.frames = append(c.frames, ids...)
	}
	return w.StackIDOfFrames(c.frames)
}

func locationFrames(w *bundle.Writer, loc *profile.Location) ([]int64, error) {
	if len(loc.Line) == 0 {
		// Unsymbolized: keep the address so the frame is still distinct.
		id, err := w.FrameID(addressName(loc.Address), "", 0, false)
		return []int64{id}, err
	}
	ids := make([]int64, len(loc.Line))
	for i, ln := range loc.Line {
		fn, file := "?", ""
		if ln.Function != nil {
			fn, file = ln.Function.Name, ln.Function.Filename
		}
		id, err := w.FrameID(fn, file, ln.Line, i < len(loc.Line)-1)
		if err != nil {
			return nil, err
		}
		ids[i] = id
	}
	return ids, nil
}

func addressName(addr uint64) string { return fmt.Sprintf("0x%x", addr) }
