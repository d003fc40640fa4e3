package analysis

import (
	"fmt"
	"os"
)

var debugWake = os.Getenv("LEAKSCOPE_DEBUG_WAKE") != ""

func (w *waitGraph) debugDump() {
	if !debugWake {
		return
	}
	for _, x := range w.gs {
		fr := w.framesOf(x.stack)
		loc := ""
		if len(fr) > 0 {
			l, _ := locationFrame(fr)
			loc = fmt.Sprintf("%s:%d", l.Function, l.Line)
		}
		dec := "undecided"
		if x.prog != nil {
			dec = fmt.Sprintf("decided keys=%d homes=%v opaque=%q", len(x.prog.keys), x.prog.homes, x.prog.opaque)
		}
		var caps []string
		if w.prog != nil && w.prog.q != nil {
			f := w.futureOf(x)
			for _, c := range f.Caps {
				caps = append(caps, fmt.Sprintf("%v@%d", c.Key.Op(), c.Line))
			}
			if f.Unknown != "" {
				caps = append(caps, "?"+f.Unknown)
			}
		}
		fmt.Fprintf(os.Stderr, "g%d class=%d kind=%q state=%q reach=%d %s %s wakers=%d caps=%v woke=%q objs=%x block=%x\n", x.goid, x.class, x.kind, x.state, x.reach, loc, dec, len(x.wakers), caps, x.wokeHow, x.objs, x.block.obj)
	}
}
