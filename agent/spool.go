package agent

import (
	"encoding/json"
	"errors"
	"fmt"
	"github.com/leakscope/leakscope/internal/format"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/ingest/killpoint"
	"github.com/leakscope/leakscope/ingest/schema"
)

// Entry states in the spool.
const (
	StateCapturing = "capturing" // capture running (or the agent died during it)
	StateReady     = "ready"     // bundle and reports written, not uploaded
	StateUploaded  = "uploaded"  // on the workbench; the bundle was removed
	StateFailed    = "failed"    // the capture produced no bundle
	// StateEmpty is a capture that ended before it recorded anything (the
	// agent stopped or was killed in its first second): kept for its
	// entry.json, never uploaded.
	StateEmpty = "empty"
	// StateDropped is a capture whose bundle the spool gave up to stay
	// within its bound before it could be uploaded: its reports (unless
	// dropped later) and its entry, with the process's cooldown, stay.
	StateDropped = "dropped"
)

// Files of a spool entry.
const (
	entryFile      = "entry.json"
	bundleDir      = "bundle.lsb"
	reportFile     = "report.md"
	postmortemFile = "postmortem.md"
)

// Entry is one capture in the spool, as entry.json records it.
type Entry struct {
	// Name is the entry's directory name (time, executable, pid).
	Name    string    `json:"name"`
	Created time.Time `json:"created"`
	Trigger string    `json:"trigger"`
	PID     int       `json:"pid"`
	Exe     string    `json:"exe,omitempty"`
	Pod     string    `json:"pod,omitempty"`
	State   string    `json:"state"`
	Error   string    `json:"error,omitempty"`
	// ProcessStart is the process's start time (ticks since boot): with
	// PID it tells the process from a later one that reused the pid, so
	// the cooldown holds across agent restarts.
	ProcessStart uint64 `json:"process_start,omitempty"`
	// Ended is when the capture ended.
	Ended time.Time `json:"ended,omitzero"`
	// Alert is the Alertmanager alert that triggered the capture.
	Alert *AlertInfo `json:"alert,omitempty"`
	// Interrupted is set when the agent stopped during the capture: the
	// bundle holds what was flushed, and its sources say "interrupted".
	Interrupted bool `json:"interrupted,omitempty"`
	// Top is the report's top suspect ("pattern location (count)").
	Suspects int    `json:"suspects"`
	Top      string `json:"top_suspect,omitempty"`
	// CaptureID is the bundle's capture id, picked when the capture was
	// triggered; the workbench's /c/CAPTUREID links it.
	CaptureID string `json:"capture_id,omitempty"`
	// PreliminaryID is the workbench id of the preliminary capture (the
	// first answer); the final upload replaces it under the same id.
	PreliminaryID string `json:"preliminary_id,omitempty"`
	// Upload bookkeeping.
	UploadID    string    `json:"upload_id,omitempty"`
	Attempts    int       `json:"upload_attempts,omitempty"`
	UploadError string    `json:"upload_error,omitempty"`
	NextUpload  time.Time `json:"next_upload,omitzero"`
}

// Spool is the agent's directory of captures waiting for upload. It
// survives restarts (each entry's state is in its entry.json) and is
// bounded: when its entries take more than MaxBytes, the oldest are
// dropped with a log line, uploaded ones first. It is safe for concurrent
// use.
type Spool struct {
	Dir      string
	MaxBytes int64
	// Uploads is set when the agent uploads its captures: a ready entry
	// never tried is then not dropped to make room (a capture larger than
	// the spool is uploaded first, and dropped after).
	Uploads bool
	logf    func(format string, args ...any)

	mu sync.Mutex
}

// OpenSpool opens (creating) the spool directory. Entries a previous run
// left in StateCapturing (the agent was stopped or killed mid-capture) are
// marked interrupted and become ready when their bundle opens and holds
// data — a capture writes its tables in place and flushes them every
// second — empty when it holds none, and failed otherwise.
func OpenSpool(dir string, maxBytes int64, logf func(string, ...any)) (*Spool, error) {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, fmt.Errorf("spool: %w", err)
	}
	s := &Spool{Dir: dir, MaxBytes: maxBytes, logf: logf}
	entries, err := s.Entries()
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		if e.State != StateCapturing {
			continue
		}
		s.recover(e)
		logf("spool: %s: %s", e.Name, e.Error)
		if err := s.Save(e); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// recover sets the state of an entry whose agent stopped during its
// capture: failed without a readable bundle, empty when the bundle holds
// no data, else ready and interrupted.
func (s *Spool) recover(e *Entry) {
	e.Interrupted = true
	b, err := bundle.Open(s.BundlePath(e))
	if err != nil {
		e.State, e.Error = StateFailed, "the agent stopped during the capture and left no readable bundle: "+err.Error()
		return
	}
	if empty, err := isEmpty(b); err != nil || empty {
		e.State, e.Error = StateEmpty, "the agent stopped during the capture before it recorded anything"
		return
	}
	e.State, e.Error = StateReady, "the agent stopped during the capture; the bundle holds what was flushed"
}

// isEmpty reports whether a bundle holds no data: no rows in any table
// but its clock pairs.
func isEmpty(b *bundle.Bundle) (bool, error) {
	infos, err := b.Tables(memory.DefaultAllocator)
	if err != nil {
		return false, err
	}
	for _, t := range infos {
		if t.Name != schema.TableClockSync && t.Rows > 0 {
			return false, nil
		}
	}
	return true, nil
}

// AlertInfo is what the spool keeps of a triggering alert.
type AlertInfo struct {
	bundle.Alert
	// ResolvedAt is when Alertmanager said the alert resolved (its
	// endsAt), zero while it has not.
	ResolvedAt time.Time `json:"resolved_at,omitzero"`
}

// LastCapture returns when the latest capture of process p in the spool
// ended (or began, when it did not end), zero if there is none: the
// cooldown survives a restart of the agent.
func (s *Spool) LastCapture(p Process) time.Time {
	entries, err := s.Entries()
	if err != nil {
		return time.Time{}
	}
	var last time.Time
	for _, e := range entries {
		if e.PID != p.PID || e.ProcessStart == 0 || e.ProcessStart != p.Start {
			continue
		}
		t := e.Ended
		if t.IsZero() {
			t = e.Created
		}
		if t.After(last) {
			last = t
		}
	}
	return last
}

// New creates the directory of a new entry in StateCapturing.
func (s *Spool) New(p Process, trigger string, now time.Time) (*Entry, error) {
	e := &Entry{Created: now.UTC(), Trigger: trigger, PID: p.PID, ProcessStart: p.Start, Exe: p.Exe, Pod: p.Pod, State: StateCapturing}
	base := fmt.Sprintf("%s-%s-%d", now.UTC().Format("20060102T150405Z"), safeName(p.Name()), p.PID)
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := 0; ; i++ {
		e.Name = base
		if i > 0 {
			e.Name = fmt.Sprintf("%s-%d", base, i)
		}
		err := os.Mkdir(filepath.Join(s.Dir, e.Name), 0o750)
		if err == nil {
			break
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("spool: %w", err)
		}
	}
	return e, s.saveLocked(e)
}

// Path returns the path of a file of entry e.
func (s *Spool) Path(e *Entry, file string) string { return filepath.Join(s.Dir, e.Name, file) }

// BundlePath is where entry e's bundle is written.
func (s *Spool) BundlePath(e *Entry) string { return s.Path(e, bundleDir) }

// Save writes entry.json atomically.
func (s *Spool) Save(e *Entry) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.saveLocked(e)
}

func (s *Spool) saveLocked(e *Entry) error {
	data, err := json.MarshalIndent(e, "", "  ")
	if err != nil {
		return err
	}
	path := s.Path(e, entryFile)
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(data, '\n'), 0o640); err != nil {
		return fmt.Errorf("spool: %w", err)
	}
	return os.Rename(tmp, path)
}

// Entries lists the spool's entries, oldest first. Directories without a
// readable entry.json are skipped.
func (s *Spool) Entries() ([]*Entry, error) {
	ents, err := os.ReadDir(s.Dir)
	if err != nil {
		return nil, fmt.Errorf("spool: %w", err)
	}
	var out []*Entry
	for _, d := range ents {
		if !d.IsDir() || strings.HasPrefix(d.Name(), ".") {
			continue
		}
		data, err := os.ReadFile(filepath.Join(s.Dir, d.Name(), entryFile))
		if err != nil {
			continue
		}
		var e Entry
		if json.Unmarshal(data, &e) != nil {
			s.logf("spool: %s: unreadable %s; leaving it alone", d.Name(), entryFile)
			continue
		}
		e.Name = d.Name()
		out = append(out, &e)
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].Created.Equal(out[j].Created) {
			return out[i].Created.Before(out[j].Created)
		}
		return out[i].Name < out[j].Name
	})
	return out, nil
}

// MarkUploaded records the workbench's id and removes the bundle (the
// workbench has it); the reports stay until the spool needs the room. The
// id is saved before the bundle goes, so an agent stopped in between
// finds a ready entry with an id and finishes the job instead of
// uploading again.
func (s *Spool) MarkUploaded(e *Entry, id string) error {
	e.UploadID, e.UploadError, e.NextUpload = id, "", time.Time{}
	if err := s.Save(e); err != nil {
		return err
	}
	killpoint.At("spool:id-saved")
	if err := os.RemoveAll(s.BundlePath(e)); err != nil {
		return fmt.Errorf("spool: %w", err)
	}
	e.State = StateUploaded
	return s.Save(e)
}

// Usage returns the bytes the spool's entries take.
func (s *Spool) Usage() (int64, int, error) {
	entries, err := s.Entries()
	if err != nil {
		return 0, 0, err
	}
	var total int64
	for _, e := range entries {
		total += bundle.DirSize(filepath.Join(s.Dir, e.Name))
	}
	return total, len(entries), nil
}

// Enforce brings the spool back within MaxBytes by giving up the least
// first, each step oldest entry first:
//  1. the reports of uploaded entries (the workbench holds the capture);
//  2. the bundles of entries not uploaded (marked dropped), but the
//     newest one, those being captured and, with Uploads, ready ones not
//     tried yet: a capture larger than the spool is kept, over the bound,
//     until it is uploaded or a newer capture comes;
//  3. the reports of entries not uploaded, but the newest one's, when
//     that brings the spool within its bound.
//
// Every entry.json stays (a few hundred bytes): it holds the process's
// cooldown. Each step is logged, saying what is lost. Enforce returns the
// names of the entries that gave something up.
func (s *Spool) Enforce() ([]string, error) {
	if s.MaxBytes <= 0 {
		return nil, nil
	}
	entries, err := s.Entries()
	if err != nil {
		return nil, err
	}
	var total int64
	for _, e := range entries {
		total += bundle.DirSize(filepath.Join(s.Dir, e.Name))
	}
	newest := newestCapture(entries)
	untried := func(e *Entry) bool { return s.Uploads && e.State == StateReady && e.Attempts == 0 && e.UploadID == "" }
	keep := func(e *Entry) bool { return e == newest || e.State == StateCapturing || untried(e) }
	steps := []struct {
		of   func(*Entry) bool
		drop func(*Entry) (int64, string, error)
	}{
		{func(e *Entry) bool { return e.State == StateUploaded }, s.dropReports},
		{func(e *Entry) bool { return e.State != StateUploaded && !keep(e) }, s.dropBundle},
		{func(e *Entry) bool { return e.State != StateUploaded && e != newest && e.State != StateCapturing }, s.dropReports},
	}
	// Reports are what stays of a capture not uploaded: they go only
	// when that brings the spool within its bound.
	var reports int64
	for _, e := range filter(entries, steps[2].of) {
		reports += bundle.DirSize(filepath.Join(s.Dir, e.Name)) - bundle.DirSize(s.BundlePath(e)) - bundle.DirSize(s.Path(e, entryFile))
	}
	dropped := map[string]bool{}
	var names []string
	for i, st := range steps {
		if i == 2 && total-reports > s.MaxBytes {
			break
		}
		for _, e := range filter(entries, st.of) {
			if total <= s.MaxBytes {
				return names, nil
			}
			n, what, err := st.drop(e)
			if err != nil {
				return names, err
			}
			if n == 0 {
				continue
			}
			s.logf("spool: full (%s, limit %s): %s of %s (%s); %s", format.Bytes(float64(total)), format.Bytes(float64(s.MaxBytes)), what, e.Name, format.Bytes(float64(n)), lost(e))
			total -= n
			if !dropped[e.Name] {
				dropped[e.Name] = true
				names = append(names, e.Name)
			}
		}
	}
	if total > s.MaxBytes && newest != nil {
		s.logf("spool: over its limit (%s, limit %s) with the newest capture %s, kept until it is uploaded or a newer one comes", format.Bytes(float64(total)), format.Bytes(float64(s.MaxBytes)), newest.Name)
	}
	return names, nil
}

// lost says what giving up part of entry e costs.
func lost(e *Entry) string {
	if e.State == StateUploaded {
		return "the workbench holds the capture as " + e.UploadID
	}
	return "the capture was not uploaded; its entry, with the process's cooldown, stays"
}

// newestCapture is the most recent entry not uploaded that holds a
// bundle, nil for none.
func newestCapture(entries []*Entry) *Entry {
	var newest *Entry
	for _, e := range entries {
		if e.State != StateUploaded && e.State != StateDropped && (newest == nil || !e.Created.Before(newest.Created)) {
			newest = e
		}
	}
	return newest
}

// dropBundle removes the bundle of e and marks e dropped.
func (s *Spool) dropBundle(e *Entry) (int64, string, error) {
	path := s.BundlePath(e)
	n := bundle.DirSize(path)
	if n == 0 {
		return 0, "", nil
	}
	if err := os.RemoveAll(path); err != nil {
		return 0, "", fmt.Errorf("spool: drop the bundle of %s: %w", e.Name, err)
	}
	e.State, e.Error, e.NextUpload = StateDropped, fmt.Sprintf("bundle dropped, not uploaded: the spool was over its limit of %s", format.Bytes(float64(s.MaxBytes))), time.Time{}
	return n, "dropping the bundle", s.Save(e)
}

// dropReports removes every file of e but its entry.json and bundle.
func (s *Spool) dropReports(e *Entry) (int64, string, error) {
	files, err := os.ReadDir(filepath.Join(s.Dir, e.Name))
	if err != nil {
		return 0, "", fmt.Errorf("spool: %w", err)
	}
	var n int64
	for _, f := range files {
		if f.Name() == entryFile || f.Name() == bundleDir {
			continue
		}
		p := filepath.Join(s.Dir, e.Name, f.Name())
		size := bundle.DirSize(p)
		if err := os.RemoveAll(p); err != nil {
			return n, "", fmt.Errorf("spool: drop the reports of %s: %w", e.Name, err)
		}
		n += size
	}
	return n, "dropping the reports", nil
}

func filter(es []*Entry, keep func(*Entry) bool) []*Entry {
	var out []*Entry
	for _, e := range es {
		if keep(e) {
			out = append(out, e)
		}
	}
	return out
}

// safeName keeps a file-name-safe form of an executable name.
func safeName(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	if b.Len() == 0 || b.Len() > 64 {
		return "process"
	}
	return b.String()
}
