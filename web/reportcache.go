package web

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"

	"github.com/leakscope/leakscope/analysis"
)

// The analysis of each capture is kept beside its bundle, in
// DATA/captures/ID.analysis.json, so that a restarted workbench lists its
// captures (and answers /metrics and the fleet view) without analysing
// every one again. A kept analysis is used only when it was written by
// the same leakscope executable (its SHA-256: any change of the analysis
// code changes it) in the same cache format, under the same deadline and
// heap budget (a cut is kept too), for a bundle of the same size; else the
// capture is analysed again and the file replaced. The files count in the
// quota.
const (
	reportCacheSuffix = ".analysis.json"
	reportCacheFormat = 1
)

// cachedAnalysis is the content of an ID.analysis.json file.
type cachedAnalysis struct {
	Format   int    `json:"format"`
	Analyzer string `json:"analyzer"`
	Limits   string `json:"limits,omitempty"` // the analysis's deadline and heap budget

	Bytes  int64            `json:"bundle_bytes"`
	Error  string           `json:"error,omitempty"`
	Report *analysis.Report `json:"report,omitempty"`
}

// analyses counts the analyses the store ran (tests check the cache
// spares them).
var analyses atomic.Int64

var (
	analyzerOnce sync.Once
	analyzerID   string
)

// analyzer identifies this build of the analysis: the SHA-256 of the
// running executable ("" when it cannot be read: nothing is cached).
func analyzer() string {
	analyzerOnce.Do(func() {
		exe, err := os.Executable()
		if err != nil {
			return
		}
		f, err := os.Open(exe)
		if err != nil {
			return
		}
		defer f.Close()
		h := sha256.New()
		if _, err := io.Copy(h, f); err == nil {
			analyzerID = hex.EncodeToString(h.Sum(nil))
		}
	})
	return analyzerID
}

func (s *Store) reportCachePath(id string) string {
	return filepath.Join(s.dir, id+reportCacheSuffix)
}

// readReportCache returns the kept analysis of c, if it is current.
func (s *Store) readReportCache(c *capture) (*cachedAnalysis, bool) {
	id := analyzer()
	if id == "" {
		return nil, false
	}
	data, err := os.ReadFile(s.reportCachePath(c.id))
	if err != nil {
		return nil, false
	}
	var ca cachedAnalysis
	if json.Unmarshal(data, &ca) != nil || ca.Format != reportCacheFormat || ca.Analyzer != id || ca.Bytes != c.Size() || ca.Limits != s.limitsKey() {
		return nil, false
	}
	if ca.Report == nil && ca.Error == "" {
		return nil, false
	}
	return &ca, true
}

// writeReportCache keeps c's analysis (its report, or why it failed)
// beside the bundle, atomically. The file counts in the quota like the
// bundle: one that does not fit is not written (the analysis is kept in
// memory only), and an earlier one is dropped.
func (s *Store) writeReportCache(c *capture, rep *analysis.Report, err error) {
	id := analyzer()
	if id == "" {
		return
	}
	ca := cachedAnalysis{Format: reportCacheFormat, Analyzer: id, Limits: s.limitsKey(), Bytes: c.Size(), Report: rep}
	if err != nil {
		ca.Report, ca.Error = nil, err.Error()
	}
	data, merr := json.Marshal(ca)
	if merr != nil {
		return
	}
	s.dropReportCache(c.id)
	if s.roomFor(int64(len(data))) != nil {
		return
	}
	tmp, terr := os.CreateTemp(s.dir, ".analysis-*")
	if terr != nil {
		return
	}
	_, werr := tmp.Write(data)
	if cerr := tmp.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil || os.Rename(tmp.Name(), s.reportCachePath(c.id)) != nil {
		os.Remove(tmp.Name())
		return
	}
	s.mu.Lock()
	s.used += int64(len(data))
	s.mu.Unlock()
}

// dropReportCache removes the kept analysis of capture id, if any, and
// gives its bytes back to the quota.
func (s *Store) dropReportCache(id string) {
	path := s.reportCachePath(id)
	st, err := os.Stat(path)
	if err != nil || os.Remove(path) != nil {
		return
	}
	s.mu.Lock()
	s.used -= st.Size()
	s.mu.Unlock()
}

// cacheSize is the bytes the kept analysis of capture id takes, 0 for
// none.
func (s *Store) cacheSize(id string) int64 {
	if st, err := os.Stat(s.reportCachePath(id)); err == nil {
		return st.Size()
	}
	return 0
}
