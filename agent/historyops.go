package agent

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/leakscope/leakscope/capture"
)

// Add stores one watch sample of process k and drops what falls out of
// the window or the bounds.
func (h *History) Add(k key, s capture.Snapshot) error {
	if h == nil {
		return nil
	}
	name := procDir(k)
	dir := filepath.Join(h.dir, name)
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return fmt.Errorf("history: %w", err)
	}
	var added []histFile
	for _, f := range []struct {
		profile string
		data    []byte
	}{{"goroutine", s.Goroutine}, {"heap", s.Heap}} {
		if len(f.data) == 0 {
			continue
		}
		hf := histFile{ts: s.TS, profile: f.profile, name: histName(s.TS, f.profile), size: int64(len(f.data))}
		if err := writeAtomic(filepath.Join(dir, hf.name), f.data); err != nil {
			return fmt.Errorf("history: %w", err)
		}
		added = append(added, hf)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	p := h.procs[name]
	if p == nil {
		p = &procHistory{}
		h.procs[name] = p
	}
	for _, hf := range added {
		p.files = append(p.files, hf)
		p.bytes += hf.size
		h.total += hf.size
	}
	sortFiles(p.files)
	h.enforceLocked(s.TS)
	return nil
}

// writeAtomic writes data to path through a temporary file and a rename.
func writeAtomic(path string, data []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o640); err != nil {
		os.Remove(tmp)
		return err
	}
	return os.Rename(tmp, path)
}

// enforceLocked drops files older than the window, then the oldest of a
// process above its share, then the oldest of all while the total is
// above MaxBytes.
func (h *History) enforceLocked(now time.Time) {
	cut := now.Add(-h.cfg.Keep)
	for name, p := range h.procs {
		for len(p.files) > 0 && (p.files[0].ts.Before(cut) || p.bytes > h.cfg.PerProcess) {
			h.dropOldestLocked(name, p)
		}
	}
	for h.total > h.cfg.MaxBytes {
		var oldest string
		for name, p := range h.procs {
			if len(p.files) == 0 {
				continue
			}
			if o := h.procs[oldest]; oldest == "" || p.files[0].ts.Before(o.files[0].ts) || p.files[0].ts.Equal(o.files[0].ts) && name < oldest {
				oldest = name
			}
		}
		if oldest == "" {
			return
		}
		h.dropOldestLocked(oldest, h.procs[oldest])
	}
}

func (h *History) dropOldestLocked(name string, p *procHistory) {
	f := p.files[0]
	if err := os.Remove(filepath.Join(h.dir, name, f.name)); err != nil && !os.IsNotExist(err) {
		h.logf("history: %v", err)
	}
	p.files = p.files[1:]
	p.bytes -= f.size
	h.total -= f.size
}

// Files returns the history of process k within the window, oldest
// first, as a capture takes it.
func (h *History) Files(k key, now time.Time) []capture.HistoryFile {
	if h == nil {
		return nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	name := procDir(k)
	p := h.procs[name]
	if p == nil {
		return nil
	}
	cut := now.Add(-h.cfg.Keep)
	var out []capture.HistoryFile
	for _, f := range p.files {
		if !f.ts.Before(cut) {
			out = append(out, capture.HistoryFile{Path: filepath.Join(h.dir, name, f.name), Profile: f.profile, Time: f.ts})
		}
	}
	return out
}

// Prune removes the history of processes not in live once they have been
// gone for the grace period.
func (h *History) Prune(live map[key]bool, now time.Time) {
	if h == nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	names := make([]string, 0, len(h.procs))
	for name := range h.procs {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		p := h.procs[name]
		k, _ := parseProcDir(name)
		switch {
		case live[k]:
			p.goneAt = time.Time{}
		case p.goneAt.IsZero():
			p.goneAt = now
		case now.Sub(p.goneAt) >= h.cfg.Grace:
			if err := os.RemoveAll(filepath.Join(h.dir, name)); err != nil {
				h.logf("history: %v", err)
				continue
			}
			h.total -= p.bytes
			delete(h.procs, name)
			h.logf("history: pid %d gone for %v; its history is dropped", k.pid, h.cfg.Grace)
		}
	}
	h.enforceLocked(now)
}

// Usage returns the bytes the history takes and the processes it has.
func (h *History) Usage() (int64, int) {
	if h == nil {
		return 0, 0
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.total, len(h.procs)
}

// watchSample reads one watch sample of t and, with a history, stores
// its profiles.
func (a *Agent) watchSample(ctx context.Context, t *target) (capture.Totals, error) {
	if a.history == nil {
		return capture.ReadTotals(ctx, t.client, t.url)
	}
	s, err := capture.ReadSnapshot(ctx, t.client, t.url)
	if err != nil {
		return s.Totals, err
	}
	if err := a.history.Add(t.proc.key(), s); err != nil {
		a.logf("pid %d: %v", t.proc.PID, err)
	}
	return s.Totals, nil
}

// pruneHistory drops the history of processes gone for the grace period.
func (a *Agent) pruneHistory() {
	if a.history == nil {
		return
	}
	a.mu.Lock()
	live := make(map[key]bool, len(a.targets))
	for k := range a.targets {
		live[k] = true
	}
	a.mu.Unlock()
	a.history.Prune(live, time.Now())
}
