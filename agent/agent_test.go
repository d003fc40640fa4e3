package agent

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/samples"
	"github.com/leakscope/leakscope/web"
)

// liveTest starts a test that runs an agent watching and capturing a
// live program, seconds each and mostly waiting: make test-short skips
// them (-short), and otherwise they run beside each other (-parallel at
// once, after the package's other tests). Each has its own program,
// agent, listener, spool and workbench.
func liveTest(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("runs an agent capturing a live program")
	}
	t.Parallel()
}

func TestMain(m *testing.M) {
	if arg := os.Getenv(childEnv); arg != "" {
		os.Exit(runChild(arg))
	}
	code := m.Run()
	samples.Cleanup()
	os.Exit(code)
}

// workbench is an in-process `leakscope serve` on loopback whose uploads
// are refused while down is set: 413 with the quota's message (a full data
// directory), as the real one answers.
type workbench struct {
	srv   *httptest.Server
	store *web.Store
	down  atomic.Bool
	posts atomic.Int64
}

func newWorkbench(t *testing.T) *workbench {
	t.Helper()
	st, err := web.OpenStore(t.TempDir(), nil, bundle.Limits{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Wait)
	wb := &workbench{store: st}
	h := web.NewRouter(st, web.Options{Loopback: true})
	wb.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			wb.posts.Add(1)
			if wb.down.Load() {
				io.Copy(io.Discard, r.Body)
				http.Error(w, `{"error":"archive too large: no room for the upload: the quota of 32 GiB is taken"}`, http.StatusRequestEntityTooLarge)
				return
			}
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(wb.srv.Close)
	return wb
}

// report fetches the JSON report of a capture from the workbench.
func (wb *workbench) report(t *testing.T, id string) []struct{ Pattern, Location string } {
	t.Helper()
	resp, err := http.Get(wb.srv.URL + "/api/captures/" + id + "/report?format=json")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var rep struct {
		Suspects []struct{ Pattern, Location string }
	}
	if err := json.NewDecoder(resp.Body).Decode(&rep); err != nil {
		t.Fatalf("report of %s: %v", id, err)
	}
	return rep.Suspects
}

// node fetches the node a capture names on the workbench.
func (wb *workbench) node(t *testing.T, id string) string {
	t.Helper()
	resp, err := http.Get(wb.srv.URL + "/api/captures/" + id)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var c struct{ Node string }
	if err := json.NewDecoder(resp.Body).Decode(&c); err != nil {
		t.Fatal(err)
	}
	return c.Node
}

// trigger fetches what the workbench says started capture id: its
// manifest's trigger, and the report's sentence of it.
func (wb *workbench) trigger(t *testing.T, id string) (*bundle.Trigger, string) {
	t.Helper()
	var c struct{ Manifest bundle.Manifest }
	var rep struct {
		Bundle struct {
			TriggerText string `json:"trigger_text"`
		}
	}
	for path, v := range map[string]any{"": &c, "/report?format=json": &rep} {
		resp, err := http.Get(wb.srv.URL + "/api/captures/" + id + path)
		if err != nil {
			t.Fatal(err)
		}
		err = json.NewDecoder(resp.Body).Decode(v)
		resp.Body.Close()
		if err != nil {
			t.Fatalf("capture %s%s: %v", id, path, err)
		}
	}
	return c.Manifest.Trigger, rep.Bundle.TriggerText
}

// checkAlertTrigger checks that capture id carries the alert
// TestAlertTriggersCapture posted for instance, and that the workbench's
// report says it.
func (wb *workbench) checkAlertTrigger(t *testing.T, id, instance string) {
	t.Helper()
	tr, text := wb.trigger(t, id)
	if tr == nil || tr.Source != bundle.TriggerAlert || tr.Alert == nil || tr.Alert.Name != "GoroutineGrowthFast" || tr.Alert.Labels["instance"] != instance ||
		!tr.Alert.StartsAt.Equal(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)) || tr.Alert.Alertmanager != "http://alertmanager.example:9093" || tr.Node != "node-7" {
		t.Fatalf("bundle's trigger %+v", tr)
	}
	if want := "Alertmanager alert GoroutineGrowthFast (instance=" + instance + ", job=svc), firing since 2026-01-01 00:00:00.000 UTC; captured on node node-7"; !strings.HasPrefix(text, want) {
		t.Errorf("report's trigger %q, want it to start %q", text, want)
	}
}

// startAgent runs an agent until the test ends.
func startAgent(t *testing.T, cfg Config) *Agent {
	t.Helper()
	if cfg.Listen == "" {
		cfg.Listen = "127.0.0.1:0"
	}
	if cfg.SpoolDir == "" {
		cfg.SpoolDir = t.TempDir()
	}
	if cfg.Log == nil {
		cfg.Log = testLog{t}
	}
	cfg.Version = "test"
	cfg.Capture.Duration, cfg.Capture.Interval = 6*time.Second, 2*time.Second
	cfg.Capture.TraceWindow, cfg.Capture.CPUWindow = time.Second, 0
	cfg.Capture.NoEBPF = true
	a, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("agent: %v", err)
		}
	})
	return a
}

type testLog struct{ t *testing.T }

func (l testLog) Write(p []byte) (int, error) {
	l.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// getStatus reads the agent's /status.
func getStatus(t *testing.T, a *Agent) status {
	t.Helper()
	resp, err := http.Get("http://" + a.Addr() + "/status")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var st status
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		t.Fatal(err)
	}
	return st
}

// waitFor polls the agent's status until cond holds, failing after a
// deadline generous enough for a loaded 2-core machine.
func waitFor(t *testing.T, a *Agent, what string, cond func(status) bool) status {
	t.Helper()
	deadline := time.Now().Add(3 * time.Minute)
	for {
		st := getStatus(t, a)
		if cond(st) {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s; status %+v", what, st)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// startLeaky runs the timeout-send sample. With a name, the binary is
// copied to that file name first, so selecting it by executable name
// cannot pick up another test's copy of the sample on a shared machine.
func startLeaky(t *testing.T, name string) (*samples.Process, samples.Leak) {
	t.Helper()
	root, err := samples.Root()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "timeout-send")
	truth, err := samples.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	if name != "" {
		bin, err := samples.Build(ctx, dir)
		if err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(bin)
		if err != nil {
			t.Fatal(err)
		}
		dir = filepath.Join(t.TempDir(), "sample")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o755); err != nil {
			t.Fatal(err)
		}
		return startBinary(t, ctx, filepath.Join(dir, name)), truth.Leaks[0]
	}
	p, err := samples.Start(ctx, dir, "-rate", "50")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Stop() })
	return p, truth.Leaks[0]
}

// startBinary runs a sample binary at rate 50 and waits for its
// "listening on" line.
func startBinary(t *testing.T, ctx context.Context, bin string) *samples.Process {
	t.Helper()
	cmd := exec.CommandContext(ctx, bin, "-rate", "50")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "listening on ") {
		t.Fatalf("%s: %q (%v)", bin, line, err)
	}
	go io.Copy(io.Discard, out)
	return &samples.Process{Cmd: cmd, PID: cmd.Process.Pid, URL: strings.TrimSpace(strings.TrimPrefix(line, "listening on "))}
}

func uploadedEntry(st status) *Entry {
	for _, e := range st.Spool {
		if e.State == StateUploaded {
			return e
		}
	}
	return nil
}

// TestAlertTriggersCapture posts an Alertmanager notification naming a
// leaky sample by its instance address; the agent captures it, writes the
// report and postmortem, and uploads it; the workbench's report names the
// planted leak.
func TestAlertTriggersCapture(t *testing.T) {
	liveTest(t)
	p, leak := startLeaky(t, "")
	wb := newWorkbench(t)
	a := startAgent(t, Config{Node: "node-7", Select: Selection{PIDs: []int{p.PID}}, UploadTo: wb.srv.URL, WatchEvery: time.Second})
	waitFor(t, a, "the sample to be watched", func(st status) bool { return len(st.Targets) == 1 && st.Targets[0].Goroutines > 0 })

	u, _ := url.Parse(p.URL)
	post := func(body string) (int, []alertAnswer) {
		resp, err := http.Post("http://"+a.Addr()+"/alerts", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var ans struct{ Alerts []alertAnswer }
		json.NewDecoder(resp.Body).Decode(&ans)
		return resp.StatusCode, ans.Alerts
	}
	if code, _ := post("{not json"); code != http.StatusBadRequest {
		t.Errorf("bad notification: %d, want 400", code)
	}
	note := fmt.Sprintf(`{"version":"4","status":"firing","receiver":"leakscope-agent","externalURL":"http://alertmanager.example:9093","alerts":[
		{"status":"firing","labels":{"alertname":"GoroutineGrowthFast","instance":%q,"job":"svc"},"startsAt":"2026-01-01T00:00:00Z"},
		{"status":"firing","labels":{"alertname":"GoroutineGrowthFast","instance":"10.9.9.9:1","job":"other"}},
		{"status":"resolved","labels":{"alertname":"GoroutineGrowthFast","instance":%q}}]}`, u.Host, u.Host)
	code, ans := post(note)
	if code != http.StatusOK || len(ans) != 3 {
		t.Fatalf("webhook: %d %+v", code, ans)
	}
	if ans[0].Result != "started" || ans[0].PID != p.PID || ans[1].Result != "no_match" || ans[2].Result != "resolved" {
		t.Errorf("webhook answers %+v", ans)
	}
	// The same alert again while the capture runs: busy, not a second one.
	if _, again := post(note); again[0].Result != "busy" {
		t.Errorf("repeated alert: %+v", again[0])
	}
	st := waitFor(t, a, "the capture to be uploaded", func(st status) bool { return uploadedEntry(st) != nil })
	e := uploadedEntry(st)
	if !strings.Contains(e.Trigger, "GoroutineGrowthFast") || e.PID != p.PID {
		t.Errorf("entry %+v", e)
	}
	// The top suspect's count is worded as every view words it, unit
	// and all: "(60 goroutines)", never a raw "(60)".
	if !regexp.MustCompile(`\(\d[\d,]* goroutines?\)$`).MatchString(e.Top) {
		t.Errorf("entry's top suspect %q: count not worded as the reports word it", e.Top)
	}
	for _, f := range []string{reportFile, postmortemFile} {
		data, err := os.ReadFile(filepath.Join(a.cfg.SpoolDir, e.Name, f))
		if err != nil || !bytes.Contains(data, []byte(leak.Function)) {
			t.Errorf("%s does not name %s (err %v)", f, leak.Function, err)
		}
		// It names the alert that triggered it: name, labels, start and
		// the Alertmanager it came from.
		for _, want := range []string{`"GoroutineGrowthFast"`, `"instance"="` + u.Host + `"`, `"2026-01-01 00:00:00.000 UTC"`, `"http://alertmanager.example:9093"`, "captured on node node-7"} {
			if !bytes.Contains(data, []byte(want)) {
				t.Errorf("%s does not name the triggering alert's %s", f, want)
			}
		}
	}
	if _, err := os.Stat(filepath.Join(a.cfg.SpoolDir, e.Name, bundleDir)); !os.IsNotExist(err) {
		t.Errorf("uploaded bundle still in the spool (%v)", err)
	}
	sus := wb.report(t, e.UploadID)
	if len(sus) == 0 || sus[0].Location != leak.Function || sus[0].Pattern != leak.Pattern {
		t.Errorf("workbench report suspects %+v, want %s %s first", sus, leak.Pattern, leak.Function)
	}
	// The bundle, and so the workbench, names the agent's node.
	if node := wb.node(t, e.UploadID); node != "node-7" {
		t.Errorf("workbench says node %q, the agent runs as node-7", node)
	}
	wb.checkAlertTrigger(t, e.UploadID, u.Host)
	// After the capture: cooldown.
	if _, later := post(note); later[0].Result != "cooldown" {
		t.Errorf("alert after the capture: %+v", later[0])
	}
}

// TestRuleTriggersAndRetries lets the agent's own growth rule trigger on
// the leaky sample while the workbench's data directory is full (413), and
// checks the capture waits in the spool and is uploaded once there is room.
func TestRuleTriggersAndRetries(t *testing.T) {
	liveTest(t)
	exe := fmt.Sprintf("leaky-%d", os.Getpid())
	p, leak := startLeaky(t, exe)
	wb := newWorkbench(t)
	wb.down.Store(true)
	rule := Rule{Window: 20 * time.Second, GoroutinesPerMin: 30, For: 2 * time.Second, MinPoints: 3}
	a := startAgent(t, Config{Select: Selection{Exes: []string{exe}}, Rule: rule,
		UploadTo: wb.srv.URL, UploadBackoff: 500 * time.Millisecond, WatchEvery: time.Second})
	st := waitFor(t, a, "a failed upload", func(st status) bool {
		return len(st.Spool) == 1 && st.Spool[0].Attempts > 0 && st.Spool[0].State == StateReady
	})
	if e := st.Spool[0]; !strings.HasPrefix(e.Trigger, "growth rule: goroutines growing") || e.PID != p.PID {
		t.Errorf("entry %+v", e)
	}
	wb.down.Store(false)
	st = waitFor(t, a, "the upload after the workbench came back", func(st status) bool { return uploadedEntry(st) != nil })
	sus := wb.report(t, uploadedEntry(st).UploadID)
	if len(sus) == 0 || sus[0].Location != leak.Function {
		t.Errorf("workbench report suspects %+v, want %s first", sus, leak.Function)
	}
	// The bundle says the agent's rule started it, in the rule's words.
	if tr, text := wb.trigger(t, uploadedEntry(st).UploadID); tr == nil || tr.Source != bundle.TriggerRule || tr.Alert != nil ||
		!strings.HasPrefix(tr.Reason, "growth rule: goroutines growing") || !strings.HasPrefix(text, "the node agent's growth rule (goroutines growing") {
		t.Errorf("bundle's trigger %+v, report's %q", tr, text)
	}
	if wb.posts.Load() < 2 {
		t.Errorf("%d upload attempts, want a failed one and a good one", wb.posts.Load())
	}
	// The agent's own series.
	resp, err := http.Get("http://" + a.Addr() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{
		fmt.Sprintf(`leakscope_agent_process_goroutines{exe=%q,node=%q,pid="%d"}`, exe, a.cfg.Node, p.PID),
		`leakscope_agent_triggers_total{result="started",source="rule"} 1`,
		`leakscope_agent_captures_total{result="ok"} 1`,
		`leakscope_agent_uploads_total{result="ok"} 1`,
	} {
		if !bytes.Contains(body, []byte(want)) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	if bytes.Contains(body, []byte(`=""`)) {
		t.Errorf("/metrics has an empty label:\n%s", body)
	}
}

func TestMatches(t *testing.T) {
	p := Process{PID: 42, Exe: "/usr/bin/operator", Comm: "operator", Pod: "op-7d9f"}
	ep := endpoint{
		listeners: []netip.AddrPort{netip.MustParseAddrPort("127.0.0.1:6060"), netip.MustParseAddrPort("[::]:8080")},
		local:     []netip.Addr{netip.MustParseAddr("10.0.0.5"), netip.MustParseAddr("127.0.0.1")},
		names:     []string{"n1", "op-7d9f"},
	}
	for _, c := range []struct {
		labels map[string]string
		label  string
		ok     bool
	}{
		{map[string]string{"pid": "42"}, "pid", true},
		{map[string]string{"pid": "43", "exe": "operator"}, "pid", false},
		{map[string]string{"pod": "op-7d9f", "namespace": "ops"}, "pod", true},
		{map[string]string{"pod": "other"}, "pod", false},
		{map[string]string{"instance": "10.0.0.5:8080"}, "instance", true},
		{map[string]string{"instance": "op-7d9f:8080"}, "instance", true},
		{map[string]string{"instance": "127.0.0.1:6060"}, "instance", true},
		{map[string]string{"instance": "localhost:6060"}, "instance", true},
		// The port alone is not enough: another host's socket on it is
		// another process.
		{map[string]string{"instance": "10.0.0.6:8080"}, "", false},
		{map[string]string{"instance": "10.0.0.5:6060"}, "", false},
		{map[string]string{"instance": "other-host:8080"}, "", false},
		{map[string]string{"instance": "10.0.0.5:9090"}, "", false},
		{map[string]string{"instance": "10.0.0.5"}, "", false},
		{map[string]string{"exe": "operator"}, "exe", true},
		{map[string]string{"node": "other-node", "pid": "42"}, "", false},
		{map[string]string{"node": "n1", "pid": "42"}, "pid", true},
		{map[string]string{"job": "svc"}, "", false},
	} {
		label, ok := matches(Alert{Labels: c.labels}, "n1", p, ep)
		if ok != c.ok || (ok && label != c.label) {
			t.Errorf("%v: (%q, %v), want (%q, %v)", c.labels, label, ok, c.label, c.ok)
		}
	}
}

func TestParseFibTrie(t *testing.T) {
	const table = `Main:
  +-- 0.0.0.0/0 3 0 5
     |-- 0.0.0.0
        /0 universe UNICAST
     +-- 10.0.0.0/24 2 0 2
        |-- 10.0.0.0
           /24 link UNICAST
        |-- 10.0.0.5
           /32 host LOCAL
Local:
  +-- 127.0.0.0/8 2 0 2
     |-- 127.0.0.1
        /32 host LOCAL
`
	got, err := parseFibTrie(strings.NewReader(table))
	if err != nil || fmt.Sprint(got) != "[10.0.0.5 127.0.0.1]" {
		t.Errorf("parseFibTrie = %v, %v", got, err)
	}
}
