package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/leakscope/leakscope/analysis"
	"github.com/leakscope/leakscope/export"
	"github.com/leakscope/leakscope/ingest/bundle"
)

// runExport implements `leakscope export`.
func runExport(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("export", "export BUNDLE... --format parquet -o DIR",
		`Writes every table of each bundle (a directory or a .tar.zst/.tar.gz
archive) as Parquet in a hive layout, DIR/node=NODE/capture=ID/TABLE.parquet,
plus suspects.parquet (the analysis report's suspects) and captures.parquet
(one row: service, executable, module, time range, sources). Export the
captures of many nodes into one DIR and query them together, e.g. with DuckDB:

  SELECT service, pattern, location, count(DISTINCT node) AS nodes, min(first_seen)
  FROM read_parquet('DIR/*/*/suspects.parquet', hive_partitioning = true)
  GROUP BY ALL ORDER BY nodes DESC;

Exporting a capture again replaces its directory.`, stderr)
	format := fs.String("format", "parquet", "output format (parquet)")
	out := fs.String("o", "", "output `DIR` (created if needed)")
	rulesFile := fs.String("rules", "", "extra leak rules `FILE` (JSON) for the suspects table; default $"+analysis.RulesEnv)
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		return usagef("export: give at least one bundle")
	}
	if *format != "parquet" {
		return usagef("export: --format must be parquet, not %q", *format)
	}
	if *out == "" {
		return usagef("export: need -o DIR")
	}
	rules, err := analysis.LoadRules(*rulesFile)
	if err != nil {
		return err
	}
	// A bundle that fails (its analysis cut at its deadline or heap
	// budget, a damaged table) does not keep the others from export.
	var failed int
	for _, path := range pos {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := exportOne(path, *out, analysis.Options{Rules: rules, Now: time.Now()}, stdout); err != nil {
			failed++
			printf(stderr, "leakscope: %s: %v\n", path, err)
		}
	}
	if failed > 0 {
		return fmt.Errorf("%d of %d bundles not exported; the others are in %s", failed, len(pos), *out)
	}
	return nil
}

// exportOne exports one bundle and prints where its tables went.
func exportOne(path, out string, opts analysis.Options, stdout io.Writer) error {
	dir, cleanup, err := openBundleDir(path)
	if err != nil {
		return err
	}
	defer cleanup()
	b, err := bundle.Open(dir)
	if err != nil {
		return err
	}
	c, err := export.Parquet(b, out, export.Options{Analysis: opts})
	if err != nil {
		return err
	}
	var rows int64
	for _, t := range c.Tables {
		rows += t.Rows
	}
	printf(stdout, "%s -> %s (%d tables, %d rows, %d suspects)\n", path, c.Dir, len(c.Tables), rows, len(c.Report.Suspects))
	for _, t := range c.Tables {
		if t.Truncated != "" {
			printf(stdout, "  %s: exported the complete batches of a table cut short: %s\n", t.Name, t.Truncated)
		}
	}
	return nil
}
