package bundle

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/klauspost/compress/zstd"
	"github.com/leakscope/leakscope/ingest/schema"
)

// Archive formats accepted by [Pack] and recognised by [Unpack].
const (
	FormatTarZstd = "tar.zst"
	FormatTarGzip = "tar.gz"
)

// ErrArchive is wrapped by every error [Unpack] returns for an archive that
// is refused (wrong format, hostile or malformed entries, over the limits,
// or content that is not a readable bundle), as opposed to an I/O failure on
// the local side.
var ErrArchive = errors.New("bad bundle archive")

// ErrTooLarge is wrapped (with [ErrArchive]) by the error for an archive
// that unpacks to more than [Limits.MaxBytes] or holds more than
// [Limits.MaxFiles] entries.
var ErrTooLarge = errors.New("archive too large")

// Limits caps what [Unpack] accepts, so a small archive cannot expand into
// an unbounded amount of disk (an archive bomb).
type Limits struct {
	// MaxBytes is the most unpacked bytes, all files together.
	MaxBytes int64
	// MaxFiles is the most entries (files and directories).
	MaxFiles int
	// Reserve, when set, is asked for room as the files are written, in
	// steps of at most reserveStep beyond the bytes received (never for
	// what a tar header only declares); an error refuses the archive
	// (wrapped with ErrTooLarge). The store's quota grows an upload's
	// reservation with it, so a slow upload holds what it has sent.
	Reserve func(n int64) error
}

// DefaultLimits are the limits used when a zero Limits is passed.
var DefaultLimits = Limits{MaxBytes: 4 << 30, MaxFiles: 100_000}

// maxManifestBytes caps manifest.json, which is read whole.
const maxManifestBytes = 16 << 20

// FormatFromName returns the archive format implied by a file name
// (".tar.zst", ".tzst", ".tar.gz", ".tgz"), or "" when none is.
func FormatFromName(name string) string {
	switch n := strings.ToLower(name); {
	case strings.HasSuffix(n, ".tar.zst"), strings.HasSuffix(n, ".tzst"):
		return FormatTarZstd
	case strings.HasSuffix(n, ".tar.gz"), strings.HasSuffix(n, ".tgz"):
		return FormatTarGzip
	}
	return ""
}

// Pack writes the bundle in dir to w as a tar archive compressed in format
// ([FormatTarZstd] or [FormatTarGzip]). Entries sit under one top-level
// directory named after dir (NAME.lsb/...), like `tar -C parent -c NAME.lsb`.
// Only the manifest, known tables and the files under raw/ the manifest
// lists are packed; a writer's temporary files, and a raw file a killed
// capture left half-written, are left out.
func Pack(dir string, w io.Writer, format string) error {
	if _, err := ReadManifest(dir); err != nil {
		return fmt.Errorf("pack %s: %w", dir, err)
	}
	var cw io.WriteCloser
	switch format {
	case FormatTarZstd:
		zw, err := zstd.NewWriter(w)
		if err != nil {
			return fmt.Errorf("pack: %w", err)
		}
		cw = zw
	case FormatTarGzip:
		cw = gzip.NewWriter(w)
	default:
		return fmt.Errorf("pack: unknown archive format %q (want %s or %s)", format, FormatTarZstd, FormatTarGzip)
	}
	top := filepath.Base(filepath.Clean(dir))
	if top == "." || top == "/" || top == ".." {
		top = "bundle.lsb"
	}
	tw := tar.NewWriter(cw)
	err := packEntries(dir, top, tw)
	if cerr := tw.Close(); err == nil {
		err = cerr
	}
	if cerr := cw.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("pack %s: %w", dir, err)
	}
	return nil
}

func packEntries(dir, top string, tw *tar.Writer) error {
	names, err := packList(dir)
	if err != nil {
		return err
	}
	now := time.Now()
	dirs := []string{top + "/"}
	if _, err := os.Stat(filepath.Join(dir, RawDir)); err == nil {
		dirs = append(dirs, top+"/"+RawDir+"/")
	}
	for _, d := range dirs {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: d, Mode: 0o755, ModTime: now, Format: tar.FormatPAX}); err != nil {
			return err
		}
	}
	for _, name := range names {
		if err := packFile(tw, filepath.Join(dir, filepath.FromSlash(name)), top+"/"+name); err != nil {
			return err
		}
	}
	return nil
}

// packList returns the bundle-relative names Pack includes, sorted.
func packList(dir string) ([]string, error) {
	m, err := ReadManifest(dir)
	if err != nil {
		return nil, err
	}
	listed := m.rawNames()
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		if e.Type().IsRegular() && allowedRootFile(e.Name()) {
			names = append(names, e.Name())
		}
	}
	raw, err := os.ReadDir(filepath.Join(dir, RawDir))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	for _, e := range raw {
		if e.Type().IsRegular() && validRawName(e.Name()) && listed[e.Name()] {
			names = append(names, RawDir+"/"+e.Name())
		}
	}
	sort.Strings(names)
	return names, nil
}

func packFile(tw *tar.Writer, src, name string) error {
	f, err := os.Open(src)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	hdr := &tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: 0o644, Size: st.Size(), ModTime: st.ModTime(), Format: tar.FormatPAX}
	if err := tw.WriteHeader(hdr); err != nil {
		return err
	}
	// A file still growing (a live capture) is cut at the size in the header.
	n, err := io.Copy(tw, io.LimitReader(f, st.Size()))
	if err != nil {
		return err
	}
	if n != st.Size() {
		return fmt.Errorf("%s shrank while packing (%d of %d bytes)", src, n, st.Size())
	}
	return nil
}

// allowedRootFile reports whether name may sit at the top of a bundle.
func allowedRootFile(name string) bool {
	if name == ManifestFile {
		return true
	}
	table, ok := strings.CutSuffix(name, ".arrow")
	return ok && isTable(table)
}

// validRawName reports whether name is an acceptable raw artifact name: a
// plain file name without separators, not hidden, printable.
func validRawName(name string) bool {
	if name == "" || len(name) > 255 || strings.HasPrefix(name, ".") {
		return false
	}
	for _, r := range name {
		if r < 0x20 || r == 0x7f || r == '/' || r == '\\' || r == ':' {
			return false
		}
	}
	return true
}

// Unpack reads a bundle archive (.tar.zst or .tar.gz, detected from its
// first bytes) from r and installs it as the bundle directory dst, which
// must not exist. It unpacks into a temporary directory beside dst, checks
// the result is a readable bundle ([Validate]) and only then renames it to
// dst, so on any error nothing is left behind.
//
// Refused: entries with absolute paths or "..", symlinks, hard links,
// devices and other special files, duplicate or unknown files, and archives
// over lim (zero fields take [DefaultLimits]). Refusals wrap [ErrArchive].
func Unpack(r io.Reader, dst string, lim Limits) (Manifest, error) {
	if lim.MaxBytes <= 0 {
		lim.MaxBytes = DefaultLimits.MaxBytes
	}
	if lim.MaxFiles <= 0 {
		lim.MaxFiles = DefaultLimits.MaxFiles
	}
	if _, err := os.Lstat(dst); err == nil {
		return Manifest{}, fmt.Errorf("unpack: %s already exists", dst)
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dst), ".unpack-*")
	if err != nil {
		return Manifest{}, fmt.Errorf("unpack: %w", err)
	}
	ok := false
	defer func() {
		if !ok {
			os.RemoveAll(tmp)
		}
	}()
	if err := extract(r, tmp, lim); err != nil {
		return Manifest{}, err
	}
	m, err := Validate(tmp)
	if err != nil {
		// Name files inside the archive, not where the server unpacks it.
		msg := strings.ReplaceAll(err.Error(), tmp+string(filepath.Separator), "")
		return Manifest{}, fmt.Errorf("%w: %s", ErrArchive, strings.ReplaceAll(msg, tmp, "the archive"))
	}
	if err := os.Rename(tmp, dst); err != nil {
		return Manifest{}, fmt.Errorf("unpack: install %s: %w", dst, err)
	}
	ok = true
	return m, nil
}

// decompress detects the compression of r from its magic bytes.
func decompress(r io.Reader) (io.Reader, func(), error) {
	br := bufio.NewReader(r)
	magic, err := br.Peek(4)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: archive is empty or shorter than 4 bytes", ErrArchive)
	}
	switch {
	case bytes.Equal(magic, []byte{0x28, 0xb5, 0x2f, 0xfd}):
		zr, err := zstd.NewReader(br,
			zstd.WithDecoderConcurrency(1),
			zstd.WithDecoderLowmem(true),
			zstd.WithDecoderMaxWindow(64<<20),
			zstd.WithDecoderMaxMemory(64<<20))
		if err != nil {
			return nil, nil, fmt.Errorf("%w: zstd: %w", ErrArchive, err)
		}
		return zr, zr.Close, nil
	case magic[0] == 0x1f && magic[1] == 0x8b:
		gr, err := gzip.NewReader(br)
		if err != nil {
			return nil, nil, fmt.Errorf("%w: gzip: %w", ErrArchive, err)
		}
		return gr, func() { gr.Close() }, nil
	}
	return nil, nil, fmt.Errorf("%w: not a .tar.zst or .tar.gz archive (starts with % x)", ErrArchive, magic)
}

// extract unpacks the archive into the empty directory dir.
func extract(r io.Reader, dir string, lim Limits) error {
	dr, closeFn, err := decompress(r)
	if err != nil {
		return err
	}
	defer closeFn()
	tr := tar.NewReader(dr)
	x := &extractor{dir: dir, lim: lim, prefixed: -1, seen: map[string]bool{}}
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("%w: read entry %d: %w", ErrArchive, x.files+1, err)
		}
		if hdr.Typeflag == tar.TypeXGlobalHeader {
			continue
		}
		if err := x.entry(hdr, tr); err != nil {
			return err
		}
	}
	if !x.seen[ManifestFile] {
		return fmt.Errorf("%w: no %s in the archive", ErrArchive, ManifestFile)
	}
	return nil
}

// extractor is what extract learns while it walks an archive's entries.
type extractor struct {
	dir      string // where the bundle is unpacked
	lim      Limits
	prefix   string // the archive's top-level directory, if any
	prefixed int    // -1 unknown, 0 entries at root, 1 under prefix
	files    int    // entries counted against lim.MaxFiles
	total    int64  // bytes written, counted against lim.MaxBytes
	seen     map[string]bool
	rawMade  bool
}

// entry checks one archive entry and, for a bundle file, writes it from r.
func (x *extractor) entry(hdr *tar.Header, r io.Reader) error {
	x.files++
	if x.files > x.lim.MaxFiles {
		return fmt.Errorf("%w: %w: more than %d entries", ErrArchive, ErrTooLarge, x.lim.MaxFiles)
	}
	name, err := x.bundleName(hdr)
	if err != nil || name == "" {
		return err
	}
	switch hdr.Typeflag {
	case tar.TypeDir:
		if name != RawDir {
			return fmt.Errorf("%w: %q: unexpected directory (a bundle holds only %s/)", ErrArchive, hdr.Name, RawDir)
		}
		return x.makeRaw()
	case tar.TypeReg: // (tar.Reader reads the old TypeRegA as TypeReg)
	case tar.TypeSymlink, tar.TypeLink:
		return fmt.Errorf("%w: %q is a link (to %q); links are not allowed", ErrArchive, hdr.Name, hdr.Linkname)
	default:
		return fmt.Errorf("%w: %q is a special file (tar type %q); only regular files are allowed", ErrArchive, hdr.Name, string(hdr.Typeflag))
	}
	if err := x.admitFile(hdr, name); err != nil {
		return err
	}
	var w func(f *os.File) io.Writer
	if x.lim.Reserve != nil {
		w = func(f *os.File) io.Writer { return &reserving{w: f, reserve: x.lim.Reserve, left: hdr.Size} }
	}
	n, err := writeEntry(filepath.Join(x.dir, filepath.FromSlash(name)), r, hdr.Size, w)
	x.total += n
	var noRoom *roomError
	if errors.As(err, &noRoom) {
		return fmt.Errorf("%w: no room for %q (%s declared, %s received): %w", ErrTooLarge, hdr.Name, sizeText(hdr.Size), sizeText(n), noRoom.err)
	}
	if err != nil {
		return fmt.Errorf("%w: %q: %w", ErrArchive, hdr.Name, err)
	}
	return nil
}

// reserveStep is the most room an upload asks for beyond what it has
// received.
const reserveStep = 1 << 20

// reserving asks for room before it writes, a step at a time, never more
// than the entry's declared size.
type reserving struct {
	w       io.Writer
	reserve func(int64) error
	granted int64 // room asked for and not yet written
	left    int64 // of the entry's declared size, not yet asked for
}

// roomError is a refusal of room.
type roomError struct{ err error }

func (e *roomError) Error() string { return e.err.Error() }

func (r *reserving) Write(p []byte) (int, error) {
	if need := int64(len(p)) - r.granted; need > 0 {
		step := max(need, min(reserveStep, r.left))
		if err := r.reserve(step); err != nil {
			return 0, &roomError{err}
		}
		r.granted += step
		r.left -= step
	}
	n, err := r.w.Write(p)
	r.granted -= int64(n)
	return n, err
}

// bundleName returns the entry's cleaned name inside the bundle, without the
// archive's top-level directory (which the first entry decides), or "" for
// the archive root or that top directory itself.
func (x *extractor) bundleName(hdr *tar.Header) (string, error) {
	name, err := entryName(hdr.Name)
	if err != nil || name == "" {
		return name, err // "" is "." or "./"
	}
	first, rest, _ := strings.Cut(name, "/")
	if x.prefixed < 0 {
		if first == RawDir || allowedRootFile(first) {
			x.prefixed = 0
		} else {
			x.prefixed, x.prefix = 1, first
		}
	}
	if x.prefixed == 0 {
		return name, nil
	}
	if first != x.prefix {
		return "", fmt.Errorf("%w: %q is outside the archive's top directory %q", ErrArchive, hdr.Name, x.prefix)
	}
	if rest == "" && hdr.Typeflag != tar.TypeDir {
		return "", fmt.Errorf("%w: %q: top-level entry is not a directory", ErrArchive, hdr.Name)
	}
	return rest, nil
}

// admitFile refuses a regular file that is not a bundle file, appears twice
// or would take the archive over its limits, and makes raw/ for a raw
// artifact.
func (x *extractor) admitFile(hdr *tar.Header, name string) error {
	dirPart, base, inRaw := strings.Cut(name, "/")
	switch {
	case !inRaw && allowedRootFile(name):
	case inRaw && dirPart == RawDir && validRawName(base):
		if err := x.makeRaw(); err != nil {
			return err
		}
	default:
		return fmt.Errorf("%w: %q is not a bundle file (expected %s, TABLE.arrow or %s/NAME)", ErrArchive, hdr.Name, ManifestFile, RawDir)
	}
	if x.seen[name] {
		return fmt.Errorf("%w: %q appears twice", ErrArchive, hdr.Name)
	}
	x.seen[name] = true
	if hdr.Size < 0 || hdr.Size > x.lim.MaxBytes-x.total {
		return fmt.Errorf("%w: %w: unpacked, it holds more than %s (at %q)", ErrArchive, ErrTooLarge, sizeText(x.lim.MaxBytes), hdr.Name)
	}
	if name == ManifestFile && hdr.Size > maxManifestBytes {
		return fmt.Errorf("%w: %s is %d bytes (limit %d)", ErrArchive, ManifestFile, hdr.Size, maxManifestBytes)
	}
	return nil
}

// makeRaw creates the bundle's raw/ directory the first time it is needed.
func (x *extractor) makeRaw() error {
	if x.rawMade {
		return nil
	}
	if err := os.Mkdir(filepath.Join(x.dir, RawDir), 0o755); err != nil {
		return fmt.Errorf("unpack: %w", err)
	}
	x.rawMade = true
	return nil
}

// entryName cleans a tar entry name and refuses absolute or escaping paths.
// It returns "" for the archive root.
func entryName(raw string) (string, error) {
	if raw == "" || strings.ContainsRune(raw, 0) || strings.Contains(raw, `\`) {
		return "", fmt.Errorf("%w: bad entry name %q", ErrArchive, raw)
	}
	if strings.HasPrefix(raw, "/") || (len(raw) >= 2 && raw[1] == ':') {
		return "", fmt.Errorf("%w: %q is an absolute path", ErrArchive, raw)
	}
	for _, el := range strings.Split(raw, "/") {
		if el == ".." {
			return "", fmt.Errorf("%w: %q escapes the bundle (path traversal)", ErrArchive, raw)
		}
	}
	name := path.Clean(raw)
	if name == "." {
		return "", nil
	}
	return name, nil
}

// writeEntry creates path (which must not exist) with exactly size bytes
// from r, written through wrap(f) when wrap is set.
func writeEntry(path string, r io.Reader, size int64, wrap func(*os.File) io.Writer) (int64, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return 0, err
	}
	var w io.Writer = f
	if wrap != nil {
		w = wrap(f)
	}
	n, err := io.Copy(w, io.LimitReader(r, size))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil && n != size {
		err = fmt.Errorf("archive truncated: %d of %d bytes", n, size)
	}
	return n, err
}

func isTable(name string) bool {
	for _, t := range schema.TableNames {
		if t == name {
			return true
		}
	}
	return false
}

// Validate checks that dir holds a readable bundle: a supported manifest,
// and tables whose columns match the schema and whose batches all decode
// (a tail cut short, as a killed writer leaves it, is accepted). Stray
// files are not checked here; [Unpack] refuses them before.
func Validate(dir string) (m Manifest, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%s: corrupt bundle: %v", dir, r)
		}
	}()
	b, err := Open(dir)
	if err != nil {
		return Manifest{}, err
	}
	mem := memory.NewGoAllocator()
	for _, table := range schema.TableNames {
		// Reading checks the schema, every length against the file and
		// the memory budget, and every batch's buffers; a tail cut short,
		// as a killed writer leaves it, is accepted.
		err := Tolerate(b.ReadTable(table, mem, func(arrow.Record) error { return nil }))
		if err != nil {
			return Manifest{}, fmt.Errorf("table %s: %w", table, err)
		}
	}
	if err := b.Frames(mem, func(schema.Frame) {}); err != nil {
		return Manifest{}, fmt.Errorf("table %s: %w", schema.TableFrames, err)
	}
	if err := b.Stacks(mem, func(schema.Stack) {}); err != nil {
		return Manifest{}, fmt.Errorf("table %s: %w", schema.TableStacks, err)
	}
	return b.Manifest, nil
}

// checkSchema requires got, without the columns its table no longer has
// ([schema.Removed]), to start with the columns of want, by name and
// type, in order (readers may take columns by position; extra columns may
// follow). Columns added to the table later ([schema.Added]) may be
// missing from the end of an older bundle's table.
func checkSchema(got, want *arrow.Schema) error {
	got = withoutRemoved(got, schema.TableOf(want))
	if n := got.NumFields(); n < want.NumFields() && !schema.Added(want.Field(n)) {
		return fmt.Errorf("has %d columns, want at least %d", got.NumFields(), want.NumFields())
	}
	for i, wf := range want.Fields() {
		if i >= got.NumFields() {
			break
		}
		gf := got.Field(i)
		if gf.Name != wf.Name || !arrow.TypeEqual(gf.Type, wf.Type) {
			return fmt.Errorf("column %d is %s %s, want %s %s", i, gf.Name, gf.Type, wf.Name, wf.Type)
		}
	}
	return nil
}
