package duckdbtest

import (
	"database/sql"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow/go/v15/arrow/memory"
	_ "github.com/duckdb/duckdb-go/v2"
	"github.com/leakscope/leakscope/analysis"
	"github.com/leakscope/leakscope/cmd/leakscope/bundles"
	"github.com/leakscope/leakscope/export"
	"github.com/leakscope/leakscope/ingest/bundle"
)

// exported is one sample bundle with what the export wrote for it.
type exported struct {
	b      *bundle.Bundle
	tables map[string]int64 // bundle table -> rows
	c      export.Capture
}

// exportSamples copies the sample bundles out of the embedded FS, gives
// each a node of its own (as captures from a fleet would have) and exports
// them all into one directory.
func exportSamples(t *testing.T) (string, []exported) {
	t.Helper()
	tmp := t.TempDir()
	out := filepath.Join(tmp, "fleet")
	entries, err := fs.ReadDir(bundles.FS, ".")
	if err != nil {
		t.Fatal(err)
	}
	var got []exported
	for i, e := range entries {
		sub, _ := fs.Sub(bundles.FS, e.Name())
		dir := filepath.Join(tmp, e.Name())
		if err := os.CopyFS(dir, sub); err != nil {
			t.Fatal(err)
		}
		b, err := bundle.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		b.Manifest.Node = fmt.Sprintf("node-%d", i%2) // two nodes
		infos, err := b.Tables(memory.DefaultAllocator)
		if err != nil {
			t.Fatal(err)
		}
		rows := map[string]int64{}
		for _, ti := range infos {
			rows[ti.Name] = ti.Rows
		}
		c, err := export.Parquet(b, out, export.Options{})
		if err != nil {
			t.Fatalf("export %s: %v", e.Name(), err)
		}
		got = append(got, exported{b: b, tables: rows, c: c})
	}
	if len(got) < 3 {
		t.Fatalf("only %d sample bundles", len(got))
	}
	return out, got
}

func open(t *testing.T) *sql.DB {
	t.Helper()
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func scanInt(t *testing.T, db *sql.DB, q string, args ...any) int64 {
	t.Helper()
	var n int64
	if err := db.QueryRow(q, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return n
}

// TestRowCountsMatchBundles reads every exported table of every capture
// with DuckDB, through the hive partition columns, and compares the counts
// with the bundles' own.
func TestRowCountsMatchBundles(t *testing.T) {
	out, caps := exportSamples(t)
	db := open(t)
	for _, c := range caps {
		m := c.b.Manifest
		for table, want := range c.tables {
			q := fmt.Sprintf(`SELECT count(*) FROM read_parquet('%s/*/*/%s.parquet', hive_partitioning = true)
				WHERE node = ? AND capture = ?`, out, table)
			if got := scanInt(t, db, q, m.Node, m.CaptureID); got != want {
				t.Errorf("%s %s: DuckDB counts %d rows, the bundle has %d", m.CaptureID, table, got, want)
			}
		}
	}
	// All captures at once: the sum over partitions.
	var want int64
	for _, c := range caps {
		want += c.tables["goroutines"]
	}
	q := fmt.Sprintf(`SELECT count(*) FROM read_parquet('%s/*/*/goroutines.parquet', hive_partitioning = true)`, out)
	if got := scanInt(t, db, q); got != want || want == 0 {
		t.Errorf("goroutines over all captures: DuckDB %d, bundles %d", got, want)
	}
}

// TestSuspectsAcrossNodes checks the suspects table against the analysis
// report and runs the fleet question of the README: which leaks appear on
// how many nodes, since when.
func TestSuspectsAcrossNodes(t *testing.T) {
	out, caps := exportSamples(t)
	db := open(t)
	glob := out + "/*/*/suspects.parquet"
	var total int
	for _, c := range caps {
		rep, err := analysis.Analyze(c.b, memory.DefaultAllocator, analysis.Options{})
		if err != nil {
			t.Fatal(err)
		}
		total += len(rep.Suspects)
		for _, s := range rep.Suspects {
			var count int64
			var score float64
			var pattern, location string
			err := db.QueryRow(`SELECT count, score, pattern, location FROM read_parquet(?, hive_partitioning = true)
				WHERE capture = ? AND id = ?`, glob, c.b.Manifest.CaptureID, s.ID).Scan(&count, &score, &pattern, &location)
			if err != nil {
				t.Fatalf("suspect %s of %s: %v", s.ID, c.b.Manifest.CaptureID, err)
			}
			if count != s.Count || score != s.Score || pattern != s.Pattern || location != s.Location {
				t.Errorf("suspect %s: DuckDB (%d, %g, %s, %s), report (%d, %g, %s, %s)", s.ID, count, score, pattern, location, s.Count, s.Score, s.Pattern, s.Location)
			}
		}
	}
	if total == 0 {
		t.Fatal("the sample bundles have no suspects")
	}
	if got := scanInt(t, db, `SELECT count(*) FROM read_parquet(?, hive_partitioning = true)`, glob); got != int64(total) {
		t.Errorf("suspects: DuckDB %d rows, reports %d", got, total)
	}
	// The README's query.
	rows, err := db.Query(`SELECT service, pattern, location, count(DISTINCT node) AS nodes,
		       min(coalesce(onset, first_seen)) AS since, max(count) AS worst
		FROM read_parquet(?, hive_partitioning = true)
		GROUP BY ALL ORDER BY nodes DESC`, glob)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var groups int
	for rows.Next() {
		var service, pattern, location string
		var nodes, worst int64
		var since sql.NullTime
		if err := rows.Scan(&service, &pattern, &location, &nodes, &since, &worst); err != nil {
			t.Fatal(err)
		}
		if nodes < 1 || nodes > 2 || service == "" || !since.Valid || worst <= 0 {
			t.Errorf("fleet row %s %s %s: %d nodes, since %v", service, pattern, location, nodes, since)
		}
		groups++
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if groups == 0 {
		t.Error("the fleet query returned no rows")
	}
}

// TestJoinStacks resolves the leaf function of every goroutine through the
// exported stacks and frames tables, within each capture (ids are per
// bundle), and checks no goroutine with a stack is lost in the join.
func TestJoinStacks(t *testing.T) {
	out, _ := exportSamples(t)
	db := open(t)
	p := func(table string) string {
		return fmt.Sprintf("read_parquet('%s/*/*/%s.parquet', hive_partitioning = true)", out, table)
	}
	withStack := scanInt(t, db, `SELECT count(*) FROM `+p("goroutines")+` WHERE stack_id IS NOT NULL`)
	joined := scanInt(t, db, `SELECT count(*) FROM `+p("goroutines")+` g
		JOIN `+p("stacks")+` s ON s.node = g.node AND s.capture = g.capture AND s.stack_id = g.stack_id
		JOIN `+p("frames")+` f ON f.node = g.node AND f.capture = g.capture AND f.frame_id = s.frame_ids[1]`)
	if withStack == 0 || joined != withStack {
		t.Errorf("goroutines with a stack: %d; joined to their leaf frame: %d", withStack, joined)
	}
	// Timestamps keep their instant: the earliest goroutine snapshot of a
	// capture is not before the capture's start.
	bad := scanInt(t, db, `SELECT count(*) FROM `+p("goroutines")+` g JOIN `+p("captures")+` c USING (node, capture)
		WHERE g.snapshot_ts < c.start - INTERVAL 1 MINUTE OR g.snapshot_ts > c."end" + INTERVAL 1 MINUTE`)
	if bad != 0 {
		t.Errorf("%d goroutine rows have a snapshot time outside their capture", bad)
	}
}
