package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/leakscope/leakscope/ingest"
	"github.com/leakscope/leakscope/ingest/bundle"
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
bundle is not added again; the others are still added.

Each file's time is, strongest first: --at; the file's own clock (a profile's
TimeNanos, a trace's clock snapshots); the manifest of the capture bundle a
raw/ file was taken from; a timestamp in its name (leakscope's raw names
KIND-20261130T115743.321Z.ext, ISO 8601 forms such as 2026-11-30T11:57:43Z or
2026-11-30_11-57-43, Unix seconds or milliseconds); its modification time.
Files that share a time stay separate snapshots in the order given (with a
warning). The manifest records each file's time and where it came from.`, stderr)
	out := fs.String("o", "", "bundle directory to create or add to (required)")
	atFlag := fs.String("at", "", "when the one FILE given was taken (RFC 3339 or Unix seconds; for a trace, when it started)")
	quiet := fs.Bool("q", false, "no progress bars (they are shown only on a terminal anyway)")
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
	var failed int
	for _, path := range files {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		opts := ingest.Options{At: at}
		var bar *progressbar.ProgressBar
		if st, err := os.Stat(path); err == nil && st.Size() > progressThreshold && !*quiet && term.IsTerminal(int(os.Stderr.Fd())) {
			bar = progressbar.DefaultBytes(st.Size(), "ingest "+path)
			opts.Progress = func(read, _ int64) { bar.Set64(read) }
		}
		a, err := ingest.File(*out, path, opts)
		if bar != nil {
			bar.Finish()
		}
		if errors.Is(err, ingest.ErrDuplicate) {
			fmt.Fprintf(stderr, "leakscope: note: %v\n", err)
			continue
		}
		if err != nil {
			failed++
			fmt.Fprintf(stderr, "leakscope: %v\n", err)
			continue
		}
		fmt.Fprintln(stdout, describe(path, a))
		if a.Status == bundle.StatusTruncated {
			fmt.Fprintf(stderr, "leakscope: warning: %s was cut short; its complete part was kept (see leakscope inspect %s)\n", path, *out)
		}
		if a.TimeBasis == bundle.TimeOrder {
			fmt.Fprintf(stderr, "leakscope: warning: %s: %s; rates across these snapshots are not real (give each file its time with --at)\n", path, a.TimeDetail)
		}
	}
	return ingestSummary(failed, len(files), *out)
}

// ingestSummary is the error ending an ingest that failed for some files:
// it says what the bundle holds, and that there is no bundle when none
// was ever written.
func ingestSummary(failed, total int, out string) error {
	if failed == 0 {
		return nil
	}
	if _, err := os.Stat(filepath.Join(out, bundle.ManifestFile)); err != nil {
		return fmt.Errorf("none of the %d files could be ingested; no bundle was written", total)
	}
	if failed == total {
		return fmt.Errorf("none of the %d files could be ingested; the bundle %s is as it was", total, out)
	}
	return fmt.Errorf("%d of %d files not ingested; the bundle %s holds the other %d", failed, total, out, total-failed)
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
