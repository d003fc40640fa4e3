package corpus

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/leakscope/leakscope/analysis"
	"github.com/leakscope/leakscope/samples/blocking"
)

// TestDegradedInputs captures the two-bug service once and analyses worse
// copies of what it wrote, as an engineer may get them: a dump whose every
// argument word is marked "?" (possibly wrong), a SIGQUIT traceback cut in
// the middle of a frame, and a dump whose program source does not parse.
// Each must be ingested and analysed without an error (the cut traceback
// as truncated). The cut traceback and the unparsable source must still
// name one of the bugs, as the dump as captured does: the verdict at the
// confidence that is left. With every word unsure no object is known, so
// one dump can show neither the lock cycle nor who could feed the
// receivers: the report must then name no object at all, rather than a
// bug. Source that does not parse is source not read: it must give the
// verdicts the dump gives with the source moved away, a subset of those
// of the dump as captured (it can only leave undecided what the source
// would have decided).
func TestDegradedInputs(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a corpus program")
	}
	root, err := blocking.Root()
	if err != nil {
		t.Fatal(err)
	}
	p, err := blocking.Load(filepath.Join(root, "twobugs"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	bin, err := build(ctx, p, ToolchainFromEnv(), dir, src)
	if err != nil {
		t.Fatal(err)
	}
	rec := &Recording{Program: p.Truth.Name, Dir: filepath.Join(dir, "run")}
	captureDumps(ctx, p, bin, dir, rec, 0)
	if len(rec.Problems) > 0 {
		t.Fatal(rec.Problems)
	}
	dump, err := os.ReadFile(filepath.Join(rec.Dir, Dump1))
	if err != nil {
		t.Fatal(err)
	}
	tb, err := os.ReadFile(filepath.Join(rec.Dir, Traceback))
	if err != nil {
		t.Fatal(err)
	}
	cut, ok := cutMidFrame(tb, "main.transfer(")
	if !ok {
		t.Fatalf("the traceback has no main.transfer frame to cut:\n%s", tb)
	}
	var asCaptured, withoutSource []string
	for _, c := range []struct {
		name, artifact string
		body           []byte
		breakSource    bool
		noIdentity     bool
		away           bool
	}{
		{"dump as captured", Dump1, dump, false, false, false},
		{"all arguments marked ?", Dump1, unsureArgs(dump), false, true, false},
		{"traceback cut mid-frame", Traceback, cut, false, false, false},
		{"source moved away", Dump1, dump, false, false, true},
		{"source that does not parse", Dump1, dump, true, false, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.breakSource {
				restore := breakSource(t, src)
				defer restore()
			}
			if c.away {
				defer moveAway(t, src)()
			}
			r := &Recording{Program: rec.Program, Dir: t.TempDir()}
			r.add(c.artifact, rec.artifact(c.artifact).At, c.body)
			f := Form{Key: "degraded", Artifacts: []string{c.artifact}}
			rep, err := analyse(r, f, filepath.Join(t.TempDir(), "b.lsb"))
			if err != nil {
				t.Fatalf("not analysed: %v", err)
			}
			got := verdicts(rep)
			t.Logf("verdicts:\n  %v", got)
			if c.noIdentity {
				if obj := namedObject(rep); obj != "" {
					t.Errorf("every word is unsure, yet the report names an object: %s", obj)
				}
			} else if !namesBlocked(rep, p.Truth) {
				t.Errorf("no suspect names a blocked function (%v)", p.Truth.BlockedFunctions())
			}
			compareVerdicts(t, got, c.away, c.breakSource, c.artifact == Dump1 && !c.breakSource && bytes.Equal(c.body, dump), &asCaptured, &withoutSource)
		})
	}
}

// compareVerdicts keeps the verdicts of the dump as captured and of the
// source moved away, and checks those of the source that does not
// parse against both: it is read as absent, and adds nothing.
func compareVerdicts(t *testing.T, got []string, away, broken, captured bool, asCaptured, withoutSource *[]string) {
	t.Helper()
	switch {
	case away:
		*withoutSource = got
	case captured:
		*asCaptured = got
	case broken:
		if !slices.Equal(got, *withoutSource) {
			t.Errorf("source that does not parse is not read as absent source:\n  source away: %v\n  now:         %v", *withoutSource, got)
		}
		for _, v := range got {
			if !slices.Contains(*asCaptured, v) {
				t.Errorf("source that does not parse added %q to the verdicts of the dump as captured %v", v, *asCaptured)
			}
		}
	}
}

var (
	frameLine = regexp.MustCompile(`(?m)^[^\t\n][^\n]*\([^\n]*\)$`)
	argWord   = regexp.MustCompile(`0x[0-9a-f]+\b\??`)
)

// unsureArgs marks every argument word of every frame line "?", as Go
// prints words it cannot vouch for.
func unsureArgs(b []byte) []byte {
	return frameLine.ReplaceAllFunc(b, func(line []byte) []byte {
		open := bytes.IndexByte(line, '(')
		args := argWord.ReplaceAllFunc(line[open:], func(w []byte) []byte {
			// a copy: w is part of b, which is left as it is
			return append(append([]byte(nil), bytes.TrimSuffix(w, []byte("?"))...), '?')
		})
		return append(append([]byte(nil), line[:open]...), args...)
	})
}

// cutMidFrame cuts b right after the second frame line that starts with
// fn, before that frame's file:line.
func cutMidFrame(b []byte, fn string) ([]byte, bool) {
	at := 0
	for n := 0; n < 2; n++ {
		i := bytes.Index(b[at:], []byte("\n"+fn))
		if i < 0 {
			return nil, false
		}
		at += i + 1
	}
	end := bytes.IndexByte(b[at:], '\n')
	if end < 0 {
		return nil, false
	}
	return b[:at+end+1], true
}

// moveAway moves the program's source away; the function returned puts
// it back.
func moveAway(t *testing.T, dir string) func() {
	t.Helper()
	if err := os.Rename(dir, dir+".away"); err != nil {
		t.Fatal(err)
	}
	return func() {
		if err := os.Rename(dir+".away", dir); err != nil {
			t.Error(err)
		}
	}
}

// breakSource replaces every Go file under dir with text that does not
// parse, and returns a function putting them back.
func breakSource(t *testing.T, dir string) func() {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no Go files under %s: %v", dir, err)
	}
	saved := map[string][]byte{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		saved[f] = b
		if err := os.WriteFile(f, []byte("package main\n\nfunc broken( {\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return func() {
		for f, b := range saved {
			if err := os.WriteFile(f, b, 0o644); err != nil {
				t.Error(err)
			}
		}
	}
}

// namesBlocked reports whether a suspect of rep is located at one of the
// truth's blocked functions.
// namedObject returns the first evidence that names an object by its
// address, "" when none does.
func namedObject(rep *analysis.Report) string {
	for _, s := range rep.Suspects {
		for _, e := range s.Evidence {
			if strings.Contains(e.Detail, "0x") {
				return s.ID + " " + e.Kind + ": " + e.Detail
			}
		}
	}
	return ""
}

func namesBlocked(rep *analysis.Report, t blocking.Truth) bool {
	for _, s := range rep.Suspects {
		for _, fn := range t.BlockedFunctions() {
			if s.Location == fn {
				return true
			}
		}
	}
	return false
}
