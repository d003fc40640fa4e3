package agent

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/leakscope/leakscope/analysis"
	"github.com/leakscope/leakscope/analysis/report"
	"github.com/leakscope/leakscope/ingest/bundle"
)

// firstAnswerFile is the preliminary report of a spool entry.
const firstAnswerFile = "preliminary.md"

// preliminaryNote heads a preliminary report.
const preliminaryNote = "> **Preliminary:** written right after the capture's first dump, from that dump (stuck verdicts) and the history before it (growth); the final report replaces it when the capture ends.\n\n"

// WriteFirstAnswer analyses the bundle being recorded in dir (its first
// dump and any history before it) and writes a preliminary Markdown
// report to file, through a temporary file and a rename. It returns the
// report.
func WriteFirstAnswer(dir, file string, opts analysis.Options) (*analysis.Report, error) {
	b, err := bundle.Open(dir)
	if err != nil {
		return nil, err
	}
	// The capture is still running: what the bundle holds ends at its
	// last flush.
	if m := &b.Manifest; m.End.Before(m.LastFlush) {
		m.End = m.LastFlush
	}
	mem := memory.DefaultAllocator
	if opts.Now.IsZero() {
		opts.Now = time.Now()
	}
	rep, err := analysis.Analyze(b, mem, opts)
	if err != nil {
		return nil, fmt.Errorf("analyse: %w", err)
	}
	tmp := filepath.Join(filepath.Dir(file), "."+filepath.Base(file)+".tmp")
	out, err := os.Create(tmp)
	if err != nil {
		return nil, err
	}
	_, err = out.WriteString(preliminaryNote)
	if err == nil {
		err = report.Markdown(out, rep, report.Options{Bundle: b, Mem: mem})
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, file)
	}
	if err != nil {
		os.Remove(tmp)
		return nil, fmt.Errorf("write %s: %w", file, err)
	}
	return rep, nil
}

// TopSuspect names a report's top suspect ("pattern location (count)",
// the count worded as every view words it: "(60 goroutines)", "(1.4
// MiB)"), or "no suspects".
func TopSuspect(rep *analysis.Report) string {
	if len(rep.Suspects) == 0 {
		return "no suspects"
	}
	s := rep.Suspects[0]
	return fmt.Sprintf("%s %s (%s)", s.Pattern, s.Location, analysis.CountText(s))
}

// firstAnswer returns the capture's FirstDump callback for entry e: the
// preliminary report beside the bundle, uploaded to the workbench as a
// preliminary capture when the agent uploads, and a log line with its top
// suspect, its link and how long after the capture began it came.
func (a *Agent) firstAnswer(e *Entry, pid int, triggered time.Time) func(string) {
	return func(dir string) {
		path := a.spool.Path(e, firstAnswerFile)
		opts := a.cfg.Analysis
		rep, err := WriteFirstAnswer(dir, path, opts)
		if err != nil {
			a.logf("pid %d: first answer: %v", pid, err)
			return
		}
		a.logf("%s: first answer %s after the capture began: top %s; preliminary report %s", e.Name, time.Since(triggered).Round(100*time.Millisecond), TopSuspect(rep), path)
		if a.cfg.UploadTo == "" {
			return
		}
		id, err := a.uploadPreliminary(e, dir)
		if err != nil {
			a.logf("%s: preliminary upload: %v", e.Name, err)
			return
		}
		// Run waits for this callback before it returns: captureJob
		// saves the entry after it.
		e.PreliminaryID = id
		a.logf("%s: preliminary capture %s in the workbench %s after the capture began: top %s; %s/#/c/%s/overview%s", e.Name, id,
			time.Since(triggered).Round(100*time.Millisecond), TopSuspect(rep), a.workbenchBase(), id, a.linkSuffix(e.CaptureID))
	}
}
