package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/leakscope/leakscope/analysis"
	"github.com/leakscope/leakscope/analysis/report"
	"github.com/leakscope/leakscope/ingest/bundle"
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

func runReport(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("report", "report BUNDLE [--format md|html|json] [--postmortem] [--fail-on SCORE] [--images text|files|inline] [--rules FILE] [-o FILE]",
		"Analyses a bundle (a directory, or a .tar.zst/.tar.gz archive of one) for\n"+
			"goroutine and heap leaks and writes the leak report, or with --postmortem a\n"+
			"postmortem write-up. The json format is the stable contract described in\n"+
			"docs/DESIGN.md. With --fail-on, exits 1 when a suspect reaches that score\n"+
			"(0-100), after writing the report. Markdown is text to paste into an\n"+
			"incident document (charts as tables with sparklines); with -o FILE.md its\n"+
			"charts and flame graphs are also written beside it as FILE-NAME.svg and\n"+
			"linked (--images says otherwise).", stderr)
	format := fs.String("format", "md", "output format: md, html or json")
	postmortem := fs.Bool("postmortem", false, "write a postmortem instead of a report")
	failOn := fs.String("fail-on", "", "exit 1 when a suspect's score is at least `SCORE` (0-100)")
	out := fs.String("o", "", "write to `FILE` instead of standard output")
	rulesFile := fs.String("rules", "", "extra leak rules `FILE` (JSON), tried before the built-in ones; default $"+analysis.RulesEnv)
	minScore := fs.Float64("min-score", 0, "drop suspects scoring below this (0: the default threshold)")
	images := fs.String("images", "", "how a Markdown report carries charts and flame graphs: `MODE` text (tables and sparklines only),\nfiles (also SVG files beside -o FILE.md: FILE-NAME.svg) or inline (also embedded as data URIs);\ndefault files with -o, text on standard output")
	userCode := fs.String("user-code", "", "comma-separated `PREFIXES` of code you own besides package main and the main module\n(import paths like github.com/acme/platform, or source directories starting with /); default $"+analysis.UserCodeEnv)
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("report: give exactly one bundle")
	}
	switch *format {
	case "md", "markdown", "html", "json":
	default:
		return usagef("report: --format must be md, html or json, not %q", *format)
	}
	limit := -1.0
	if *failOn != "" {
		limit, err = strconv.ParseFloat(*failOn, 64)
		if err != nil || !validScore(limit) {
			return usagef("report: --fail-on wants a score from 0 to 100, not %q", *failOn)
		}
	}
	switch *images {
	case "", report.ImagesText, report.ImagesInline:
	case report.ImagesFiles:
		if *out == "" || *out == "-" {
			return usagef("report: --images files writes the images beside the report: give -o FILE.md")
		}
	default:
		return usagef("report: --images must be text, files or inline, not %q", *images)
	}
	if !validScore(*minScore) {
		return usagef("report: --min-score wants a score from 0 to 100, not %g", *minScore)
	}
	rules, err := analysis.LoadRules(*rulesFile)
	if err != nil {
		return err
	}
	dir, cleanup, err := openBundleDir(pos[0])
	if err != nil {
		return err
	}
	defer cleanup()
	b, err := bundle.Open(dir)
	if err != nil {
		return err
	}
	mem := memory.DefaultAllocator
	rep, err := analysis.Analyze(b, mem, analysis.Options{Rules: rules, MinScore: *minScore, UserCode: splitList(*userCode)})
	if err != nil {
		return fmt.Errorf("analyse %s: %w", pos[0], err)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	w := stdout
	var f *os.File
	if *out != "" && *out != "-" {
		f, err = os.Create(*out)
		if err != nil {
			return err
		}
		w = f
	}
	opts := report.Options{Postmortem: *postmortem, Bundle: b, Mem: mem, Images: *images}
	if opts.Images == "" && f != nil {
		opts.Images = report.ImagesFiles
	}
	if opts.Images == report.ImagesFiles {
		opts.ImageFile = imagesBeside(*out)
	}
	switch *format {
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
	if limit >= 0 {
		for _, s := range rep.Suspects {
			if s.Score >= limit {
				return failOnError{s.ID, s.Score, limit}
			}
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
