package gotrace

import (
	"golang.org/x/exp/trace"

	"github.com/leakscope/leakscope/ingest/schema"
)

// spanWindowShift places the span ids of regions and logs of window k
// (0-based) at (k+1)<<spanWindowShift and above. Task spans use the
// runtime's task id, which is unique within a process and small, so the
// same task seen in several windows keeps one id.
const spanWindowShift = 40

// task is an open user task.
type task struct {
	parent uint64
	name   string
	goid   int64
	start  int64 // wall time
}

// region is an open user region on a goroutine.
type region struct {
	id     int64
	parent int64
	task   uint64
	name   string
	goid   int64
	start  int64 // wall time, 0 when the region began before the trace
}

// taskSpanID returns the span id of a task, 0 for no or the background
// task.
func taskSpanID(id uint64) int64 {
	if id == uint64(trace.BackgroundTask) || id == uint64(trace.NoTask) {
		return 0
	}
	return int64(id)
}

func (h *handler) newSpanID() int64 {
	h.nextSpan++
	return h.spanBase + h.nextSpan
}

func (h *handler) taskBegin(r *rec) {
	if h.tasks.get(int64(r.id)) != nil {
		return
	}
	var t *task
	if n := len(h.freeTasks); n > 0 {
		t = h.freeTasks[n-1]
		h.freeTasks = h.freeTasks[:n-1]
	} else {
		t = new(task)
	}
	*t = task{parent: r.parent, name: r.str, goid: r.g, start: h.clk.wall(r.ts)}
	h.tasks.put(int64(r.id), t)
}

func (h *handler) taskEnd(r *rec) {
	t := h.tasks.get(int64(r.id))
	if t == nil {
		// Begun before the trace started.
		t = &task{parent: r.parent, name: r.str}
	}
	h.writeTask(r.id, t, h.clk.wall(r.ts))
}

// writeTask writes task id's span and forgets the task.
func (h *handler) writeTask(id uint64, t *task, end int64) {
	h.appendSpan(&schema.Span{
		ID:       taskSpanID(id),
		ParentID: taskSpanID(t.parent),
		Kind:     schema.SpanTask,
		Name:     t.name,
		Goid:     max(t.goid, 0),
		TaskID:   taskSpanID(id),
		StartTS:  t.start,
		EndTS:    end,
	})
	if h.tasks.get(int64(id)) == t {
		h.tasks.remove(int64(id))
		*t = task{}
		h.freeTasks = append(h.freeTasks, t)
	}
}

// enclosing returns the span id a new region or log on g belongs to: the
// innermost open region, else the task.
func enclosing(g *gor, taskID uint64) int64 {
	if g != nil && len(g.regions) > 0 {
		return g.regions[len(g.regions)-1].id
	}
	return taskSpanID(taskID)
}

func (h *handler) regionBegin(r *rec) {
	g := h.live.get(r.g)
	rg := region{
		id:     h.newSpanID(),
		parent: enclosing(g, r.id),
		task:   r.id,
		name:   r.str,
		goid:   r.g,
		start:  h.clk.wall(r.ts),
	}
	if g == nil {
		// Not expected: regions begin on a running goroutine, which the
		// trace always introduces first. Keep the span anyway.
		h.writeRegion(&rg, 0)
		return
	}
	g.regions = append(g.regions, rg)
}

func (h *handler) regionEnd(r *rec) {
	g := h.live.get(r.g)
	end := h.clk.wall(r.ts)
	if g != nil {
		for i := len(g.regions) - 1; i >= 0; i-- {
			if rg := g.regions[i]; rg.name == r.str && rg.task == r.id {
				g.regions = append(g.regions[:i], g.regions[i+1:]...)
				h.writeRegion(&rg, end)
				return
			}
		}
	}
	// Begun before the trace started.
	h.writeRegion(&region{
		id:     h.newSpanID(),
		parent: enclosing(g, r.id),
		task:   r.id,
		name:   r.str,
		goid:   r.g,
	}, end)
}

func (h *handler) writeRegion(rg *region, end int64) {
	h.appendSpan(&schema.Span{
		ID:       rg.id,
		ParentID: rg.parent,
		Kind:     schema.SpanRegion,
		Name:     rg.name,
		Goid:     max(rg.goid, 0),
		TaskID:   taskSpanID(rg.task),
		StartTS:  rg.start,
		EndTS:    end,
	})
}

func (h *handler) log(r *rec) {
	ts := h.clk.wall(r.ts)
	h.appendSpan(&schema.Span{
		ID:       h.newSpanID(),
		ParentID: enclosing(h.live.get(r.g), r.id),
		Kind:     schema.SpanLog,
		Name:     r.str,
		Goid:     max(r.g, 0),
		TaskID:   taskSpanID(r.id),
		StartTS:  ts,
		EndTS:    ts,
		Message:  r.msg,
	})
}
