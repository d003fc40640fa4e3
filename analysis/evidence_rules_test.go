package analysis

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDefaultRulesClassify(t *testing.T) {
	rules := DefaultRules()
	cases := []struct {
		state, want string
		frames      []string
		source      string
	}{
		{"chan send", "chan-send-no-receiver", []string{"runtime.gopark", "runtime.chansend1", "main.f"}, ""},
		{"chan send (leaked)", "chan-send-no-receiver", []string{"main.f"}, ""},
		{"chan receive", "chan-receive-never-closed", []string{"runtime.chanrecv1", "main.f"}, "func f(ch chan int) {\n\tfor v := range ch { // here\n\t\t_ = v\n\t}\n}"},
		{"chan receive", "ticker-not-stopped", []string{"runtime.chanrecv2", "main.poll"}, "func poll(d time.Duration) {\n\tt := time.NewTicker(d)\n\tfor range t.C { // here\n\t}\n}"},
		// A ticker elsewhere in the function is not the receive's channel.
		{"chan receive", "chan-receive-never-closed", []string{"runtime.chanrecv1", "main.f"}, "func f(ch chan int) {\n\tt := time.NewTicker(d)\n\t<-t.C\n\t<-ch // here\n}"},
		// A send the same function undoes later with a receive whose
		// value it drops takes a channel semaphore's slot; an answer
		// read back, another channel, or a receive before it does not.
		{"chan send", "semaphore-never-released", []string{"main.f"}, "func f(l *limiter) error {\n\tl.slots <- struct{}{} // here\n\tif err := op(); err != nil {\n\t\treturn err\n\t}\n\t<-l.slots\n\treturn nil\n}"},
		{"chan send", "semaphore-never-released", []string{"main.f"}, "func f(sem chan struct{}) {\n\tsem <- struct{}{} // here\n\tdefer func() { <-sem }()\n\twork()\n}"},
		{"chan send", "chan-send-no-receiver", []string{"main.f"}, "func f(ch chan int) int {\n\tch <- 1 // here\n\treturn <-ch\n}"},
		{"chan send", "chan-send-no-receiver", []string{"main.f"}, "func f(ch chan int) {\n\tch <- 1 // here\n\tv := <-ch\n\tuse(v)\n}"},
		{"chan send", "chan-send-no-receiver", []string{"main.f"}, "func f(a, b chan int) {\n\ta <- 1 // here\n\t<-b\n}"},
		{"chan send", "chan-send-no-receiver", []string{"main.f"}, "func f(sem chan int) {\n\t<-sem\n\tsem <- 1 // here\n}"},
		{"select", "select-without-cancel", []string{"runtime.selectgo", "main.f"}, ""},
		{"select", "http-body-not-closed", []string{"runtime.selectgo", "net/http.(*persistConn).readLoop"}, ""},
		{"sync.WaitGroup.Wait", "waitgroup-never-done", []string{"sync.(*WaitGroup).Wait", "main.f"}, ""},
		{"semacquire", "waitgroup-never-done", []string{"sync.(*WaitGroup).Wait", "main.f"}, ""},
		{"sync.Mutex.Lock", "lock-never-released", []string{"internal/sync.(*Mutex).lockSlow", "sync.(*Mutex).Lock", "main.f"}, ""},
		{"sync.RWMutex.RLock", "lock-never-released", []string{"sync.(*RWMutex).RLock", "main.f"}, ""},
		{"sync.Cond.Wait", "cond-never-signalled", []string{"sync.(*Cond).Wait", "main.f"}, ""},
		{"IO wait", "network-no-deadline", []string{"internal/poll.runtime_pollWait", "main.f"}, ""},
		{"IO wait, 5 minutes", "network-no-deadline", []string{"main.f"}, ""},
		{"IO wait", "idle-keepalive-connection", []string{"internal/poll.runtime_pollWait", "net.(*netFD).Read", "bufio.(*Reader).Peek", "net/http.(*conn).serve"}, ""},
		{"sleep", "sleep-loop-no-exit", []string{"time.Sleep", "main.f"}, ""},
		{"chan send (nil chan)", "chan-send-nil", []string{"main.f"}, ""},
		{"select (no cases)", "select-no-cases", []string{"main.f"}, ""},
		{"running", "unbounded-goroutines", []string{"main.f"}, ""},
		{"GC worker (idle)", "runtime-internal", []string{"runtime.gcBgMarkWorker"}, ""},
		{"something new", "blocked-other", []string{"main.f"}, ""},
	}
	for _, c := range cases {
		r := classify(rules, KindGoroutine, c.state, c.frames, keptStmt(t, c.source, waitKind(normState(c.state), nil)))
		if r == nil || r.Pattern != c.want {
			got := "<nil>"
			if r != nil {
				got = r.Pattern
			}
			t.Errorf("classify(%q, %v) = %s, want %s", c.state, c.frames, got, c.want)
		}
	}
	if r := classify(rules, KindHeap, "", []string{"main.cache.put"}, nil); r == nil || r.Pattern != "heap-growth" {
		t.Errorf("heap default = %v", r)
	}
	if r := classify(rules, KindHeap, "", []string{"time.NewTicker", "main.poll"}, nil); r == nil || r.Pattern != "ticker-not-stopped" {
		t.Errorf("heap ticker = %v", r)
	}
	if r := classify(rules, KindHeap, "", []string{"main.newLease"}, keptStmt(t, "func newLease(l *lease) {\n\tl.timer = time.AfterFunc(ttl, f) // here\n}", "")); r == nil || r.Pattern != "timer-not-stopped" {
		t.Errorf("heap timer = %v", r)
	}
	for _, r := range rules {
		if r.Title == "" || r.Description == "" || r.Fix == "" {
			t.Errorf("rule %s lacks title, description or fix", r.Pattern)
		}
	}
}

func TestUserRulesComeFirst(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rules.json")
	os.WriteFile(path, []byte(`{"rules":[{"pattern":"grpc-stream-not-closed","states":["^select$"],"frames":["grpc\\.\\(\\*clientStream\\)"],"title":"t","description":"d","fix":"f"}]}`), 0o644)
	t.Setenv(RulesEnv, path)
	rules, err := LoadRules("")
	if err != nil {
		t.Fatal(err)
	}
	if r := classify(rules, KindGoroutine, "select", []string{"google.golang.org/grpc.(*clientStream).withRetry", "main.f"}, nil); r == nil || r.Pattern != "grpc-stream-not-closed" {
		t.Errorf("user rule not applied: %v", r)
	}
	if r := classify(rules, KindGoroutine, "select", []string{"main.f"}, nil); r == nil || r.Pattern != "select-without-cancel" {
		t.Errorf("built-in rules lost: %v", r)
	}
}

func TestParseRulesErrors(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`{"rules":[{"pattern":"x","states":["("]}]}`, "rule 1 (x): bad regexp"},
		{`{"rules":[{"states":["a"]}]}`, "missing pattern"},
		{`{"rules":[{"pattern":"x","kind":"disk"}]}`, `kind "disk"`},
		{`{"rules":`, "not a rules file"},
		{`{"rules":[{"pattern":"x","statement":["time.After("]}]}`, `statement fact "time.After("`},
	} {
		_, err := ParseRules([]byte(c.in), "f.json")
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "f.json: ") {
			t.Errorf("ParseRules(%s) error %v, want one naming the file and %q", c.in, err, c.want)
		}
	}
	if _, err := LoadRules(filepath.Join(t.TempDir(), "missing.json")); err == nil {
		t.Error("a missing rules file is not an error")
	}
}

func FuzzParseRules(f *testing.F) {
	f.Add([]byte(defaultRulesJSON))
	f.Add([]byte(`{"rules":[{"pattern":"x","states":["("]}]}`))
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		rules, err := ParseRules(data, "fuzz")
		if (rules == nil) != (err != nil) {
			t.Fatalf("rules %v err %v: want exactly one of them", rules, err)
		}
		for i := range rules {
			rules[i].Match(KindGoroutine, "select", []string{"main.f"}, "x")
		}
	})
}

func TestFitSeries(t *testing.T) {
	ts := []int64{0, 60e9, 120e9, 180e9}
	f := fitSeries(ts, []float64{5, 7, 9, 11})
	if f.Slope != 2 || f.R2 != 1 || f.Monotone != 1 || f.Points != 4 {
		t.Errorf("line: %+v", f)
	}
	f = fitSeries(ts, []float64{5, 9, 5, 9})
	if f.Monotone > 0.67 || f.R2 > 0.3 {
		t.Errorf("sawtooth: %+v", f)
	}
	f = fitSeries(ts, []float64{3, 3, 3, 3})
	if f.Slope != 0 || f.R2 != 0 {
		t.Errorf("flat: %+v", f)
	}
	if f := fitSeries(ts[:1], []float64{1}); f.Points != 1 || f.Slope != 0 {
		t.Errorf("single: %+v", f)
	}
}

func TestLocationFrame(t *testing.T) {
	fr := []Frame{{Function: "runtime.gopark"}, {Function: "net/http.(*conn).serve"}, {Function: "github.com/acme/svc/api.(*S).Get"}, {Function: "main.main"}}
	if got, i := locationFrame(fr); got.Function != "github.com/acme/svc/api.(*S).Get" || i != 2 {
		t.Errorf("location %v %d", got, i)
	}
	if got, _ := locationFrame(fr[:2]); got.Function != "net/http.(*conn).serve" {
		t.Errorf("stdlib-only location %v", got)
	}
	if entryFunction([]Frame{{Function: "main.f"}, {Function: "main.main"}, {Function: "runtime.main"}, {Function: "runtime.goexit"}}) != "main.main" {
		t.Error("entry function of the main goroutine")
	}
}

// TestTimerRuleNamesTheAllocator checks the timer heap rules match an
// allocation the time package makes (time.newTimer under time.NewTimer,
// as heap profiles of Go 1.23+ show it), and not one its caller makes
// beside the timer (an OpenTelemetry batch processor's queue).
func TestTimerRuleNamesTheAllocator(t *testing.T) {
	rules := DefaultRules()
	cases := []struct {
		stack []string
		want  string
	}{
		{[]string{"time.newTimer", "time.NewTimer", "go.opentelemetry.io/otel/sdk/trace.NewBatchSpanProcessor", "main.handle"}, "timer-not-stopped"},
		{[]string{"time.newTimer", "time.NewTicker", "main.poll"}, "ticker-not-stopped"},
		{[]string{"go.opentelemetry.io/otel/sdk/trace.NewBatchSpanProcessor", "go.opentelemetry.io/otel/sdk/trace.WithBatcher", "time.NewTimer"}, "heap-growth"},
		{[]string{"runtime.makechan", "go.opentelemetry.io/otel/sdk/trace.NewBatchSpanProcessor", "main.handle"}, "heap-growth"},
	}
	for _, c := range cases {
		r := classify(rules, KindHeap, "", c.stack, nil)
		got := ""
		if r != nil {
			got = r.Pattern
		}
		if got != c.want {
			t.Errorf("%v: %s, want %s", c.stack, got, c.want)
		}
	}
}
