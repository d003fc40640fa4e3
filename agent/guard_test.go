package agent

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"github.com/leakscope/leakscope/ingest/bundle"
	"io"
	"io/fs"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/leakscope/leakscope/capture"
	"github.com/leakscope/leakscope/cmd/leakscope/bundles"
	dto "github.com/prometheus/client_model/go"
)

// selfAgent runs an agent that selects the test process (which has no
// pprof endpoint: nothing is ever captured) and watches once an hour.
func selfAgent(t *testing.T, cfg Config) *Agent {
	t.Helper()
	cfg.Select = Selection{PIDs: []int{os.Getpid()}}
	cfg.WatchEvery = time.Hour
	return startAgent(t, cfg)
}

// do sends one request to the agent and returns its status and body.
func do(t *testing.T, a *Agent, method, path, host string, hdr map[string]string, body io.Reader) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, "http://"+a.Addr()+path, body)
	if err != nil {
		t.Fatal(err)
	}
	if host != "" {
		req.Host = host
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

const oneAlert = `{"version":"4","status":"firing","alerts":[{"status":"firing","labels":{"alertname":"A","pid":"1"}}]}`

// TestWebhookRefusesCrossSite: a web page's cross-site POST (text/plain
// needs no preflight) must not reach the webhook, nor any POST from
// another origin.
func TestWebhookRefusesCrossSite(t *testing.T) {
	a := selfAgent(t, Config{})
	for _, c := range []struct {
		hdr  map[string]string
		want int
	}{
		{map[string]string{"Content-Type": "text/plain", "Origin": "http://evil.example"}, http.StatusForbidden},
		{map[string]string{"Content-Type": "text/plain"}, http.StatusUnsupportedMediaType},
		{map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, http.StatusUnsupportedMediaType},
		{map[string]string{"Content-Type": "application/json", "Origin": "http://evil.example"}, http.StatusForbidden},
		{map[string]string{"Content-Type": "application/json"}, http.StatusOK},
	} {
		if code, body := do(t, a, "POST", "/alerts", "", c.hdr, strings.NewReader(oneAlert)); code != c.want {
			t.Errorf("%v: %d %s, want %d", c.hdr, code, body, c.want)
		}
	}
}

// TestAgentRefusesReboundHost: a name rebound to 127.0.0.1 by another
// site's DNS must not read /status.
func TestAgentRefusesReboundHost(t *testing.T) {
	a := selfAgent(t, Config{})
	_, port, _ := strings.Cut(a.Addr(), ":")
	if code, body := do(t, a, "GET", "/status", "evil.example:"+port, nil, nil); code != http.StatusForbidden {
		t.Errorf("rebound host: %d %s, want 403", code, body)
	}
	if code, _ := do(t, a, "GET", "/status", "localhost:"+port, nil, nil); code != http.StatusOK {
		t.Errorf("localhost: %d, want 200", code)
	}
}

// TestAgentNeedsTokenOffLoopback: off loopback, /status and the webhook
// need the token; /metrics and /healthz stay open to Prometheus.
func TestAgentNeedsTokenOffLoopback(t *testing.T) {
	a := selfAgent(t, Config{Listen: "0.0.0.0:0", WebhookToken: "s3cret"})
	auth := map[string]string{"Authorization": "Bearer s3cret", "Content-Type": "application/json"}
	for _, c := range []struct {
		method, path string
		hdr          map[string]string
		want         int
	}{
		{"GET", "/status", nil, http.StatusUnauthorized},
		{"GET", "/status", auth, http.StatusOK},
		{"GET", "/metrics", nil, http.StatusOK},
		{"GET", "/healthz", nil, http.StatusOK},
		{"POST", "/alerts", map[string]string{"Content-Type": "application/json"}, http.StatusUnauthorized},
		{"POST", "/alerts", auth, http.StatusOK},
	} {
		if code, body := do(t, a, c.method, c.path, "", c.hdr, strings.NewReader(oneAlert)); code != c.want {
			t.Errorf("%s %s %v: %d %s, want %d", c.method, c.path, c.hdr, code, body, c.want)
		}
	}
}

// scans reads the agent's count of looks through /proc.
func scans(t *testing.T, a *Agent) int {
	t.Helper()
	_, body := do(t, a, "GET", "/metrics", "", nil, nil)
	m := regexp.MustCompile(`(?m)^leakscope_agent_process_scans_total (\d+)`).FindStringSubmatch(body)
	if m == nil {
		t.Fatal("no leakscope_agent_process_scans_total in /metrics")
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// unmatched is a notification of n alerts that name no watched process.
func unmatched(n, pad int) string {
	var b strings.Builder
	b.WriteString(`{"version":"4","status":"firing","alerts":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"status":"firing","labels":{"alertname":"Flood","instance":"10.1.%d.%d:80","pad":%q}}`, i/250, i%250, strings.Repeat("x", pad))
	}
	b.WriteString(`]}`)
	return b.String()
}

// TestWebhookFloodIsBounded: 16 concurrent 3 MB notifications are refused
// unread, and a notification of 2,000 alerts that name no process looks
// through /proc at most once, not once per alert.
func TestWebhookFloodIsBounded(t *testing.T) {
	a := selfAgent(t, Config{})
	waitFor(t, a, "the first look for processes", func(status) bool { return scans(t, a) >= 1 })
	big := unmatched(3000, 1000)
	if len(big) < 3<<20 {
		t.Fatalf("flood body is %d bytes", len(big))
	}
	var wg sync.WaitGroup
	codes := make([]int, 16)
	for i := range codes {
		wg.Go(func() {
			codes[i], _ = do(t, a, "POST", "/alerts", "", map[string]string{"Content-Type": "application/json"}, strings.NewReader(big))
		})
	}
	wg.Wait()
	for i, c := range codes {
		if c != http.StatusRequestEntityTooLarge && c != http.StatusTooManyRequests {
			t.Errorf("3 MB notification %d: %d, want 413 or 429", i, c)
		}
	}
	before := scans(t, a)
	code, body := do(t, a, "POST", "/alerts", "", map[string]string{"Content-Type": "application/json"}, strings.NewReader(unmatched(2000, 0)))
	if code != http.StatusOK {
		t.Fatalf("2,000 alerts: %d %s", code, body)
	}
	if n := strings.Count(body, `"result":"no_match"`); n != maxAlertsPerNote {
		t.Errorf("%d alerts looked at, want %d", n, maxAlertsPerNote)
	}
	if n := strings.Count(body, `"result":"skipped"`); n != 2000-maxAlertsPerNote {
		t.Errorf("%d alerts skipped, want %d", n, 2000-maxAlertsPerNote)
	}
	if d := scans(t, a) - before; d > 1 {
		t.Errorf("one notification looked through /proc %d times, want at most once", d)
	}
}

// TestWebhookThrottles: while maxWebhookInFlight notifications are being
// handled, another is answered 429 with Retry-After.
func TestWebhookThrottles(t *testing.T) {
	a := selfAgent(t, Config{})
	for range maxWebhookInFlight {
		a.webhookSlots <- struct{}{}
	}
	code, _ := do(t, a, "POST", "/alerts", "", map[string]string{"Content-Type": "application/json"}, strings.NewReader(oneAlert))
	for range maxWebhookInFlight {
		<-a.webhookSlots
	}
	if code != http.StatusTooManyRequests {
		t.Errorf("notification over the bound: %d, want 429", code)
	}
}

// syncBuf is a log shared by the agent's goroutines.
type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestLogEscapesAlertLabels: a label with a newline cannot forge a log
// line.
func TestLogEscapesAlertLabels(t *testing.T) {
	var log syncBuf
	a := selfAgent(t, Config{Log: &log})
	note := `{"version":"4","alerts":[{"status":"firing","labels":{"alertname":"A","instance":"x:1\n2099-01-01T00:00:00Z agent: forged\r\u001b[2J"}}]}`
	if code, body := do(t, a, "POST", "/alerts", "", map[string]string{"Content-Type": "application/json"}, strings.NewReader(note)); code != http.StatusOK {
		t.Fatalf("%d %s", code, body)
	}
	out := log.String()
	if !strings.Contains(out, `forged`) {
		t.Fatalf("the alert was not logged:\n%s", out)
	}
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "2099") || strings.ContainsAny(line, "\r\x1b") {
			t.Errorf("forged or raw log line %q", line)
		}
	}
}

// TestAlertRefusesAmbiguousAndOtherHost: two processes of one executable
// are not told apart by their exe label, so an alert naming it starts no
// capture; an instance on another host with the port of a watched process
// names no watched process.
func TestAlertRefusesAmbiguousAndOtherHost(t *testing.T) {
	exe := fmt.Sprintf("twin-%d", os.Getpid())
	p1, _ := startLeaky(t, exe)
	p2, _ := startLeaky(t, exe)
	a := startAgent(t, Config{Select: Selection{Exes: []string{exe}}, WatchEvery: time.Second})
	waitFor(t, a, "both processes to be watched", func(st status) bool { return len(st.Targets) == 2 })
	_, port, _ := strings.Cut(strings.TrimPrefix(p1.URL, "http://"), ":")
	port = strings.TrimSuffix(port, "/")
	note := fmt.Sprintf(`{"version":"4","alerts":[
		{"status":"firing","labels":{"alertname":"A","exe":%q}},
		{"status":"firing","labels":{"alertname":"B","instance":"10.9.9.9:%s"}}]}`, exe, port)
	code, body := do(t, a, "POST", "/alerts", "", map[string]string{"Content-Type": "application/json"}, strings.NewReader(note))
	if code != http.StatusOK {
		t.Fatalf("%d %s", code, body)
	}
	if !strings.Contains(body, `"result":"ambiguous"`) || !strings.Contains(body, strconv.Itoa(p2.PID)) {
		t.Errorf("exe of two processes: %s, want ambiguous naming both", body)
	}
	if strings.Count(body, `"result":"started"`) != 0 || !strings.Contains(body, `"result":"no_match"`) {
		t.Errorf("answers %s: want no capture started, the other host's instance unmatched", body)
	}
}

// TestUploadErrorsRetried: a full data directory (413), a busy or
// unavailable workbench (429, 503) and a stalled upload (408) are tried
// again; a refused archive (400, 415) and a capture larger than the
// workbench takes at all (413, too-large) are final.
func TestUploadErrorsRetried(t *testing.T) {
	for code, want := range map[int]bool{400: true, 415: true, 408: false, 413: false, 429: false, 503: false, 401: false} {
		if got := final(&capture.UploadError{Code: code, Status: http.StatusText(code)}); got != want {
			t.Errorf("final(%d) = %v, want %v", code, got, want)
		}
	}
	if final(errors.New("connection refused")) {
		t.Error("a network error is final")
	}
	if !final(&capture.UploadError{Code: 413, Status: "413 Request Entity Too Large", TooLarge: true}) {
		t.Error("a capture larger than the workbench takes at all is retried")
	}
}

// TestRecoveredEntryGetsReports: an entry the agent was killed during,
// with a bundle of data, gets report.md and postmortem.md when the agent
// starts again, and its sources read interrupted.
func TestRecoveredEntryGetsReports(t *testing.T) {
	spool := t.TempDir()
	var l logs
	s, err := OpenSpool(spool, 0, l.logf)
	if err != nil {
		t.Fatal(err)
	}
	e, err := s.New(Process{PID: 4242, Exe: "/usr/bin/svc"}, "test", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	sub, err := fs.Sub(bundles.FS, "timeout-send.lsb")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.CopyFS(s.BundlePath(e), sub); err != nil {
		t.Fatal(err)
	}
	a := selfAgent(t, Config{SpoolDir: spool})
	st := waitFor(t, a, "the recovered entry's reports", func(st status) bool {
		return len(st.Spool) == 1 && st.Spool[0].Suspects > 0
	})
	if en := st.Spool[0]; en.State != StateReady || !en.Interrupted {
		t.Errorf("recovered entry %+v", en)
	}
	for _, f := range []string{reportFile, postmortemFile} {
		if data, err := os.ReadFile(s.Path(e, f)); err != nil || len(data) == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
}

// TestCooldownSurvivesRestart: an agent restarted minutes after it
// captured a process does not capture it again for the same alert.
func TestCooldownSurvivesRestart(t *testing.T) {
	p, _ := startLeaky(t, "")
	proc, err := readProcess(p.PID)
	if err != nil {
		t.Fatal(err)
	}
	spool := t.TempDir()
	var l logs
	s, err := OpenSpool(spool, 0, l.logf)
	if err != nil {
		t.Fatal(err)
	}
	e, err := s.New(proc, "alert GoroutineGrowthFast{}", time.Now().Add(-5*time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	e.State, e.Ended = StateUploaded, time.Now().Add(-3*time.Minute)
	if err := s.Save(e); err != nil {
		t.Fatal(err)
	}
	a := startAgent(t, Config{Select: Selection{PIDs: []int{p.PID}}, SpoolDir: spool, WatchEvery: time.Second})
	waitFor(t, a, "the sample to be watched", func(st status) bool { return len(st.Targets) == 1 })
	note := fmt.Sprintf(`{"version":"4","alerts":[{"status":"firing","labels":{"alertname":"GoroutineGrowthFast","pid":"%d"}}]}`, p.PID)
	code, body := do(t, a, "POST", "/alerts", "", map[string]string{"Content-Type": "application/json"}, strings.NewReader(note))
	if code != http.StatusOK || !strings.Contains(body, `"result":"cooldown"`) {
		t.Errorf("alert 3 minutes after the last capture, agent restarted: %d %s, want cooldown", code, body)
	}
}

// TestRuleCooldownCountedOnce: the growth rule fires at every watch
// sample during a cooldown; the trigger counter counts the cooldown once,
// not every sample, while alerts are counted each.
func TestRuleCooldownCountedOnce(t *testing.T) {
	a := &Agent{m: newMetrics(), cfg: Config{Cooldown: time.Hour}, runCtx: context.Background()}
	tg := &target{proc: Process{PID: 7}, lastCapture: time.Now()}
	for range 5 {
		if r, _ := a.trigger(tg, "rule", "growth rule", nil); r != "cooldown" {
			t.Fatalf("trigger: %s", r)
		}
	}
	a.trigger(tg, "alert", "alert", nil)
	a.trigger(tg, "alert", "alert", nil)
	for source, want := range map[string]float64{"rule": 1, "alert": 2} {
		if got := counter(a.m, source, "cooldown"); got != want {
			t.Errorf("%s cooldowns counted %g, want %g", source, got, want)
		}
	}
	tg.lastCapture = time.Now().Add(time.Second) // a later capture: a cooldown of its own
	a.trigger(tg, "rule", "growth rule", nil)
	if got := counter(a.m, "rule", "cooldown"); got != 2 {
		t.Errorf("after a later capture, rule cooldowns counted %g, want 2", got)
	}
}

// counter reads the trigger counter of source and result.
func counter(m *metrics, source, result string) float64 {
	var d dto.Metric
	m.triggers.WithLabelValues(source, result).Write(&d)
	return d.GetCounter().GetValue()
}

// TestWebhookLogIsBounded: a flood of notifications whose alerts match
// nothing, each with long labels, logs a line or two, not a line per
// alert; the next line of the kind says how many were left out.
func TestWebhookLogIsBounded(t *testing.T) {
	var log syncBuf
	a := selfAgent(t, Config{Log: &log})
	note := unmatched(maxAlertsPerNote, 2000)
	for range 10 {
		if code, body := do(t, a, "POST", "/alerts", "", map[string]string{"Content-Type": "application/json"}, strings.NewReader(note)); code != http.StatusOK {
			t.Fatalf("%d %s", code, body)
		}
	}
	var lines int
	for _, l := range strings.Split(log.String(), "\n") {
		if strings.Contains(l, "alert Flood") {
			lines++
			if len(l) > 2*maxAlertLogLine {
				t.Errorf("a line of %d bytes", len(l))
			}
		}
	}
	if lines != 1 {
		t.Errorf("%d lines logged for %d unmatched alerts, want 1", lines, 10*maxAlertsPerNote)
	}
	a.quiet.mu.Lock()
	a.quiet.last["no_match"] = time.Time{}
	a.quiet.mu.Unlock()
	do(t, a, "POST", "/alerts", "", map[string]string{"Content-Type": "application/json"}, strings.NewReader(unmatched(1, 0)))
	if want := fmt.Sprintf("(%d more no_match lines since the last were not logged)", 10*maxAlertsPerNote-1); !strings.Contains(log.String(), want) {
		t.Errorf("the next line does not say %q:\n%s", want, log.String())
	}
}

// TestResolvedAlertRecorded: a resolved alert (the shipped route sends
// them) is recorded on the spool entry of the capture it triggered, by
// its fingerprint, with when it resolved.
func TestResolvedAlertRecorded(t *testing.T) {
	var log syncBuf
	a := selfAgent(t, Config{Log: &log})
	e, err := a.spool.New(Process{PID: 42, Exe: "/bin/svc", Start: 1}, "alert", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	e.State, e.Alert = StateUploaded, &AlertInfo{Alert: bundle.Alert{Name: "GoroutineGrowthFast", Labels: map[string]string{"alertname": "GoroutineGrowthFast"}, Fingerprint: "f00d"}}
	if err := a.spool.Save(e); err != nil {
		t.Fatal(err)
	}
	note := `{"version":"4","status":"resolved","alerts":[{"status":"resolved","labels":{"alertname":"GoroutineGrowthFast"},"endsAt":"2026-01-02T03:04:05Z","fingerprint":"f00d"}]}`
	code, body := do(t, a, "POST", "/alerts", "", map[string]string{"Content-Type": "application/json"}, strings.NewReader(note))
	if code != http.StatusOK || !strings.Contains(body, `"result":"resolved"`) || !strings.Contains(body, "recorded on "+e.Name) {
		t.Fatalf("%d %s", code, body)
	}
	es, _ := a.spool.Entries()
	if len(es) != 1 || es[0].Alert == nil || es[0].Alert.ResolvedAt.Format(time.RFC3339) != "2026-01-02T03:04:05Z" {
		t.Errorf("entry %+v", es[0].Alert)
	}
	if !strings.Contains(log.String(), "resolved at 2026-01-02T03:04:05Z; recorded on "+e.Name) {
		t.Errorf("not logged:\n%s", log.String())
	}
}
