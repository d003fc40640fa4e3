package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/leakscope/leakscope/analysis"
	"github.com/leakscope/leakscope/analysis/report"
	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/ingest/schema"
	"github.com/leakscope/leakscope/ingest/srclines"
)

// failOnError reports that a suspect reached the --fail-on score; it makes
// the process exit 1 after the report is written.
type failOnError struct {
	id    string
	score float64
	limit float64
}

func (e failOnError) Error() string {
	return fmt.Sprintf("suspect %s scores %.1f, at or above --fail-on %g", e.id, e.score, e.limit)
}

// reportArgs holds the parsed, validated command line of `leakscope report`.
type reportArgs struct {
	bundle     string
	format     string
	postmortem bool
	limit      float64 // --fail-on score; below 0 when not given
	out        string
	rulesFile  string
	minScore   float64
	images     string
	userCode   string
	roots      []string
	timeout    time.Duration
	maxHeap    byteSize
}

// toFile reports whether the report goes to a file rather than standard output.
func (a reportArgs) toFile() bool { return a.out != "" && a.out != "-" }

func runReport(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	a, err := parseReportArgs(args, stderr)
	if err != nil {
		return err
	}
	rules, err := analysis.LoadRules(a.rulesFile)
	if err != nil {
		return err
	}
	dir, cleanup, err := openBundleDir(a.bundle)
	if err != nil {
		return err
	}
	defer cleanup()
	b, err := bundle.Open(dir)
	if err != nil {
		return err
	}
	mem := memory.DefaultAllocator
	rep, err := analyseForReport(ctx, a, rules, b, mem)
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := writeReport(a, rep, report.Options{Postmortem: a.postmortem, Bundle: b, Mem: mem, Images: a.images}, stdout); err != nil {
		return err
	}
	return failOn(rep, a.limit)
}

// parseReportArgs defines the flags of `leakscope report`, parses args and
// checks the values, returning a usage error for any that is wrong.
func parseReportArgs(args []string, stderr io.Writer) (reportArgs, error) {
	fs := newFlagSet("report", "report BUNDLE [--format md|html|json] [--postmortem] [--fail-on SCORE] [--images text|files|inline] [--rules FILE] [-o FILE]",
		"Analyses a bundle (a directory, or a .tar.zst/.tar.gz archive of one) for\n"+
			"goroutine and heap leaks and writes the leak report, or with --postmortem a\n"+
			"postmortem write-up. The json format is the stable contract described in\n"+
			"docs/DESIGN.md. With --fail-on, exits 1 when a suspect reaches that score\n"+
			"(0-100), after writing the report. Markdown is text to paste into an\n"+
			"incident document (charts as tables with sparklines); with -o FILE.md its\n"+
			"charts and flame graphs are also written beside it as FILE-NAME.svg and\n"+
			"linked (--images says otherwise).", stderr)
	var a reportArgs
	fs.StringVar(&a.format, "format", "md", "output format: md, html or json")
	fs.BoolVar(&a.postmortem, "postmortem", false, "write a postmortem instead of a report")
	failOn := fs.String("fail-on", "", "exit 1 when a suspect's score is at least `SCORE` (0-100)")
	fs.StringVar(&a.out, "o", "", "write to `FILE` instead of standard output")
	fs.StringVar(&a.rulesFile, "rules", "", "extra leak rules `FILE` (JSON), tried before the built-in ones; default $"+analysis.RulesEnv)
	fs.Float64Var(&a.minScore, "min-score", 0, "drop suspects scoring below this (0: the default threshold)")
	fs.StringVar(&a.images, "images", "", "how a Markdown report carries charts and flame graphs: `MODE` text (tables and sparklines only),\nfiles (also SVG files beside -o FILE.md: FILE-NAME.svg) or inline (also embedded as data URIs);\ndefault files with -o, text on standard output")
	fs.StringVar(&a.userCode, "user-code", "", "comma-separated `PREFIXES` of code you own besides package main and the main module\n(import paths like github.com/acme/platform, or source directories starting with /); default $"+analysis.UserCodeEnv)
	roots := sourceRootFlag(fs)
	fs.DurationVar(&a.timeout, "timeout", analysis.DefaultTimeout, "stop the analysis after `DURATION` and say so (0: no limit)")
	a.maxHeap = analysis.DefaultMaxHeap
	fs.Var(&a.maxHeap, "max-heap", "stop the analysis when its heap grows past `SIZE` and say so (suffixes K, M, G, T; 0: no limit)")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return a, err
	}
	if len(pos) != 1 {
		return a, usagef("report: give exactly one bundle")
	}
	a.bundle, a.roots = pos[0], *roots
	switch a.format {
	case "md", "markdown", "html", "json":
	default:
		return a, usagef("report: --format must be md, html or json, not %q", a.format)
	}
	a.limit = -1
	if *failOn != "" {
		a.limit, err = strconv.ParseFloat(*failOn, 64)
		if err != nil || !validScore(a.limit) {
			return a, usagef("report: --fail-on wants a score from 0 to 100, not %q", *failOn)
		}
	}
	switch a.images {
	case "", report.ImagesText, report.ImagesInline:
	case report.ImagesFiles:
		if !a.toFile() {
			return a, usagef("report: --images files writes the images beside the report: give -o FILE.md")
		}
	default:
		return a, usagef("report: --images must be text, files or inline, not %q", a.images)
	}
	if !validScore(a.minScore) {
		return a, usagef("report: --min-score wants a score from 0 to 100, not %g", a.minScore)
	}
	return a, nil
}

// analyseForReport analyses bundle b with the rules given and the
// threshold, user code and source roots of the command line.
func analyseForReport(ctx context.Context, a reportArgs, rules []analysis.Rule, b *bundle.Bundle, mem memory.Allocator) (*analysis.Report, error) {
	var source []schema.SourceCode
	var calls []schema.SourceCall
	var err error
	if len(a.roots) > 0 {
		// The bundle stays as it is: the source found is the analysis's
		// for this report only.
		opts := srclines.Options{Source: "report", SourceRoots: a.roots, ModCache: srclines.DefaultModCache()}
		if source, _, err = srclines.ForBundle(b, mem, opts); err != nil {
			return nil, fmt.Errorf("read source for %s: %w", a.bundle, err)
		}
		if calls, err = srclines.CallsForBundle(b, mem, opts); err != nil {
			return nil, fmt.Errorf("index the program's calls for %s: %w", a.bundle, err)
		}
	}
	opts := analysis.Options{Rules: rules, MinScore: a.minScore, UserCode: splitList(a.userCode), Source: source, SourceCalls: calls,
		Timeout: noLimit(a.timeout), MaxHeap: int64(noLimit(a.maxHeap))}
	rep, err := analysis.AnalyzeContext(ctx, b, mem, opts)
	if err != nil {
		return nil, fmt.Errorf("analyse %s: %w", a.bundle, err)
	}
	return rep, nil
}

// noLimit maps a flag's 0 (no limit) to the analysis's -1.
func noLimit[T ~int64](v T) T {
	if v == 0 {
		return -1
	}
	return v
}

// writeReport writes rep in the chosen format to -o FILE or to stdout;
// a Markdown file gets its images beside it unless --images says otherwise.
// An error writing the report says so; one creating the file is as is.
func writeReport(a reportArgs, rep *analysis.Report, opts report.Options, stdout io.Writer) error {
	w := stdout
	var f *os.File
	if a.toFile() {
		var err error
		if f, err = os.Create(a.out); err != nil {
			return err
		}
		w = f
	}
	if opts.Images == "" && f != nil {
		opts.Images = report.ImagesFiles
	}
	if opts.Images == report.ImagesFiles {
		opts.ImageFile = imagesBeside(a.out)
	}
	var err error
	switch a.format {
	case "json":
		err = report.JSON(w, rep)
	case "html":
		err = report.HTML(w, rep, opts)
	default:
		err = report.Markdown(w, rep, opts)
	}
	if f != nil {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	return nil
}

// failOn returns a failOnError for the first suspect scoring at least
// limit, and nil when none does or limit is below 0 (no --fail-on).
func failOn(rep *analysis.Report, limit float64) error {
	if limit < 0 {
		return nil
	}
	for _, s := range rep.Suspects {
		if s.Score >= limit {
			return failOnError{s.ID, s.Score, limit}
		}
	}
	return nil
}

// splitList splits a comma-separated flag value, dropping empty items.
func splitList(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// validScore reports whether v is a suspect score (0 to 100); NaN is not.
func validScore(v float64) bool { return v >= 0 && v <= 100 }

// imagesBeside writes the images of the Markdown file md beside it, as
// md's name without extension, a dash and the image's name ("out/pm.md"
// gives "out/pm-g1-over-time.svg"), and links them by file name.
func imagesBeside(md string) func(name string, svg []byte) (string, error) {
	stem := strings.TrimSuffix(filepath.Base(md), filepath.Ext(md))
	dir := filepath.Dir(md)
	return func(name string, svg []byte) (string, error) {
		file := stem + "-" + name + ".svg"
		if err := os.WriteFile(filepath.Join(dir, file), svg, 0o644); err != nil {
			return "", err
		}
		return file, nil
	}
}
