package web

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"github.com/leakscope/leakscope/internal/format"
	"io"
	"io/fs"
	"log"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"syscall"

	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/leakscope/leakscope/analysis"
	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/ingest/killpoint"
)

// ErrNotFound is returned for a capture id the store does not hold.
var ErrNotFound = errors.New("no such capture")

// ErrNoSuspect is returned for a suspect id a capture's report does not
// hold.
var ErrNoSuspect = errors.New("no such suspect")

// idPattern is what a capture id looks like; the router only routes ids
// that match it, so an id can never name a path outside the data dir.
var idPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,63}$`)

// Store keeps the captures of a data directory: DATA/captures/ID is the
// bundle of capture ID. It is safe for concurrent use by multiple
// goroutines.
type Store struct {
	dir    string // DATA/captures
	mem    memory.Allocator
	limits bundle.Limits
	opts   analysis.Options
	quota  int64 // the most bytes all captures may take together

	mu       sync.RWMutex
	caps     map[string]*capture
	used     int64 // bytes the captures take
	reserved int64 // bytes uploads in flight may still take
	// addMu serializes the duplicate check of uploads.
	addMu sync.Mutex
	// slots and asked hold a token per analysis running (see
	// analysis.go): asked only for analyses a request waits for.
	slots, asked chan struct{}
	// removing counts deleted captures whose files wait for readers,
	// running the analyses started.
	removing, running sync.WaitGroup
}

// Wait waits for the analyses started and the removals of deleted
// captures still in flight (a server shutting down, a test ending).
func (s *Store) Wait() {
	s.running.Wait()
	s.removing.Wait()
}

// DefaultQuota is the most disk all captures of a data directory may
// take together when [Store.SetQuota] is not called.
const DefaultQuota = 32 << 30

// minFree is the disk space uploads always leave free.
const minFree = 1 << 30

// ErrQuota is wrapped by the error for an upload the data directory has
// no room for; the error says which bound (quota or disk).
var ErrQuota = errors.New("no room for the upload")

// OpenStore opens (creating it if needed) the data directory. On first use
// of a data directory (no DATA/captures yet), every bundle directory at the
// top of seed (NAME.lsb) is installed as a capture, so a new workbench has
// something to show; seed may be nil.
func OpenStore(dataDir string, seed fs.FS, limits bundle.Limits, mem memory.Allocator) (*Store, error) {
	if mem == nil {
		mem = memory.DefaultAllocator
	}
	if limits.MaxBytes <= 0 {
		limits.MaxBytes = bundle.DefaultLimits.MaxBytes
	}
	s := &Store{dir: filepath.Join(dataDir, "captures"), mem: mem, limits: limits, quota: DefaultQuota, caps: map[string]*capture{},
		slots: make(chan struct{}, maxAnalyses), asked: make(chan struct{}, maxAnalyses)}
	_, err := os.Stat(s.dir)
	first := errors.Is(err, fs.ErrNotExist)
	if err := os.MkdirAll(s.dir, 0o755); err != nil {
		return nil, fmt.Errorf("open data dir: %w", err)
	}
	if err := s.load(); err != nil {
		return nil, err
	}
	if first && seed != nil {
		if err := s.Seed(seed); err != nil {
			return nil, fmt.Errorf("install sample captures: %w", err)
		}
	}
	return s, nil
}

// Dir returns the directory holding the capture bundles.
func (s *Store) Dir() string { return s.dir }

// load registers every bundle under s.dir and removes what interrupted
// uploads or deletes left (dot-named entries).
func (s *Store) load() error {
	entries, err := os.ReadDir(s.dir)
	if err != nil {
		return fmt.Errorf("read data dir: %w", err)
	}
	// A final bundle staged to replace a preliminary one takes its place
	// first (a kill during Store.supersede).
	for _, e := range entries {
		s.finishSupersede(e.Name())
	}
	// Captures deleted before their files were removed (a kill, or
	// readers that held them to the end).
	for _, e := range entries {
		if id, ok := strings.CutPrefix(e.Name(), deletingPrefix); ok && idPattern.MatchString(id) {
			os.RemoveAll(filepath.Join(s.dir, id))
			os.Remove(s.reportCachePath(id))
		}
	}
	if entries, err = os.ReadDir(s.dir); err != nil {
		return fmt.Errorf("read data dir: %w", err)
	}
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, ".") {
			os.RemoveAll(filepath.Join(s.dir, name))
			continue
		}
		if !e.IsDir() || !idPattern.MatchString(name) {
			continue
		}
		b, err := openStored(filepath.Join(s.dir, name))
		if err != nil {
			log.Printf("leakscope serve: skipping %s: %v", filepath.Join(s.dir, name), err)
			continue
		}
		s.caps[name] = newCapture(name, b, s)
		s.used += bundle.DirSize(b.Dir) + s.cacheSize(name)
	}
	// Kept analyses of captures that are gone (deleted, then killed).
	for _, e := range entries {
		if id, ok := strings.CutSuffix(e.Name(), reportCacheSuffix); ok && s.caps[id] == nil {
			os.Remove(filepath.Join(s.dir, e.Name()))
		}
	}
	return nil
}

// SetQuota sets the most bytes all captures may take together.
func (s *Store) SetQuota(total int64) {
	s.mu.Lock()
	s.quota = total
	s.mu.Unlock()
}

// SetAnalysis sets the options of every analysis the store runs (the
// deadline and heap budget among them), before any runs.
func (s *Store) SetAnalysis(opts analysis.Options) {
	s.mu.Lock()
	s.opts = opts
	s.mu.Unlock()
}

// limitsKey names the deadline and heap budget analyses run under, which
// a kept analysis must share to be used.
func (s *Store) limitsKey() string {
	return fmt.Sprintf("timeout=%v max_heap=%d", s.opts.Timeout, s.opts.MaxHeap)
}

// Used returns the bytes the captures (and their kept analyses) take and
// the quota.
func (s *Store) Used() (used, quota int64) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.used, s.quota
}

// samplePrefix starts the id of every capture [Store.Seed] installs;
// uploads get random hex ids, so no upload's id has it.
const samplePrefix = "sample-"

// isSample reports whether capture id is a shipped sample [Store.Seed]
// installed, not one of the user's captures.
func isSample(id string) bool { return strings.HasPrefix(id, samplePrefix) }

// Seed installs every top-level NAME.lsb directory of fsys as capture
// "sample-NAME" (lower-cased), skipping ids already present.
func (s *Store) Seed(fsys fs.FS) error {
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return err
	}
	for _, e := range entries {
		base, ok := strings.CutSuffix(e.Name(), ".lsb")
		if !ok || !e.IsDir() {
			continue
		}
		id := sanitizeID(samplePrefix + base)
		s.mu.RLock()
		_, exists := s.caps[id]
		s.mu.RUnlock()
		if exists {
			continue
		}
		sub, err := fs.Sub(fsys, e.Name())
		if err != nil {
			return err
		}
		if err := s.install(id, func(tmp string) error { return os.CopyFS(tmp, sub) }); err != nil {
			return fmt.Errorf("sample %s: %w", e.Name(), err)
		}
	}
	return nil
}

// install fills a temporary directory with fill, validates it as a bundle
// and renames it to the capture id.
func (s *Store) install(id string, fill func(tmp string) error) error {
	tmp, err := os.MkdirTemp(s.dir, ".seed-*")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	inner := filepath.Join(tmp, "b")
	if err := fill(inner); err != nil {
		return err
	}
	if _, err := bundle.Validate(inner); err != nil {
		return err
	}
	dst := filepath.Join(s.dir, id)
	if err := os.Rename(inner, dst); err != nil {
		return err
	}
	b, err := bundle.Open(dst)
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.caps[id] = newCapture(id, b, s)
	s.used += bundle.DirSize(dst)
	s.mu.Unlock()
	return nil
}

func sanitizeID(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '-', r == '_':
			b.WriteRune(r)
		default:
			b.WriteByte('-')
		}
	}
	id := strings.Trim(b.String(), "-_")
	if len(id) > 64 {
		id = id[:64]
	}
	if id == "" {
		id = "capture"
	}
	return id
}

func newID() string {
	var b [8]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Add unpacks a bundle archive (.tar.zst or .tar.gz) read from r as a new
// capture and returns its id. The archive is validated before it becomes
// visible; on error nothing is left in the data directory. Refused
// archives give errors wrapping bundle.ErrArchive; one that would unpack
// to more than the per-upload limit or the room left under the quota (or
// on the disk) wraps bundle.ErrTooLarge, checked while it streams. A
// bundle the store already holds (same capture id and the same files, see
// bundle.Digest) is not stored twice: Add returns the id of the capture it
// already is, with existed true.
func (s *Store) Add(r io.Reader) (id string, existed bool, err error) {
	if err := s.roomFor(0); err != nil {
		return "", false, err
	}
	res := &reservation{s: s}
	defer res.release()
	id = newID()
	// The upload is unpacked under a dot name, which load removes, and
	// renamed to its id only once it is known to be new: a kill at any
	// step stores it once or not at all.
	incoming := filepath.Join(s.dir, ".incoming-"+id)
	dst := filepath.Join(s.dir, id)
	lim := s.limits
	lim.Reserve = res.grow
	if _, err := bundle.Unpack(r, incoming, lim); err != nil {
		if errors.Is(err, bundle.ErrTooLarge) && !errors.Is(err, ErrQuota) {
			return "", false, fmt.Errorf("%w (the most one capture may take is %s; see serve --max-unpacked)", err, sizeText(s.limits.MaxBytes))
		}
		return "", false, err
	}
	defer os.RemoveAll(incoming)
	killpoint.At("store:unpacked")
	b, err := bundle.Open(incoming)
	if err != nil {
		return "", false, err
	}
	size := bundle.DirSize(incoming)
	// One upload at a time decides whether it is new, so that two copies
	// of one bundle sent at once are not both kept.
	s.addMu.Lock()
	defer s.addMu.Unlock()
	if same, err := s.same(newCapture(id, b, s)); err != nil || same != "" {
		return same, same != "", err
	}
	killpoint.At("store:checked")
	// A capture id is a time to the nanosecond: with the node, one
	// capture's bundles.
	prelim, final := s.sameCapture(b.Manifest.CaptureID, b.Manifest.Node)
	if b.Manifest.Preliminary && final != "" {
		// The final bundle came first: the preliminary one has nothing
		// to add.
		return final, true, nil
	}
	if !b.Manifest.Preliminary && prelim != "" {
		return prelim, false, s.supersede(prelim, incoming, size)
	}
	if err := os.Rename(incoming, dst); err != nil {
		return "", false, fmt.Errorf("store upload: %w", err)
	}
	if b, err = openStored(dst); err != nil {
		os.RemoveAll(dst)
		return "", false, err
	}
	s.mu.Lock()
	s.caps[id] = newCapture(id, b, s)
	s.used += size
	s.mu.Unlock()
	return id, false, nil
}

// openStored opens a stored bundle. Nothing writes a stored bundle, so a
// source still "running" is interrupted, however recent its last flush
// (an agent killed mid-capture uploads what it had when it restarts).
func openStored(dir string) (*bundle.Bundle, error) {
	b, err := bundle.Open(dir)
	if err != nil {
		return nil, err
	}
	b.Manifest.MarkWriterGone()
	return b, nil
}

// same returns the id of a stored capture holding the same bundle as c, or
// "" when there is none.
func (s *Store) same(c *capture) (string, error) {
	var cands []*capture
	for _, o := range s.List() {
		if o.b.Manifest.CaptureID == c.b.Manifest.CaptureID {
			cands = append(cands, o)
		}
	}
	if len(cands) == 0 {
		return "", nil
	}
	d, err := c.Digest()
	if err != nil {
		return "", err
	}
	for _, o := range cands {
		od, release, err := s.digestOf(o.id)
		if err != nil {
			continue // deleted meanwhile, or unreadable: not a duplicate
		}
		release()
		if od == d {
			return o.id, nil
		}
	}
	return "", nil
}

// digestOf returns the digest of a stored capture, holding it meanwhile.
func (s *Store) digestOf(id string) (string, func(), error) {
	c, release, err := s.Acquire(id)
	if err != nil {
		return "", nil, err
	}
	d, err := c.Digest()
	if err != nil {
		release()
		return "", nil, err
	}
	return d, release, nil
}

// reservation is the room one upload has set aside: it grows with every
// file of the archive, by the size the file's header declares, so an
// upload in flight holds what it has sent so far, not the most it could.
type reservation struct {
	s *Store
	n int64
}

// grow sets aside n more bytes, or says which bound leaves no room.
func (r *reservation) grow(n int64) error {
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	if err := r.s.roomLocked(n); err != nil {
		return err
	}
	r.s.reserved += n
	r.n += n
	return nil
}

func (r *reservation) release() {
	r.s.mu.Lock()
	r.s.reserved -= r.n
	r.n = 0
	r.s.mu.Unlock()
}

// roomFor checks that n more bytes fit under the quota and on the disk.
func (s *Store) roomFor(n int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.roomLocked(n)
}

// roomLocked is roomFor with s.mu held. The error wraps ErrQuota and says
// which bound has no room: the quota (what stored captures take, and what
// uploads in flight have set aside), or the disk's free space.
func (s *Store) roomLocked(n int64) error {
	if left := s.quota - s.used - s.reserved; left <= 0 || n > left {
		return fmt.Errorf("%w: the quota of %s is taken: stored captures take %s and uploads in flight have set aside %s; delete some captures, or raise serve --quota",
			ErrQuota, sizeText(s.quota), sizeText(s.used), sizeText(s.reserved))
	}
	var st syscall.Statfs_t
	if syscall.Statfs(s.dir, &st) == nil {
		free := int64(st.Bavail) * st.Bsize
		if left := free - minFree - s.reserved; left <= 0 || n > left {
			return fmt.Errorf("%w: the disk holding the data directory has %s free, uploads leave %s, and uploads in flight have set aside %s",
				ErrQuota, sizeText(free), sizeText(minFree), sizeText(s.reserved))
		}
	}
	return nil
}

// sizeText writes a byte count in binary units.
func sizeText(n int64) string {
	return format.Bytes(float64(n))
}

// Acquire returns the capture with the given id, held for reading: its
// files stay in place until release is called. Every successful Acquire
// must be followed by exactly one release.
func (s *Store) Acquire(id string) (c *capture, release func(), err error) {
	s.mu.RLock()
	c = s.caps[id]
	if c != nil {
		c.use.RLock()
	}
	s.mu.RUnlock()
	if c == nil {
		return nil, nil, fmt.Errorf("capture %q: %w", id, ErrNotFound)
	}
	return c, c.use.RUnlock, nil
}

// List returns the captures ordered by start time, newest first.
func (s *Store) List() []*capture {
	s.mu.RLock()
	out := make([]*capture, 0, len(s.caps))
	for _, c := range s.caps {
		out = append(out, c)
	}
	s.mu.RUnlock()
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i].b.Manifest.Start, out[j].b.Manifest.Start
		if !a.Equal(b) {
			return a.After(b)
		}
		return out[i].id < out[j].id
	})
	return out
}

// deletingPrefix names the tombstone Delete writes before it lets a
// capture go: a workbench started again before the files are removed
// removes them (see load), so a deleted capture never comes back.
const deletingPrefix = ".deleting-"

// Delete removes a capture: it disappears from the store at once (a
// tombstone keeps it gone across a restart), its analysis is stopped, and
// its files and kept analysis are removed once the reads in flight on it
// have finished — now when there are none, else on a goroutine of its
// own: Delete never waits for a reader.
func (s *Store) Delete(id string) error {
	s.mu.Lock()
	c := s.caps[id]
	if c == nil {
		s.mu.Unlock()
		return fmt.Errorf("capture %q: %w", id, ErrNotFound)
	}
	tomb := filepath.Join(s.dir, deletingPrefix+id)
	if err := os.WriteFile(tomb, nil, 0o644); err != nil {
		s.mu.Unlock()
		return fmt.Errorf("delete capture %s: %w", id, err)
	}
	delete(s.caps, id)
	s.mu.Unlock()
	c.stopAnalysis()
	if c.use.TryLock() {
		return s.remove(c, tomb)
	}
	s.removing.Add(1)
	go func() {
		defer s.removing.Done()
		c.use.Lock() // wait for readers; no new ones can find c
		if err := s.remove(c, tomb); err != nil {
			log.Printf("leakscope serve: %v (removed at the next start)", err)
		}
	}()
	return nil
}

// remove deletes the files of c, which Delete took out of the store and
// holds locked, then its tombstone, and unlocks c.
func (s *Store) remove(c *capture, tomb string) error {
	defer c.use.Unlock()
	trash := filepath.Join(s.dir, ".deleted-"+c.id+"-"+newID())
	size := bundle.DirSize(c.b.Dir)
	if err := os.Rename(c.b.Dir, trash); err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("delete capture %s: %w", c.id, err)
	}
	s.mu.Lock()
	s.used -= size
	s.mu.Unlock()
	s.dropReportCache(c.id)
	if err := os.RemoveAll(trash); err != nil {
		return fmt.Errorf("delete capture %s: %w", c.id, err)
	}
	os.Remove(tomb)
	return nil
}
