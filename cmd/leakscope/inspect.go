package main

import (
	"context"
	"fmt"
	"github.com/leakscope/leakscope/internal/format"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/leakscope/leakscope/analysis"
	"github.com/leakscope/leakscope/ingest/bundle"
)

func runInspect(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("inspect", "inspect BUNDLE",
		"Prints a bundle's target, time range, sources, tables with row counts, and\nthe original artifacts kept under raw/. BUNDLE is a directory or an archive.", stderr)
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("inspect: give exactly one bundle")
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
	tables, err := b.Tables(memory.DefaultAllocator)
	if err != nil {
		return err
	}
	m := b.Manifest
	printHead(stdout, pos[0], m)
	for _, s := range m.Sources {
		line := fmt.Sprintf("source   %-6s %s", s.Kind, s.Status)
		if s.Detail != "" {
			line += ": " + s.Detail
		}
		printLine(stdout, line)
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
	printLine(tw, "\ttable\trows\tbatches\tsize\t")
	for _, t := range tables {
		printf(tw, "\t%s\t%s\t%s\t%s\t%s\n", t.Name, format.Int(t.Rows), format.Int(int64(t.Batches)), format.Bytes(float64(t.Bytes)), truncNote(t.Truncated))
	}
	tw.Flush()
	if len(m.Artifacts) > 0 {
		printf(stdout, "artifacts (%d):\n", len(m.Artifacts))
		for _, a := range m.Artifacts {
			kind := a.Kind
			if a.Profile != "" {
				kind += "/" + a.Profile
			}
			at := a.Time.UTC().Format("2006-01-02T15:04:05.000Z")
			if a.TimeBasis != "" {
				at += " (" + a.TimeBasis + ")"
			}
			printf(stdout, "  %-28s %-18s %8d rows  %s  %s %s\n", a.Name, kind, a.Rows, at, a.Status, a.Detail)
		}
	}
	return nil
}

func truncNote(s string) string {
	if s == "" {
		return ""
	}
	return " truncated: " + strings.SplitN(s, "\n", 2)[0]
}

// printHead prints what a bundle is of: capture, target, build, node,
// what triggered it and its time range.
func printHead(stdout io.Writer, name string, m bundle.Manifest) {
	printf(stdout, "bundle   %s (capture %s, format %d, schema %s)\n", name, m.CaptureID, m.FormatVersion, m.SchemaVersion)
	if t := m.Target; t.PID != 0 || t.Exe != "" || t.URL != "" {
		printf(stdout, "target   pid %d %s %s %s\n", t.PID, t.Exe, t.GoVersion, t.URL)
		if !t.ProcessStart.IsZero() {
			printf(stdout, "started  %s (process start, from /proc)\n", t.ProcessStart.UTC().Format(time.RFC3339))
		}
	}
	if m.Node != "" {
		printf(stdout, "node     %s\n", m.Node)
	}
	if !m.Start.IsZero() {
		printf(stdout, "time     %s .. %s (%s)\n", m.Start.UTC().Format(time.RFC3339), m.End.UTC().Format(time.RFC3339), m.End.Sub(m.Start).Round(time.Second))
	}
	if b := m.Target.Build(); b != "" {
		printf(stdout, "build    %s\n", b)
	}
	if m.Trigger != nil {
		printf(stdout, "trigger  %s\n", format.Text(analysis.TriggerText(m.Trigger)))
	}
}
