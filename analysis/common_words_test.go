package analysis

import (
	"testing"
	"time"

	"github.com/leakscope/leakscope/ingest/bundle"
)

func TestWords(t *testing.T) {
	for n, want := range map[float64]string{1: "1 goroutine", 2: "2 goroutines", 0: "0 goroutines", 2.5: "2.5 goroutines"} {
		if got := Plural(n, "goroutine"); got != want {
			t.Errorf("Plural(%v) = %q, want %q", n, got, want)
		}
	}
	for d, want := range map[time.Duration]string{
		25 * time.Second: "25 s", time.Minute: "1 minute", 250 * time.Second: "4 minutes 10 s",
		2*time.Hour + 5*time.Minute: "2 hours 5 minutes", time.Hour + 20*time.Second: "1 hour", 1500 * time.Millisecond: "2 s",
	} {
		if got := FormatDuration(d); got != want {
			t.Errorf("FormatDuration(%v) = %q, want %q", d, got, want)
		}
	}
	src := bundle.Source{Kind: "trace", Status: "truncated", Detail: "target went away", Counters: map[string]int64{"events": 22010, "trace_bytes": 301247, "windows": 4}}
	if got, want := SourceText(src), "trace truncated: target went away · events 22,010 · trace bytes 294.2 KiB · windows 4"; got != want {
		t.Errorf("SourceText = %q, want %q", got, want)
	}
	if got := thousands(-1234567); got != "-1,234,567" {
		t.Errorf("thousands = %q", got)
	}
}
