package analysis_test

import (
	"testing"
	"time"

	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/leakscope/leakscope/analysis"
	"github.com/leakscope/leakscope/ingest/schema"
)

// TestProbeWindows: without dumps, a goroutine the eBPF probes saw created
// and not exit is alive at the end only when they stayed attached from its
// creation to the end; one seen in an earlier window is last known alive
// at that window's end. A bundle without probe_windows had them attached
// throughout.
func TestProbeWindows(t *testing.T) {
	for _, windowed := range []bool{true, false} {
		mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
		s := newSynth(t, mem)
		// Goroutine 10 is created in the first window (0-2 s), 11 in the
		// last (10-12 s, to the end); 12 is created and exits in the first.
		s.add(schema.EBPFEvent{TS: sec(1), MonoNS: 1, Kind: schema.EventGoCreate, PID: 9, TID: 9, Goid: 10, ParentGoid: 1})
		s.add(schema.EBPFEvent{TS: sec(1), MonoNS: 1, Kind: schema.EventGoCreate, PID: 9, TID: 9, Goid: 12, ParentGoid: 1})
		s.add(schema.EBPFEvent{TS: sec(2) - 1, MonoNS: 2, Kind: schema.EventGoExit, PID: 9, TID: 9, Goid: 12})
		s.add(schema.EBPFEvent{TS: sec(11), MonoNS: 11, Kind: schema.EventGoCreate, PID: 9, TID: 9, Goid: 11, ParentGoid: 1})
		if windowed {
			s.add(schema.ProbeWindow{Probes: schema.ProbesGoroutines, StartTS: sec(0), EndTS: sec(2), StartMono: 0, EndMono: 2})
			s.add(schema.ProbeWindow{Probes: schema.ProbesGoroutines, StartTS: sec(10), EndTS: sec(12), StartMono: 10, EndMono: 12, ToEnd: true})
		}
		b := s.open()
		v, err := analysis.Lifetimes(b, mem, time.Time{}, time.Time{}, 0)
		if err != nil {
			t.Fatal(err)
		}
		ends := map[int64]*analysis.Bar{}
		for i := range v.Bars {
			ends[v.Bars[i].Goid] = &v.Bars[i]
		}
		g10, g11, g12 := ends[10], ends[11], ends[12]
		if g10 == nil || g11 == nil || g12 == nil {
			t.Fatalf("windowed %v: bars %+v", windowed, v.Bars)
		}
		if g11.End != nil || g11.EndUnknown || g12.End == nil || g12.EndUnknown {
			t.Errorf("windowed %v: goroutine 11 %+v (want alive), 12 %+v (want ended)", windowed, g11, g12)
		}
		wantAlive := 1
		if windowed {
			if g10.End == nil || !g10.End.Equal(time.Unix(0, sec(2)).UTC()) || !g10.EndUnknown {
				t.Errorf("goroutine 10 %+v: want last known alive at the first window's end, 2 s", g10)
			}
		} else {
			wantAlive = 2
			if g10.End != nil || g10.EndUnknown {
				t.Errorf("no windows: goroutine 10 %+v, want alive", g10)
			}
		}
		if v.Alive != wantAlive {
			t.Errorf("windowed %v: %d alive in the timeline, want %d", windowed, v.Alive, wantAlive)
		}
		tree, err := analysis.Ancestry(b, mem)
		if err != nil {
			t.Fatal(err)
		}
		var alive int64
		for _, n := range tree.Roots {
			alive += n.Alive
		}
		if alive != int64(wantAlive) {
			t.Errorf("windowed %v: %d alive in the ancestry tree, want %d", windowed, alive, wantAlive)
		}
		mem.AssertSize(t, 0)
	}
}
