package agent

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Defaults of [HistoryConfig].
const (
	DefaultHistory      = time.Hour
	DefaultHistoryMax   = 256 << 20
	DefaultHistoryGrace = 10 * time.Minute
	// historyDir is the history's directory in the spool; the leading dot
	// keeps it out of the spool's entries.
	historyDir = ".history"
	// historyShare is the part of MaxBytes one process may take by
	// default.
	historyShare = 8
)

// HistoryConfig configures the rolling history of every watched
// process's goroutine and heap profiles.
type HistoryConfig struct {
	// Keep is how far back the history reaches; 0 keeps none.
	Keep time.Duration
	// MaxBytes bounds the whole history on disk (0: DefaultHistoryMax);
	// PerProcess one process's part (0: MaxBytes/8).
	MaxBytes   int64
	PerProcess int64
	// Grace is how long the history of a process that exited is kept
	// (0: DefaultHistoryGrace).
	Grace time.Duration
}

// History is the on-disk rolling window of watch samples, one directory
// per process (pid and start time), one file per profile. Files are
// written to a temporary name and renamed, so a crash leaves either the
// whole file or none; leftovers and files that do not parse are ignored.
// It survives restarts and is safe for concurrent use.
type History struct {
	dir  string
	cfg  HistoryConfig
	logf func(string, ...any)

	mu    sync.Mutex
	procs map[string]*procHistory
	total int64
}

// procHistory is one process's files, oldest first.
type procHistory struct {
	files  []histFile
	bytes  int64
	goneAt time.Time
}

type histFile struct {
	ts      time.Time
	profile string
	name    string
	size    int64
}

// OpenHistory opens (creating) the history under dir and reads what a
// previous run left, removing half-written files. A nil History with a
// nil error means the history is disabled.
func OpenHistory(dir string, cfg HistoryConfig, logf func(string, ...any)) (*History, error) {
	if cfg.Keep <= 0 {
		return nil, nil
	}
	if cfg.MaxBytes <= 0 {
		cfg.MaxBytes = DefaultHistoryMax
	}
	if cfg.PerProcess <= 0 || cfg.PerProcess > cfg.MaxBytes {
		cfg.PerProcess = cfg.MaxBytes / historyShare
	}
	if cfg.Grace <= 0 {
		cfg.Grace = DefaultHistoryGrace
	}
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, fmt.Errorf("history: %w", err)
	}
	h := &History{dir: dir, cfg: cfg, logf: logf, procs: map[string]*procHistory{}}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("history: %w", err)
	}
	for _, d := range ents {
		if _, ok := parseProcDir(d.Name()); !d.IsDir() || !ok {
			continue
		}
		p := h.scan(d.Name())
		h.procs[d.Name()] = p
		h.total += p.bytes
	}
	h.mu.Lock()
	h.enforceLocked(time.Now())
	h.mu.Unlock()
	return h, nil
}

// scan reads one process directory, removing temporary and empty files.
func (h *History) scan(name string) *procHistory {
	p := &procHistory{}
	files, _ := os.ReadDir(filepath.Join(h.dir, name))
	for _, f := range files {
		path := filepath.Join(h.dir, name, f.Name())
		info, err := f.Info()
		hf, ok := parseHistFile(f.Name())
		if err != nil || !ok || info.Size() == 0 {
			os.Remove(path) // a crash's leftover (.tmp) or a torn file
			continue
		}
		hf.size = info.Size()
		p.files = append(p.files, hf)
		p.bytes += hf.size
	}
	sortFiles(p.files)
	return p
}

func sortFiles(fs []histFile) {
	sort.Slice(fs, func(i, j int) bool {
		if !fs[i].ts.Equal(fs[j].ts) {
			return fs[i].ts.Before(fs[j].ts)
		}
		return fs[i].profile < fs[j].profile
	})
}

// procDir names a process's directory: pid and start ticks, which tell
// it from a later process with the same pid.
func procDir(k key) string { return fmt.Sprintf("%d-%d", k.pid, k.start) }

func parseProcDir(name string) (key, bool) {
	a, b, ok := strings.Cut(name, "-")
	pid, err1 := strconv.Atoi(a)
	start, err2 := strconv.ParseUint(b, 10, 64)
	return key{pid, start}, ok && err1 == nil && err2 == nil && pid > 0
}

// histName is a file's name: request time in Unix nanoseconds, profile.
func histName(ts time.Time, profile string) string {
	return fmt.Sprintf("%019d-%s.pb.gz", ts.UnixNano(), profile)
}

func parseHistFile(name string) (histFile, bool) {
	base, ok := strings.CutSuffix(name, ".pb.gz")
	ns, prof, ok2 := strings.Cut(base, "-")
	n, err := strconv.ParseInt(ns, 10, 64)
	if !ok || !ok2 || err != nil || (prof != "goroutine" && prof != "heap") {
		return histFile{}, false
	}
	return histFile{ts: time.Unix(0, n), profile: prof, name: name}, true
}
