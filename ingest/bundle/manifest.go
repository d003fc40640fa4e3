package bundle

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/leakscope/leakscope/ingest/schema"
)

// FormatVersion is the bundle directory layout version written to every
// manifest.
const FormatVersion = 1

// ManifestFile is the name of the manifest inside a bundle directory.
const ManifestFile = "manifest.json"

// Source kinds recorded in the manifest.
const (
	SourcePprof = "pprof"
	SourceDump  = "dump"
	SourceTrace = "trace"
	SourceEBPF  = "ebpf"
)

// Source statuses.
const (
	StatusComplete    = "complete"
	StatusTruncated   = "truncated"
	StatusUnavailable = "unavailable"
	StatusFailed      = "failed"
	StatusRunning     = "running"
	// StatusInterrupted is what a reader makes of "running" when the
	// writer stopped flushing without closing the bundle (a capture killed
	// with SIGKILL, a node that lost power): the tables hold what was
	// flushed, up to Manifest.LastFlush.
	StatusInterrupted = "interrupted"
)

// staleAfter is how long after its last flush a bundle whose sources are
// still "running" is taken as interrupted rather than being written.
const staleAfter = 15 * time.Second

// Manifest describes a bundle: where it came from, which sources it holds
// and how its clocks were mapped.
type Manifest struct {
	FormatVersion int        `json:"format_version"`
	SchemaVersion string     `json:"schema_version"`
	CaptureID     string     `json:"capture_id"`
	Node          string     `json:"node,omitempty"`
	Target        Target     `json:"target"`
	Start         time.Time  `json:"start,omitzero"`
	End           time.Time  `json:"end,omitzero"`
	Sources       []Source   `json:"sources"`
	Artifacts     []Artifact `json:"artifacts"`
	Clock         Clock      `json:"clock"`
	Tool          string     `json:"tool"`
	// LastFlush is when a writer recording flushes (a capture) last
	// flushed its tables; the tables hold everything up to it.
	LastFlush time.Time `json:"last_flush,omitzero"`
	// Preliminary marks a copy of a capture's bundle taken while the
	// capture still runs (the node agent's first answer, right after the
	// first dump): the workbench shows it as preliminary and replaces it
	// with the bundle of the same CaptureID that is not.
	Preliminary bool `json:"preliminary,omitempty"`
	// Trigger is what started the capture (an alert, the node agent's
	// rule); nil for a capture started by hand or files ingested.
	Trigger *Trigger `json:"trigger,omitempty"`
}

// Target identifies the captured process.
type Target struct {
	PID        int    `json:"pid,omitempty"`
	URL        string `json:"url,omitempty"`
	Exe        string `json:"exe,omitempty"`
	GoVersion  string `json:"go_version,omitempty"`
	BuildID    string `json:"build_id,omitempty"`
	ModulePath string `json:"module_path,omitempty"`
	// ModuleVersion is the main module's version in the build info (a
	// tag or pseudo-version the go command stamped, "(devel)" without
	// one); VCSRevision, VCSTime and VCSModified are its vcs.revision,
	// vcs.time and vcs.modified settings. Together they name the build
	// ([Target.Build]).
	ModuleVersion string    `json:"module_version,omitempty"`
	VCSRevision   string    `json:"vcs_revision,omitempty"`
	VCSTime       time.Time `json:"vcs_time,omitzero"`
	VCSModified   bool      `json:"vcs_modified,omitempty"`
	// ProcessStart is when the process started (from /proc/PID/stat and
	// the boot time, to the kernel's 10 ms clock tick); zero when unknown.
	ProcessStart time.Time `json:"process_start,omitzero"`
	// ProcessStartFrom says where ProcessStart was read: "/proc/PID/stat",
	// or for a --url capture the process found listening on its port.
	ProcessStartFrom string `json:"process_start_from,omitempty"`
	// Deps are the dependency modules from the executable's build info;
	// analysis tells the user's code from libraries with them.
	Deps []Module `json:"deps,omitempty"`
	// Methods are the executable's methods that release an object
	// (Close, Shutdown, ShutDown, Stop, Cancel, CloseIdleConnections),
	// from its symbol table: analysis names a leaked library object's
	// release with them when the library's source is not readable.
	Methods []string `json:"methods,omitempty"`
}

// Module is one module of a target's build info.
type Module struct {
	Path    string `json:"path"`
	Version string `json:"version,omitempty"`
	// Replace is the module path (or directory) it was replaced by.
	Replace string `json:"replace,omitempty"`
}

// Source is one kind of data in the bundle, with its settings and how its
// recording ended.
type Source struct {
	Kind     string            `json:"kind"`
	Status   string            `json:"status"`
	Detail   string            `json:"detail,omitempty"`
	Settings map[string]string `json:"settings,omitempty"`
	Counters map[string]int64  `json:"counters,omitempty"`
}

// Artifact is one original file kept under raw/ and what ingest made of it.
type Artifact struct {
	Name       string    `json:"name"`
	Kind       string    `json:"kind"`
	Profile    string    `json:"profile,omitempty"`
	Size       int64     `json:"size"`
	Time       time.Time `json:"time"`
	Rows       int64     `json:"rows"`
	Status     string    `json:"status"`
	Detail     string    `json:"detail,omitempty"`
	OriginPath string    `json:"origin,omitempty"`
	// Fatal is the runtime's fatal error a traceback follows, as it
	// printed it ("all goroutines are asleep - deadlock!"); "" for none.
	Fatal string `json:"fatal,omitempty"`
	// SHA256 is the hex SHA-256 of the original, for telling a file
	// already added from a new one.
	SHA256 string `json:"sha256,omitempty"`
	// TimeBasis says where Time comes from (one of the Time* constants);
	// TimeDetail adds what a reader should know (the name it was read
	// from, a tie with another file).
	TimeBasis  string `json:"time_basis,omitempty"`
	TimeDetail string `json:"time_detail,omitempty"`
	// Start and End bound the time a window artifact covers (a trace:
	// its first and last event on the wall clock).
	Start time.Time `json:"start,omitzero"`
	End   time.Time `json:"end,omitzero"`
	// Period is the profile's sampling period as the profile states it
	// (for a heap profile the runtime's MemProfileRate in bytes), 0 when
	// it states none.
	Period int64 `json:"period,omitempty"`
	// Role is what the artifact was taken as: empty for a capture's own
	// snapshot, [RoleHistory] for a profile the node agent recorded in its
	// rolling watch before the capture was triggered.
	Role string `json:"role,omitempty"`
}

// RoleHistory marks an artifact from the agent's history ([Artifact.Role]):
// an earlier goroutine or heap profile, never a dump.
const RoleHistory = "history"

// Where an artifact's time comes from ([Artifact.TimeBasis]), strongest
// first.
const (
	// TimeGiven: the user said when (ingest --at).
	TimeGiven = "given"
	// TimeContent: the file's own clock (a profile's TimeNanos, a trace's
	// clock snapshots).
	TimeContent = "content"
	// TimeCapture: the capture's request start, or the manifest of the
	// capture bundle a raw file was taken from.
	TimeCapture = "capture"
	// TimeFileName: a timestamp in the file's name.
	TimeFileName = "file-name"
	// TimeMtime: the file's modification time (a copy or a git checkout
	// gives every file the same one).
	TimeMtime = "mtime"
	// TimeOrder: no real time; the file shared its time with another one
	// and was placed just after it, in argument order.
	TimeOrder = "order"
)

// Clock records how monotonic timestamps were mapped to wall-clock time.
type Clock struct {
	Method string `json:"method,omitempty"`
	// OffsetNS is wall minus CLOCK_MONOTONIC, in nanoseconds, when a single
	// offset was used.
	OffsetNS int64  `json:"offset_ns,omitempty"`
	Detail   string `json:"detail,omitempty"`
}

// NewManifest returns a manifest for a new bundle.
func NewManifest(captureID, tool string) Manifest {
	return Manifest{
		FormatVersion: FormatVersion,
		SchemaVersion: schema.SchemaVersion,
		CaptureID:     captureID,
		Tool:          tool,
	}
}

// Source returns the source of the given kind, adding it if missing.
func (m *Manifest) Source(kind string) *Source {
	for i := range m.Sources {
		if m.Sources[i].Kind == kind {
			return &m.Sources[i]
		}
	}
	m.Sources = append(m.Sources, Source{Kind: kind, Status: StatusComplete})
	return &m.Sources[len(m.Sources)-1]
}

// HasSource reports whether the bundle holds data of the given kind.
func (m *Manifest) HasSource(kind string) bool {
	for _, s := range m.Sources {
		if s.Kind == kind {
			return true
		}
	}
	return false
}

// rawNames returns the file names under raw/ the manifest's artifacts
// name.
func (m *Manifest) rawNames() map[string]bool {
	out := map[string]bool{}
	for _, a := range m.Artifacts {
		if name, ok := strings.CutPrefix(a.Name, RawDir+"/"); ok {
			out[name] = true
		}
	}
	return out
}

// Widen stretches the manifest's time range to cover t.
func (m *Manifest) Widen(t time.Time) {
	if t.IsZero() {
		return
	}
	if m.Start.IsZero() || t.Before(m.Start) {
		m.Start = t
	}
	if t.After(m.End) {
		m.End = t
	}
}

// ReadManifest reads DIR/manifest.json as a reader sees it: the "running"
// sources of a bundle whose writer stopped flushing are "interrupted".
func ReadManifest(dir string) (Manifest, error) {
	m, err := readStoredManifest(dir)
	if err != nil {
		return m, err
	}
	m.markInterrupted(time.Now())
	return m, nil
}

// readStoredManifest reads DIR/manifest.json as it is stored. Writers
// start from it: what a reader makes of a "running" source is never
// written back (a new capture's sources would read "interrupted").
func readStoredManifest(dir string) (Manifest, error) {
	var m Manifest
	data, err := os.ReadFile(filepath.Join(dir, ManifestFile))
	if err != nil {
		return m, fmt.Errorf("read manifest: %w", err)
	}
	if err := json.Unmarshal(data, &m); err != nil {
		return m, fmt.Errorf("%s: not a bundle manifest: %w", filepath.Join(dir, ManifestFile), err)
	}
	if m.FormatVersion < 1 || m.FormatVersion > FormatVersion {
		return m, fmt.Errorf("%s: bundle format version %d is not supported (this leakscope reads version %d)", filepath.Join(dir, ManifestFile), m.FormatVersion, FormatVersion)
	}
	return m, nil
}

// markInterrupted turns the "running" sources of a bundle that stopped
// flushing (its last flush older than staleAfter at now) into
// "interrupted", saying when the last flush was. A bundle still being
// written keeps "running", with the time of its last flush.
func (m *Manifest) markInterrupted(now time.Time) {
	last, what := m.lastData()
	for i := range m.Sources {
		s := &m.Sources[i]
		if s.Status != StatusRunning {
			continue
		}
		note := fmt.Sprintf("%s at %s", what, last.UTC().Format(time.RFC3339))
		if last.IsZero() {
			note = "nothing was flushed"
		}
		if !last.IsZero() && now.Sub(last) < staleAfter {
			s.Detail = joinDetail(s.Detail, "still being written, "+note)
			continue
		}
		s.Status = StatusInterrupted
		s.Detail = joinDetail(s.Detail, note)
	}
}

// MarkWriterGone is for a bundle known to be written no more (uploaded,
// or left by a capture whose process is gone): its "running" sources are
// "interrupted", however recent their last flush. It changes m only, not
// the stored manifest.
func (m *Manifest) MarkWriterGone() {
	for i := range m.Sources {
		s := &m.Sources[i]
		if s.Status == StatusRunning {
			// A reader's "still being written, last flush at T" note
			// becomes "last flush at T".
			s.Detail = strings.Replace(s.Detail, "still being written, ", "", 1)
			s.Status = StatusInterrupted
		}
	}
}

// lastData is the last flush of a recording writer, or for bundles written
// before it was recorded the latest artifact time.
func (m *Manifest) lastData() (time.Time, string) {
	if !m.LastFlush.IsZero() {
		return m.LastFlush, "last flush"
	}
	var last time.Time
	for _, a := range m.Artifacts {
		if a.Time.After(last) {
			last = a.Time
		}
	}
	return last, "last artifact"
}

func joinDetail(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

// writeManifest replaces DIR/manifest.json atomically.
func writeManifest(dir string, m Manifest) error {
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return fmt.Errorf("encode manifest: %w", err)
	}
	return writeFileAtomic(filepath.Join(dir, ManifestFile), append(data, '\n'))
}

// writeFileAtomic writes data to a temporary file beside path and renames it
// into place, so readers see the old or the new content, never a mix.
func writeFileAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), path)
}
