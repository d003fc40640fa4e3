package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/leakscope/leakscope/ingest"
	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/ingest/srclines"
	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// progressThreshold is the file size above which ingest shows a progress
// bar.
const progressThreshold = 16 << 20

func runIngest(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("ingest", "ingest FILE... -o BUNDLE",
		`Adds pprof profiles (any Go runtime profile; protobuf or the legacy forms
pprof reads), goroutine dumps (/debug/pprof/goroutine?debug=2), crash
tracebacks (panic, fatal error, SIGQUIT at any GOTRACEBACK) and race-detector
reports — also anywhere in a log, in container-runtime log lines (CRI, Docker
json-file, kubectl --timestamps) or go test output — and Go execution traces
to a bundle. gzip and zstd files are decompressed first. Each file's kind is
detected from its content. The bundle is created if missing; an existing
bundle keeps what it has. Each file is added in one atomic step: a file that
cannot be read, or a kill, leaves the bundle as it was; a file already in the
bundle is not added again; the others are still added. With -o NAME.tar.zst
(or .tar.gz) the bundle is that archive: created, or unpacked, added to and
packed again.

Each file's time is, strongest first: --at; the file's own clock (a profile's
TimeNanos, a trace's clock snapshots); the manifest of the capture bundle a
raw/ file was taken from; a timestamp in its name (leakscope's raw names
KIND-20261130T115743.321Z.ext, ISO 8601 forms such as 2026-11-30T11:57:43Z or
2026-11-30_11-57-43, Unix seconds or milliseconds); its modification time.
Files that share a time stay separate snapshots in the order given (with a
warning). The manifest records each file's time and where it came from.

The source of the functions the frames name is kept in the bundle, read where
the frames say; a path that cannot be read there (a -trimpath build's
module@version/file.go or example.com/svc/file.go, a container's /app/...,
another machine's checkout) is looked for in the module cache ($GOMODCACHE)
and under each --source-root. ingest says which functions it could not find:
their selects and receives cannot be judged stuck.`, stderr)
	out := fs.String("o", "", "bundle to create or add to: a directory, or an archive NAME.tar.zst (required)")
	atFlag := fs.String("at", "", "when the one FILE given was taken (RFC 3339 or Unix seconds; for a trace, when it started)")
	quiet := fs.Bool("q", false, "no progress bars (they are shown only on a terminal anyway)")
	roots := sourceRootFlag(fs)
	files, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if *out == "" {
		return usagef("ingest: -o BUNDLE is required")
	}
	if len(files) == 0 {
		return usagef("ingest: no input files given")
	}
	var at time.Time
	if *atFlag != "" {
		if len(files) != 1 {
			return usagef("ingest: --at gives the time of one file; ingest files with different times one by one")
		}
		if at, err = ingest.ParseTime(*atFlag); err != nil {
			return usagef("ingest: --at: %v", err)
		}
	}
	target, finish, err := ingestTarget(*out)
	if err != nil {
		return err
	}
	var src srclines.Stats
	opts := ingest.Options{At: at, SourceRoots: *roots, OnSource: func(st srclines.Stats) { src.Add(st) }}
	failed, err := ingestFiles(ctx, target, *out, files, opts, *quiet, stdout, stderr)
	sourceSummary(src, stdout, stderr)
	written := exists(filepath.Join(target, bundle.ManifestFile))
	if ferr := finish(failed < len(files)); err == nil {
		err = ferr
	}
	if err != nil {
		return err
	}
	return ingestSummary(failed, len(files), *out, written)
}

// ingestSummary is the error ending an ingest that failed for some files:
// it says what the bundle holds, and that there is no bundle when none
// was ever written.
func ingestSummary(failed, total int, out string, written bool) error {
	if failed == 0 {
		return nil
	}
	if !written {
		return fmt.Errorf("none of the %d files could be ingested; no bundle was written", total)
	}
	if failed == total {
		return fmt.Errorf("none of the %d files could be ingested; the bundle %s is as it was", total, out)
	}
	return fmt.Errorf("%d of %d files not ingested; the bundle %s holds the other %d", failed, total, out, total-failed)
}

// bundleInput says why path, a bundle rather than a file to ingest,
// cannot be an input; "" for any other path.
func bundleInput(path string) string {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		if _, err := bundle.ReadManifest(path); err == nil {
			return fmt.Sprintf("%s is a bundle already: give it to report, inspect or serve as it is, or ingest the files under its %s/", path, bundle.RawDir)
		}
		return fmt.Sprintf("%s is a directory; give the files in it", path)
	}
	if bundle.FormatFromName(path) != "" {
		return fmt.Sprintf("%s is a bundle archive: give it to report, inspect or upload as it is, or to -o to add files to it", path)
	}
	return ""
}

// ingestTarget returns the bundle directory to ingest into for -o out: out
// itself, or for an archive name a temporary directory beside it holding
// the archive's bundle (unpacked when the archive exists). finish packs it
// back into the archive when changed is true, and removes it.
func ingestTarget(out string) (dir string, finish func(changed bool) error, err error) {
	if bundle.FormatFromName(out) == "" {
		return out, func(bool) error { return nil }, nil
	}
	tmp, err := os.MkdirTemp(filepath.Dir(out), ".leakscope-ingest-")
	if err != nil {
		return "", nil, err
	}
	dir = filepath.Join(tmp, archiveStem(out)+".lsb")
	if exists(out) {
		f, err := os.Open(out)
		if err != nil {
			os.RemoveAll(tmp)
			return "", nil, err
		}
		_, err = bundle.Unpack(f, dir, bundle.Limits{})
		f.Close()
		if err != nil {
			os.RemoveAll(tmp)
			return "", nil, fmt.Errorf("-o %s: %w", out, err)
		}
	}
	return dir, func(changed bool) error {
		defer os.RemoveAll(tmp)
		if !changed {
			return nil
		}
		return writeArchive(dir, out)
	}, nil
}

// ingestFiles adds each file to the bundle in dir (named out to the user),
// at time at when it is not zero, and returns how many could not be added.
func ingestFiles(ctx context.Context, dir, out string, files []string, base ingest.Options, quiet bool, stdout, stderr io.Writer) (int, error) {
	var failed int
	for _, path := range files {
		if ctx.Err() != nil {
			return failed, ctx.Err()
		}
		if why := bundleInput(path); why != "" {
			failed++
			printf(stderr, "leakscope: %s\n", why)
			continue
		}
		opts := base
		var bar *progressbar.ProgressBar
		if st, err := os.Stat(path); err == nil && st.Size() > progressThreshold && !quiet && term.IsTerminal(int(os.Stderr.Fd())) {
			bar = progressbar.DefaultBytes(st.Size(), "ingest "+path)
			opts.Progress = func(read, _ int64) { bar.Set64(read) }
		}
		a, err := ingest.File(dir, path, opts)
		if bar != nil {
			bar.Finish()
		}
		if errors.Is(err, ingest.ErrDuplicate) {
			printf(stderr, "leakscope: note: %v\n", err)
			continue
		}
		if err != nil {
			failed++
			printf(stderr, "leakscope: %v\n", err)
			continue
		}
		printLine(stdout, describe(path, a))
		if a.TimeBasis == bundle.TimeOrder {
			printf(stderr, "leakscope: warning: %s: %s; rates across these snapshots are not real (give each file its time with --at)\n", path, a.TimeDetail)
		}
		if a.Status == bundle.StatusTruncated {
			printf(stderr, "leakscope: warning: %s was cut short; its complete part was kept (see leakscope inspect %s)\n", path, out)
		}
	}
	return failed, nil
}

// sourceRootFlag adds the repeatable --source-root flag to fs.
func sourceRootFlag(fs *flag.FlagSet) *[]string {
	roots := new([]string)
	fs.Func("source-root", "a checkout or module cache `DIR` where the frames' source is looked for when the paths they name\ncannot be read (a -trimpath build, a container, another machine); repeatable", func(d string) error {
		if st, err := os.Stat(d); err != nil || !st.IsDir() {
			return fmt.Errorf("%s is not a directory", d)
		}
		*roots = append(*roots, d)
		return nil
	})
	return roots
}

// sourceSummary says what source ingest kept for the frames' functions,
// and warns when some could not be found and what that costs.
func sourceSummary(st srclines.Stats, stdout, stderr io.Writer) {
	total := st.OK + st.Changed + st.Unavailable
	if total == 0 {
		return
	}
	printf(stdout, "source: %d of %d functions the frames name kept\n", st.OK, total)
	if st.OK == total {
		return
	}
	what := "found only in part"
	if st.OK == 0 {
		what = "missing"
	}
	list := strings.Join(st.Missing, "; ")
	if more := total - st.OK - len(st.Missing); more > 0 {
		list += fmt.Sprintf("; and %d more", more)
	}
	printf(stderr, "leakscope: warning: source %s: %d functions not kept (%s); selects and receives in them cannot be judged stuck, and ticker or stopped-timer patterns not named (give the checkout or module cache with --source-root DIR)\n", what, total-st.OK, list)
}

// describe says in one line what ingest made of a file.
func describe(path string, a bundle.Artifact) string {
	what := a.Kind
	if a.Profile != "" {
		what = a.Profile + " profile"
	}
	switch a.Kind {
	case "dump":
		what = "goroutine dump"
	case "trace":
		what = "execution trace"
	}
	s := fmt.Sprintf("%s: %s, %d rows, at %s (%s)", path, what, a.Rows, a.Time.UTC().Format("2006-01-02T15:04:05.000Z"), a.TimeBasis)
	switch {
	case a.Status == bundle.StatusTruncated:
		s += " (truncated: " + a.Detail + ")"
	case a.Detail != "":
		s += " (note: " + a.Detail + ")"
	}
	return s
}
