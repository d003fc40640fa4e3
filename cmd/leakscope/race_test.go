package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestRaceReport ingests what go run -race printed for a program with a
// data race and checks the report names both accesses: the JSON's races
// and the Markdown's "Data races" section.
func TestRaceReport(t *testing.T) {
	if testing.Short() {
		t.Skip("builds with -race")
	}
	cmd := exec.Command("go", "run", "-race", ".")
	cmd.Dir = filepath.Join("..", "..", "ingest", "dump", "testdata", "racer")
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off", "CGO_ENABLED=1")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err == nil || !bytes.Contains(out.Bytes(), []byte("WARNING: DATA RACE")) {
		t.Fatalf("go run -race: %v\n%s", err, out.Bytes())
	}
	dir := t.TempDir()
	log := filepath.Join(dir, "race.log")
	if err := os.WriteFile(log, out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	b := filepath.Join(dir, "r.lsb")
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), []string{"ingest", "-q", log, "-o", b}, &stdout, &stderr); err != nil {
		t.Fatalf("ingest: %v\n%s", err, stderr.String())
	}
	stdout.Reset()
	if err := run(context.Background(), []string{"report", b, "--format", "json"}, &stdout, &stderr); err != nil {
		t.Fatalf("report: %v", err)
	}
	var rep struct {
		Races []struct {
			Number   int
			Accesses []struct {
				Access, Function, File string
				Line                   int
				Goid                   int64
				CreatedBy              *struct{ Function string } `json:"created_by"`
			}
		}
	}
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Races) != 1 || len(rep.Races[0].Accesses) != 2 {
		t.Fatalf("races %+v", rep.Races)
	}
	for _, a := range rep.Races[0].Accesses {
		if a.Function != "main.record" || a.Line != 12 || !strings.HasSuffix(a.File, "racer/main.go") || a.Goid == 0 || a.CreatedBy == nil || a.CreatedBy.Function != "main.main" {
			t.Errorf("access %+v", a)
		}
	}
	stdout.Reset()
	if err := run(context.Background(), []string{"report", b}, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	if md := stdout.String(); !strings.Contains(md, "## Data races") || !strings.Contains(md, "`main.record`") {
		t.Errorf("markdown lacks the race:\n%s", md)
	}
}
