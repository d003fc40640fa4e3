package analysis_test

import (
	"bytes"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestUnsureWordsJoinNothing analyses three dumps of stuckprog's two
// independent bugs (a goroutine leaked per request on a channel nobody
// sends on, 50 a second, and one lock-order cycle) as the program
// printed them, and copies in which the leaked goroutines' first
// argument and the cycle's third are one word marked "?" (possibly
// stale) in both. A "?" word is
// no identity: both copies give the same two suspects, each with its own
// pattern, and the cycle holds only the lock takers.
func TestUnsureWordsJoinNothing(t *testing.T) {
	type verdict struct{ pattern, verdict string }
	got := map[string]map[string]verdict{}
	for _, file := range []string{"dump", "unsure"} {
		var in []stamped
		for i := range 3 {
			name := fmt.Sprintf("%s-%d.txt", file, i+1)
			data, err := os.ReadFile("testdata/twobugs/" + name)
			if err != nil {
				t.Fatal(err)
			}
			in = append(in, stamped{"raw/" + name, data, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(i) * 600 * time.Millisecond)})
		}
		rep := analyseInputs(t, in...)
		got[file] = map[string]verdict{}
		ids := map[string]string{}
		for _, s := range rep.Suspects {
			ids[s.ID] = s.Location
			got[file][s.Location] = verdict{s.Pattern, s.Verdict}
			for _, c := range s.Cycle {
				if s.Location == "main.awaitSettlement" || c == "main.awaitSettlement" {
					t.Errorf("%s: %s is in a cycle with %s", file, s.Location, c)
				}
			}
			for _, w := range s.WaitsOn {
				if strings.Contains(w, "?") || !strings.Contains(w, " of ") {
					t.Errorf("%s: %s waits on %q: want a certain word with its frame and parameter", file, s.Location, w)
				}
			}
		}
		tr, leak := got[file]["main.transfer"], got[file]["main.awaitSettlement"]
		if tr.pattern != "lock-order-cycle" || tr.verdict != "stuck" {
			t.Errorf("%s: main.transfer is %+v, want a stuck lock-order-cycle", file, tr)
		}
		if leak.pattern == "" || leak.pattern == tr.pattern || leak.verdict == "" {
			t.Errorf("%s: main.awaitSettlement is %+v, want a suspect of its own pattern", file, leak)
		}
		for _, inc := range rep.Incidents {
			locs := map[string]bool{}
			for _, id := range inc.Suspects {
				locs[ids[id]] = true
			}
			if locs["main.transfer"] && locs["main.awaitSettlement"] {
				t.Errorf("%s: incident %q (%s) joins both bugs", file, inc.Summary, inc.Pattern)
			}
		}
	}
	if a, b := got["dump"], got["unsure"]; len(a) != len(b) || a["main.awaitSettlement"] != b["main.awaitSettlement"] || a["main.transfer"] != b["main.transfer"] {
		t.Errorf("the unsure words changed the verdicts: %v, then %v", a, b)
	}
}

// TestAllWordsUnsure analyses the two-bug dumps with every argument word
// marked "?": nothing is identity any more, and the verdicts fall back to
// what the wait kinds, the growth and the possible holders carry (no
// error, no panic, nothing named from a "?" word).
func TestAllWordsUnsure(t *testing.T) {
	word := regexp.MustCompile(`\b(0x[0-9a-f]+)\??([,)}])`)
	var in []stamped
	for i := range 3 {
		name := fmt.Sprintf("dump-%d.txt", i+1)
		data, err := os.ReadFile("testdata/twobugs/" + name)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, l := range strings.Split(string(data), "\n") {
			if strings.HasSuffix(l, ")") && !strings.HasPrefix(l, "\t") && !strings.HasPrefix(l, "goroutine ") {
				l = word.ReplaceAllString(l, "${1}?${2}")
			}
			out = append(out, l)
		}
		in = append(in, stamped{"raw/" + name, []byte(strings.Join(out, "\n")), time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(i) * 600 * time.Millisecond)})
	}
	if !bytes.Contains(in[2].data, []byte("?, 0x")) || !bytes.Contains(in[2].data, []byte("?)")) {
		t.Fatalf("the words were not marked:\n%.2000s", in[2].data)
	}
	rep := analyseInputs(t, in...)
	got := map[string]string{}
	for _, s := range rep.Suspects {
		got[s.Location] = s.Verdict
		for _, w := range s.WaitsOn {
			t.Errorf("%s waits on %q, read from a word marked ?", s.Location, w)
		}
	}
	if got["main.awaitSettlement"] != "leaking" {
		t.Errorf("with every word unsure, suspects %v; want the per-request leak named by its growth", got)
	}
	// The lock waiters lose their cycle: without a certain word the
	// ticker closure of the function that started them may hold the
	// locks. They are a suspect or a look-alike that says so, never
	// silently dropped.
	if got["main.transfer"] == "" {
		said := false
		for _, l := range rep.LookAlikes {
			said = said || l.Location == "main.transfer" && l.Kind == "possible-holder" && strings.Contains(l.Reason, "main.twobugs.func1")
		}
		if !said {
			t.Errorf("main.transfer is neither a suspect nor a look-alike naming its possible holder: %+v", rep.LookAlikes)
		}
	}
}
