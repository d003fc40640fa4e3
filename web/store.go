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
}

// DefaultQuota is the most disk all captures of a data directory may
// take together when [Store.SetQuota] is not called.
const DefaultQuota = 32 << 30

// minFree is the disk space uploads always leave free.
const minFree = 1 << 30

// ErrQuota is wrapped by the error for an upload the data directory has
// no room for.
var ErrQuota = errors.New("the data directory is full")

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
	s := &Store{dir: filepath.Join(dataDir, "captures"), mem: mem, limits: limits, quota: DefaultQuota, caps: map[string]*capture{}}
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
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, ".") {
			os.RemoveAll(filepath.Join(s.dir, name))
			continue
		}
		if !e.IsDir() || !idPattern.MatchString(name) {
			continue
		}
		b, err := bundle.Open(filepath.Join(s.dir, name))
		if err != nil {
			log.Printf("leakscope serve: skipping %s: %v", filepath.Join(s.dir, name), err)
			continue
		}
		s.caps[name] = newCapture(name, b, s)
		s.used += dirSize(b.Dir)
	}
	return nil
}

// SetQuota sets the most bytes all captures may take together.
func (s *Store) SetQuota(total int64) {
	s.mu.Lock()
	s.quota = total
	s.mu.Unlock()
}

// Used returns the bytes the captures take and the quota.
func (s *Store) Used() (used, quota int64) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.used, s.quota
}

// dirSize adds up the sizes of the files under dir.
func dirSize(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if info, err := d.Info(); err == nil {
				n += info.Size()
			}
		}
		return nil
	})
	return n
}

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
		id := sanitizeID("sample-" + base)
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
	s.used += dirSize(dst)
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
	room, why, err := s.reserve()
	if err != nil {
		return "", false, err
	}
	defer s.release(room)
	id = newID()
	dst := filepath.Join(s.dir, id)
	lim := s.limits
	lim.MaxBytes = room
	if _, err := bundle.Unpack(r, dst, lim); err != nil {
		if errors.Is(err, bundle.ErrTooLarge) {
			return "", false, fmt.Errorf("%w (%s)", err, why)
		}
		return "", false, err
	}
	b, err := bundle.Open(dst)
	if err != nil {
		os.RemoveAll(dst)
		return "", false, err
	}
	c := newCapture(id, b, s)
	size := dirSize(dst)
	// One upload at a time decides whether it is new, so that two copies
	// of one bundle sent at once are not both kept.
	s.addMu.Lock()
	defer s.addMu.Unlock()
	if same, err := s.same(c); err != nil || same != "" {
		os.RemoveAll(dst)
		return same, same != "", err
	}
	s.mu.Lock()
	s.caps[id] = c
	s.used += size
	s.mu.Unlock()
	return id, false, nil
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

// reserve sets aside room for one upload: the per-upload limit, or what
// is left under the quota and on the disk if that is less. why says
// which bound it.
func (s *Store) reserve() (room int64, why string, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	room, why = s.limits.MaxBytes, fmt.Sprintf("the most one capture may take is %s; see serve --max-unpacked", sizeText(s.limits.MaxBytes))
	if left := s.quota - s.used - s.reserved; left < room {
		room, why = left, fmt.Sprintf("the captures take %s of the data directory's quota of %s; delete some, or raise serve --quota", sizeText(s.used), sizeText(s.quota))
	}
	var st syscall.Statfs_t
	if syscall.Statfs(s.dir, &st) == nil {
		if free := int64(st.Bavail)*st.Bsize - minFree - s.reserved; free < room {
			room, why = free, fmt.Sprintf("the disk holding the data directory has %s free, and uploads leave %s", sizeText(int64(st.Bavail)*st.Bsize), sizeText(minFree))
		}
	}
	if room <= 0 {
		return 0, "", fmt.Errorf("%w: %s", ErrQuota, why)
	}
	s.reserved += room
	return room, why, nil
}

func (s *Store) release(room int64) {
	s.mu.Lock()
	s.reserved -= room
	s.mu.Unlock()
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

// Delete removes a capture: it disappears from the store at once, its
// files are removed once the reads in flight on it have finished, and its
// cached analysis is dropped.
func (s *Store) Delete(id string) error {
	s.mu.Lock()
	c := s.caps[id]
	delete(s.caps, id)
	s.mu.Unlock()
	if c == nil {
		return fmt.Errorf("capture %q: %w", id, ErrNotFound)
	}
	c.use.Lock() // wait for readers; no new ones can find c
	defer c.use.Unlock()
	trash := filepath.Join(s.dir, ".deleted-"+id+"-"+newID())
	size := dirSize(c.b.Dir)
	if err := os.Rename(c.b.Dir, trash); err != nil {
		return fmt.Errorf("delete capture %s: %w", id, err)
	}
	s.mu.Lock()
	s.used -= size
	s.mu.Unlock()
	if err := os.RemoveAll(trash); err != nil {
		return fmt.Errorf("delete capture %s: %w", id, err)
	}
	return nil
}
