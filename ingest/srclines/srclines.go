// Package srclines snapshots into a bundle the Go source of the functions
// its stack frames name, so that reports quote the code that was built and
// ran, not whatever is on disk when the report is written.
//
// For each distinct (file, function) of the frames outside the Go root it
// reads the file (capture: the target's files at its build paths, also
// under /proc/PID/root; ingest: the files reachable at the frames' paths),
// finds the function's declaration with go/parser and keeps its line range
// and text, with the SHA-256 of the whole file, in the source_code table.
// A file that cannot be read, or that holds no declaration of the
// function, gets a row saying so.
//
// It also indexes the calls of the program's own source into other
// packages (the source_calls table, see calls.go): the module of each
// main package the frames name, once per bundle; and it keeps the
// program's own packages whole (the source_files table, see files.go),
// so that the analysis can read the program as Go.
package srclines

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/ingest/schema"
	"github.com/leakscope/leakscope/internal/gosym"
)

// Limits of one snapshot.
const (
	// maxFile is the largest source file read.
	maxFile = 4 << 20
	// defaultMaxFunctions bounds the functions recorded per call.
	defaultMaxFunctions = 4000
	// defaultMaxText bounds the text recorded per call.
	defaultMaxText = 32 << 20
)

// Options tune [Snapshot].
type Options struct {
	// Roots are directories under which each frame's path is tried first,
	// in order (capture passes /proc/PID/root, where a containerised
	// target's files are); the path itself is tried last.
	Roots []string
	// SourceRoots are checkouts or module caches where a file is looked
	// for when its recorded path cannot be read (a -trimpath build's
	// module@version/file.go, a container's /app/..., another machine's
	// checkout): see [Candidates].
	SourceRoots []string
	// ModCache is the module cache ($GOMODCACHE) where module@version
	// paths are looked for; "" for none.
	ModCache string
	// Source says where the files were read: "capture" or "ingest".
	Source string
	// MaxFunctions and MaxText bound what one call records (0: 4000
	// functions, 32 MiB of text). User code comes before dependencies.
	MaxFunctions int
	MaxText      int64
}

// Stats counts the rows a [Snapshot] wrote, by status, and names the
// first maxMissing functions not kept ("function (file): why").
type Stats struct {
	OK, Changed, Unavailable int
	Missing                  []string
}

// maxMissing bounds the functions Stats names.
const maxMissing = 10

// Add adds the counts of o to st.
func (st *Stats) Add(o Stats) {
	st.OK += o.OK
	st.Changed += o.Changed
	st.Unavailable += o.Unavailable
	for _, m := range o.Missing {
		if len(st.Missing) < maxMissing {
			st.Missing = append(st.Missing, m)
		}
	}
}

// Snapshot appends a source_code row for every (file, function) of the
// bundle's frames that the bundle does not hold yet.
func Snapshot(w *bundle.Writer, mem memory.Allocator, opts Options) (Stats, error) {
	return New(opts).Snapshot(w, mem)
}

// Snapshotter snapshots a bundle's functions again and again as new frames
// arrive (a capture calls it after every round), remembering what it has
// written. It is not safe for concurrent use.
type Snapshotter struct {
	opts  Options
	have  map[[2]string]bool
	files map[string]*file
	text  int64
	n     int
	calls callIndex
	kept  kept
}

// New returns a Snapshotter with the given options.
func New(opts Options) *Snapshotter {
	if opts.MaxFunctions <= 0 {
		opts.MaxFunctions = defaultMaxFunctions
	}
	if opts.MaxText <= 0 {
		opts.MaxText = defaultMaxText
	}
	return &Snapshotter{opts: opts, files: map[string]*file{}}
}

// Snapshot appends a source_code row for every (file, function) of w's
// frames that neither the bundle nor an earlier call holds.
func (s *Snapshotter) Snapshot(w *bundle.Writer, mem memory.Allocator) (Stats, error) {
	var st Stats
	if s.have == nil {
		have, err := recorded(w.Dir(), mem)
		if err != nil {
			return st, err
		}
		s.have = have
	}
	for _, fn := range wanted(w.Frames(), s.have) {
		if s.n >= s.opts.MaxFunctions || s.text >= s.opts.MaxText {
			break
		}
		row := s.row(fn)
		if err := w.Append(row); err != nil {
			return st, err
		}
		s.have[[2]string{fn.file, fn.function}] = true
		st.count(row)
	}
	if err := s.indexCalls(w.Dir(), w.Frames(), func(r schema.SourceCall) error { return w.Append(r) }); err != nil {
		return st, err
	}
	return st, s.keepFiles(w.Dir(), w.Frames(), func(r schema.SourceFile) error { return w.Append(r) })
}

// row reads (once per file) and returns fn's source_code row, counting
// it against the limits.
func (s *Snapshotter) row(fn *funcRef) schema.SourceCode {
	f := s.files[fn.file]
	if f == nil {
		f = readFile(fn.file, Candidates(fn.file, s.opts))
		s.files[fn.file] = f
	}
	row := f.row(fn)
	row.Source = s.opts.Source
	s.text += int64(len(row.Text))
	s.n++
	return row
}

// count adds a row to the counts by status.
func (st *Stats) count(row schema.SourceCode) {
	switch row.Status {
	case schema.SourceOK:
		st.OK++
	case schema.SourceChanged:
		st.Changed++
	default:
		st.Unavailable++
	}
	if row.Status != schema.SourceOK && len(st.Missing) < maxMissing {
		st.Missing = append(st.Missing, fmt.Sprintf("%s (%s): %s", row.Function, row.File, row.Detail))
	}
}

// funcRef is one function to snapshot, with the lines frames name in it.
type funcRef struct {
	file, function string
	lines          []int64
}

// wanted lists the functions of frames outside the Go root that have no
// row yet, user code first, then dependencies (module cache, vendor).
func wanted(frames []bundle.StackFrame, have map[[2]string]bool) []*funcRef {
	roots := goRoots(frames)
	by := map[[2]string]*funcRef{}
	for _, f := range frames {
		k := [2]string{f.File, f.Function}
		if have[k] || !goSource(f.File) || underAny(f.File, roots) || trimmedStd(f.File) {
			continue
		}
		r := by[k]
		if r == nil {
			r = &funcRef{file: f.File, function: f.Function}
			by[k] = r
		}
		r.lines = append(r.lines, f.Line)
	}
	out := make([]*funcRef, 0, len(by))
	for _, r := range by {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool {
		di, dj := isDependency(out[i].file), isDependency(out[j].file)
		if di != dj {
			return !di
		}
		if out[i].file != out[j].file {
			return out[i].file < out[j].file
		}
		return out[i].function < out[j].function
	})
	return out
}

// goSource reports whether a frame's file can be a Go source file of the
// program: a .go file the go command builds (not a hidden one, such as a
// file named ".go").
func goSource(path string) bool {
	base := path[strings.LastIndexAny(path, `/\`)+1:]
	return strings.HasSuffix(base, ".go") && !strings.HasPrefix(base, ".")
}

// goRoots returns the source directories of the Go root: learned from the
// files of runtime frames (…/src/runtime/x.go → …/src/), and this
// program's own.
func goRoots(frames []bundle.StackFrame) []string {
	seen := map[string]bool{}
	var out []string
	add := func(p string) {
		if p != "" && !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	for _, f := range frames {
		if !strings.HasPrefix(f.Function, "runtime.") {
			continue
		}
		if i := strings.LastIndex(f.File, "/src/runtime/"); i >= 0 {
			add(f.File[:i+len("/src/")])
		}
	}
	//lint:ignore SA1019 the Go root leakscope was built with is where this machine's standard library lies (a copied binary finds none there, and reads no standard library)
	add(filepath.ToSlash(filepath.Join(runtime.GOROOT(), "src")) + "/")
	return out
}

// trimmedStd reports a -trimpath build's standard library file
// (runtime/proc.go): a relative path this machine's Go root holds.
func trimmedStd(path string) bool {
	if filepath.IsAbs(path) || strings.Contains(path, "@") {
		return false
	}
	//lint:ignore SA1019 as in goRoots
	_, err := os.Stat(filepath.Join(runtime.GOROOT(), "src", filepath.FromSlash(path)))
	return err == nil
}

func underAny(path string, roots []string) bool {
	for _, r := range roots {
		if strings.HasPrefix(path, r) {
			return true
		}
	}
	return false
}

func isDependency(path string) bool {
	_, _, _, mod := modVersion(path)
	return mod || strings.Contains(path, "/vendor/")
}

// recorded returns the (file, function) pairs the bundle's source_code
// table already holds.
func recorded(dir string, mem memory.Allocator) (map[[2]string]bool, error) {
	have := map[[2]string]bool{}
	b := &bundle.Bundle{Dir: dir}
	err := b.ReadTable(schema.TableSourceCode, mem, func(rec arrow.Record) error {
		files := bundle.NewStrings(rec.Column(rec.Schema().FieldIndices(schema.ColFile)[0]))
		fns := bundle.NewStrings(rec.Column(rec.Schema().FieldIndices(schema.ColFunction)[0]))
		for i := 0; i < int(rec.NumRows()); i++ {
			have[[2]string{files.Value(i), fns.Value(i)}] = true
		}
		return nil
	})
	if err := bundle.Tolerate(err); err != nil {
		return nil, fmt.Errorf("read %s: %w", schema.TableSourceCode, err)
	}
	return have, nil
}

// file is one source file as read: its lines, hash and declarations, or
// why it could not be read.
type file struct {
	path   string
	read   string // where it was read from ("" when it was not)
	lines  []string
	sha    string
	decls  map[string][]decl
	err    string // unavailable: why
	broken string // read but does not parse
}

// decl is a function declaration's line range.
type decl struct{ start, end int }

// readFile reads and parses the file at path from the first of its
// candidate paths that can be read.
func readFile(path string, cands []string) *file {
	f := &file{path: path}
	var data []byte
	var err error
	for _, p := range cands {
		if data, err = readBounded(p); err == nil {
			f.read = p
			break
		}
	}
	if err != nil {
		f.err = fmt.Sprintf("not found at %s", path)
		if len(cands) > 1 {
			f.err += fmt.Sprintf(" or %d other places tried (%v)", len(cands)-1, err)
		} else {
			f.err += fmt.Sprintf(" (%v)", err)
		}
		return f
	}
	sum := sha256.Sum256(data)
	f.sha = hex.EncodeToString(sum[:])
	f.lines = strings.Split(strings.ReplaceAll(string(data), "\r\n", "\n"), "\n")
	fset := token.NewFileSet()
	af, err := parser.ParseFile(fset, path, data, parser.SkipObjectResolution)
	if af == nil {
		f.broken = err.Error()
		return f
	}
	f.decls = map[string][]decl{}
	for _, d := range af.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok {
			continue
		}
		k := fd.Name.Name
		if fd.Recv != nil && len(fd.Recv.List) == 1 {
			k = gosym.BaseTypeName(fd.Recv.List[0].Type) + "." + k
		}
		f.decls[k] = append(f.decls[k], decl{fset.Position(fd.Pos()).Line, fset.Position(fd.End()).Line})
	}
	return f
}

func readBounded(p string) ([]byte, error) {
	st, err := os.Stat(p)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", p)
	}
	if st.Size() > maxFile {
		return nil, fmt.Errorf("%s is %d bytes, more than the %d read", p, st.Size(), maxFile)
	}
	data, err := os.ReadFile(p)
	if err == nil && bytes.IndexByte(data, 0) >= 0 {
		return nil, errors.New(p + " is not text")
	}
	return data, err
}

// row is the source_code row of one function of the file. Only a file
// that declares the function is the program's: of any other (a frame may
// name any path) nothing is kept, not even its hash.
func (f *file) row(fn *funcRef) schema.SourceCode {
	r := schema.SourceCode{File: fn.file, Function: fn.function}
	switch {
	case f.err != "":
		r.Status, r.Detail = schema.SourceUnavailable, f.err
		return r
	case f.broken != "":
		r.Status, r.Detail = schema.SourceChanged, "the file does not parse: "+f.broken
		return r
	}
	d, ok := f.find(fn)
	if !ok {
		r.Status, r.Detail = schema.SourceChanged, fmt.Sprintf("the file has no declaration of %s", fn.function)
		return r
	}
	r.Status, r.FileSHA256 = schema.SourceOK, f.sha
	r.StartLine, r.EndLine = int64(d.start), int64(d.end)
	r.Text = strings.Join(f.lines[d.start-1:min(d.end, len(f.lines))], "\n")
	return r
}

// find picks the declaration of the function: among the declarations
// its symbol may name (a closure inlined into other functions is named
// after each of them, its own declaration last), the one holding most of
// the frames' lines; the first name's first declaration when none holds
// any.
func (f *file) find(fn *funcRef) (decl, bool) {
	var best decl
	found, hits := false, -1
	for _, k := range DeclNames(fn.function) {
		for _, d := range f.decls[k] {
			n := 0
			for _, l := range fn.lines {
				if int(l) >= d.start && int(l) <= d.end {
					n++
				}
			}
			if n > hits {
				best, hits, found = d, n, true
			}
		}
	}
	return best, found
}

// DeclNames returns the names a Go symbol's enclosing declaration may have
// in its file, most likely first: "T.M" for pkg.(*T).M and pkg.T.M, "F"
// for pkg.F, pkg.F.func1 and pkg.F[...]; closures belong to the
// declaration around them. A closure inlined elsewhere is named after
// every function it was inlined through, its own declaration last
// (pkg.(*s).start.(*s).handle.func1: "s.start", "s.handle"); each of
// those names is given.
func DeclNames(symbol string) []string {
	rest := symbol
	if i := strings.LastIndex(rest, "/"); i >= 0 {
		rest = rest[i+1:]
	}
	i := strings.Index(rest, ".")
	if i < 0 {
		return nil
	}
	segs := strings.Split(gosym.StripTypeArgs(rest[i+1:]), ".")
	var out []string
	add := func(n string) {
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	for j := 0; j < len(segs); j++ {
		seg := segs[j]
		switch {
		case strings.HasPrefix(seg, "(") && strings.HasSuffix(seg, ")") && j+1 < len(segs):
			add(strings.TrimPrefix(seg[1:len(seg)-1], "*") + "." + segs[j+1])
			j++
		case gosym.Numbered(seg):
		case j+1 < len(segs) && !gosym.Numbered(segs[j+1]) && !strings.HasPrefix(segs[j+1], "("):
			add(seg + "." + segs[j+1])
			add(seg)
		default:
			add(seg)
		}
	}
	return out
}
