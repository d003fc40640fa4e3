package deploy

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/leakscope/leakscope/samples"
	"gopkg.in/yaml.v3"
)

// TestAlertToPostmortem runs the unattended path with the real parts, all
// on loopback: a leaky sample exporting go_goroutines (client_golang, as an
// instrumented service does), Debian's Prometheus scraping it every second
// with the shipped GoroutineGrowthFast rule (windows shortened), Debian's
// Alertmanager routing the alert to `leakscope agent`'s webhook, the agent
// capturing the process the alert's instance label names and uploading it
// to `leakscope serve`, whose report must name the planted leak. Every
// wait is on observed state, with deadlines generous for a loaded 2-core
// machine.
func TestAlertToPostmortem(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test skipped with -short")
	}
	promBin, amBin := need(t, "prometheus"), need(t, "prometheus-alertmanager")
	bin, err := leakscopeBinary()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	r := &alertRig{t: t, ctx: ctx, tmp: t.TempDir(), bin: bin}
	r.startService()
	defer r.svc.Stop()
	r.startWorkbenchAndAgent()
	r.startAlertmanager(amBin)
	r.startPrometheus(promBin)

	// The alert fires in Prometheus…
	waitUntil(t, ctx, "GoroutineGrowthFast to fire in Prometheus", func() (bool, string) {
		found, state := r.promAlert("GoroutineGrowthFast", "instance", r.target)
		return found && state == "firing", state
	})
	// …the capture lands in the workbench…
	id := r.waitForCapture()
	// …and its report names the leak.
	r.checkReport(id)
	r.checkSpool(id)
	// When Alertmanager says the alert began firing, read now: the
	// checks of the trigger run once LeakSuspectFound is done, which
	// needs the capture to be recent.
	fired := r.amStartsAt("GoroutineGrowthFast")

	// The workbench's suspect fires LeakSuspectFound, which resolves once
	// no capture within the (shortened) window shows it.
	leakAlert := func() (bool, string) { return r.promAlert("LeakSuspectFound", "location", r.leak.Function) }
	waitUntil(t, ctx, "LeakSuspectFound to fire", leakAlert)
	r.writeRules(leakWindowPast)
	waitUntil(t, ctx, "LeakSuspectFound to resolve", func() (bool, string) {
		firing, state := leakAlert()
		return !firing, state
	})
	r.checkTrigger(id, fired)
	r.checkRestartCooldown()
}

// alertRig is the set of processes of [TestAlertToPostmortem] and where
// they listen.
type alertRig struct {
	t        *testing.T
	ctx      context.Context
	tmp, bin string

	svc    *samples.Process
	leak   samples.Leak
	target string // the service's HOST:PORT, its alerts' instance label

	serveURL, agentURL string
	agentArgs          []string
	stopAgent          func()
	amAddr, promAddr   string
}

// The LeakSuspectFound window of the test, in seconds, in place of the
// shipped 6 h: one a capture is within however long the machine takes
// to upload and analyse it, then, once it fired, one every capture is
// past (Prometheus reloads the rules), so the alert resolves.
const (
	leakWindowRecent = "3600"
	leakWindowPast   = "1"
)

// startService starts the leaky service, timeout-send at 50 requests a
// second, and notes the leak it plants.
func (r *alertRig) startService() {
	t := r.t
	root, err := samples.Root()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "timeout-send")
	truth, err := samples.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	r.leak = truth.Leaks[0]
	if r.svc, err = samples.Start(r.ctx, dir, "-rate", "50"); err != nil {
		t.Fatal(err)
	}
	r.target = strings.TrimPrefix(r.svc.URL, "http://")
}

// startWorkbenchAndAgent starts the workbench and the agent watching the
// service (its own growth rule off: the alert is the trigger).
func (r *alertRig) startWorkbenchAndAgent() {
	r.serveURL, _ = startDaemon(r.t, r.ctx, "serve", "leakscope workbench on ", r.bin,
		"serve", "--addr", "127.0.0.1:0", "--data", filepath.Join(r.tmp, "data"), "--no-samples")
	r.agentArgs = []string{"agent", "--pid", fmt.Sprint(r.svc.PID), "--listen", freeAddr(r.t), "--spool", filepath.Join(r.tmp, "spool"),
		"--to", r.serveURL, "--goroutine-growth", "0", "--watch-every", "1s",
		"--capture-duration", "8s", "--capture-interval", "2s", "--no-ebpf"}
	r.agentURL, r.stopAgent = startDaemon(r.t, r.ctx, "agent", "leakscope agent listening on ", r.bin, r.agentArgs...)
}

// startAlertmanager starts Alertmanager routing leakscope="capture"
// alerts to the agent, at once.
func (r *alertRig) startAlertmanager(amBin string) {
	r.amAddr = freeAddr(r.t)
	writeFile(r.t, filepath.Join(r.tmp, "alertmanager.yml"), fmt.Sprintf(`route:
  receiver: none
  routes:
    - receiver: leakscope-agent
      matchers: ['leakscope="capture"']
      group_by: [alertname, instance]
      group_wait: 1s
      group_interval: 1s
      repeat_interval: 2s
receivers:
  - name: none
  - name: leakscope-agent
    webhook_configs:
      - url: %s/alerts
        send_resolved: true
`, strings.TrimSuffix(r.agentURL, "/")))
	startProcess(r.t, r.ctx, "alertmanager", amBin, "--config.file="+filepath.Join(r.tmp, "alertmanager.yml"),
		"--storage.path="+filepath.Join(r.tmp, "am"), "--web.listen-address="+r.amAddr, "--cluster.listen-address=")
}

// startPrometheus starts Prometheus scraping the service and the
// workbench with the shipped rules at second-scale windows.
func (r *alertRig) startPrometheus(promBin string) {
	t := r.t
	r.writeRules(leakWindowRecent)
	r.promAddr = freeAddr(t)
	writeFile(t, filepath.Join(r.tmp, "prometheus.yml"), fmt.Sprintf(`global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files: [rules.yml]
alerting:
  alertmanagers:
    - static_configs: [{targets: [%q]}]
scrape_configs:
  - job_name: svc
    static_configs: [{targets: [%q]}]
  - job_name: workbench
    static_configs: [{targets: [%q]}]
`, r.amAddr, r.target, strings.TrimSuffix(strings.TrimPrefix(r.serveURL, "http://"), "/")))
	startProcess(t, r.ctx, "prometheus", promBin, "--config.file="+filepath.Join(r.tmp, "prometheus.yml"),
		"--storage.tsdb.path="+filepath.Join(r.tmp, "tsdb"), "--web.listen-address="+r.promAddr, "--web.enable-lifecycle")
}

// writeRules writes the shipped rules at second-scale windows, with
// LeakSuspectFound counting captures that ended within window seconds,
// and, once Prometheus runs, has it load them again. LeakSuspectFound
// keeps firing 2 s instead of 15 min, so it resolves within the test,
// and takes any score (an 8 s capture scores less than 80; promtool
// tests the threshold and the restarts keep_firing_for bridges).
func (r *alertRig) writeRules(window string) {
	t := r.t
	leakRule := shippedRule(t, "LeakSuspectFound", "6 * 3600", window, "")
	leakRule["expr"] = strings.Replace(leakRule["expr"].(string), ">= 80", ">= 1", 1)
	leakRule["keep_firing_for"] = "2s"
	writeFile(t, filepath.Join(r.tmp, "rules.yml"), rulesYAML(t,
		shippedRule(t, "GoroutineGrowthFast", "[5m]", "[20s]", "5s"), leakRule))
	if r.promAddr == "" {
		return
	}
	resp, err := http.Post("http://"+r.promAddr+"/-/reload", "", nil)
	if err != nil {
		t.Fatalf("reload Prometheus's rules: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("reload Prometheus's rules: %s", resp.Status)
	}
}

// promAlert reports whether Prometheus has the alert name with label set
// to value, and its state; or, when it has not, what it has.
func (r *alertRig) promAlert(name, label, value string) (bool, string) {
	var resp struct {
		Data struct {
			Alerts []struct {
				Labels map[string]string
				State  string
			}
		}
	}
	if err := getJSON("http://"+r.promAddr+"/api/v1/alerts", &resp); err != nil {
		return false, err.Error()
	}
	for _, a := range resp.Data.Alerts {
		if a.Labels["alertname"] == name && a.Labels[label] == value {
			return true, a.State
		}
	}
	return false, fmt.Sprintf("no %s: alerts %+v", name, resp.Data.Alerts)
}

// waitForCapture waits for the first final capture in the workbench
// (the agent's preliminary first answer comes before it, under the same
// id) and returns its id.
func (r *alertRig) waitForCapture() string {
	var id string
	waitUntil(r.t, r.ctx, "the final capture in the workbench", func() (bool, string) {
		var caps []struct {
			ID          string
			Preliminary bool
		}
		if err := getJSON(r.serveURL+"/api/captures", &caps); err != nil {
			return false, err.Error()
		}
		if len(caps) > 0 && !caps[0].Preliminary {
			id = caps[0].ID
			return true, ""
		}
		return false, fmt.Sprintf("captures %+v", caps)
	})
	return id
}

// checkReport checks that the workbench's report of capture id is of the
// service and names the planted leak first.
func (r *alertRig) checkReport(id string) {
	var rep struct {
		Bundle   struct{ PID int }
		Suspects []struct{ Pattern, Location string }
	}
	if err := getJSON(r.serveURL+"/api/captures/"+id+"/report?format=json", &rep); err != nil {
		r.t.Fatal(err)
	}
	if rep.Bundle.PID != r.svc.PID || len(rep.Suspects) == 0 || rep.Suspects[0].Location != r.leak.Function || rep.Suspects[0].Pattern != r.leak.Pattern {
		r.t.Fatalf("report of capture %s: pid %d, suspects %+v; want pid %d, %s at %s first", id, rep.Bundle.PID, rep.Suspects, r.svc.PID, r.leak.Pattern, r.leak.Function)
	}
}

// agentSpool is the spool part of the agent's /status.
type agentSpool struct {
	Spool []struct {
		Name, Trigger, State string
		UploadID             string `json:"upload_id"`
	}
}

// checkSpool checks that the agent says why it captured, uploaded the
// capture as id, and kept a postmortem naming the leak and the alert.
func (r *alertRig) checkSpool(id string) {
	t := r.t
	var st agentSpool
	// The workbench holds the capture before the agent has read its
	// answer and saved the upload's id.
	waitUntil(t, r.ctx, "the agent to record the upload", func() (bool, string) {
		if err := getJSON(r.agentURL+"status", &st); err != nil {
			return false, err.Error()
		}
		return len(st.Spool) == 1 && st.Spool[0].UploadID != "", fmt.Sprintf("agent spool %+v", st.Spool)
	})
	if len(st.Spool) != 1 || !strings.Contains(st.Spool[0].Trigger, "alert GoroutineGrowthFast") || st.Spool[0].UploadID != id {
		t.Fatalf("agent spool %+v", st.Spool)
	}
	pm, err := os.ReadFile(filepath.Join(r.tmp, "spool", st.Spool[0].Name, "postmortem.md"))
	if err != nil || !strings.Contains(string(pm), r.leak.Function) {
		t.Errorf("postmortem does not name %s (%v)", r.leak.Function, err)
	}
	// The postmortem names the alert: its name, instance, start and the
	// Alertmanager that sent it.
	for _, want := range []string{"**Trigger:** Alertmanager alert GoroutineGrowthFast", `"GoroutineGrowthFast"`, `"instance"="` + r.target + `"`, "firing since", "alertmanager "} {
		if !strings.Contains(string(pm), want) {
			t.Errorf("postmortem does not name the alert (%s):\n%s", want, pm)
		}
	}
}

// checkRestartCooldown kills the agent and starts it again within the
// cooldown: it hears the alert again (Alertmanager repeats it) and does
// not capture again.
func (r *alertRig) checkRestartCooldown() {
	t := r.t
	r.stopAgent()
	r.agentURL, _ = startDaemon(t, r.ctx, "agent (restarted)", "leakscope agent listening on ", r.bin, r.agentArgs...)
	waitUntil(t, r.ctx, "the restarted agent to refuse the repeated alert (cooldown)", func() (bool, string) {
		resp, err := http.Get(r.agentURL + "metrics")
		if err != nil {
			return false, err.Error()
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return strings.Contains(string(body), `leakscope_agent_triggers_total{result="cooldown",source="alert"}`), "no cooldown yet"
	})
	var st agentSpool
	if err := getJSON(r.agentURL+"status", &st); err != nil {
		t.Fatal(err)
	}
	if len(st.Spool) != 1 {
		t.Errorf("after the restart the spool holds %d captures, want the one: %+v", len(st.Spool), st.Spool)
	}
}

// shippedRule returns the shipped alert name with window replaced by short
// in its expression and its for: set to forDur (when not empty), so the
// test's alert is the shipped expression at second scale.
func shippedRule(t *testing.T, name, window, short, forDur string) map[string]any {
	t.Helper()
	var f struct {
		Groups []struct {
			Rules []map[string]any
		}
	}
	readYAML(t, "prometheus/leakscope-rules.yml", &f)
	for _, g := range f.Groups {
		for _, r := range g.Rules {
			if r["alert"] != name {
				continue
			}
			expr := r["expr"].(string)
			if !strings.Contains(expr, window) {
				t.Fatalf("%s has no %s window: %s", name, window, expr)
			}
			r["expr"] = strings.ReplaceAll(expr, window, short)
			if forDur != "" {
				r["for"] = forDur
			}
			return r
		}
	}
	t.Fatalf("no alert %s in the shipped rules", name)
	return nil
}

// rulesYAML is a rules file of one group holding rules.
func rulesYAML(t *testing.T, rules ...map[string]any) string {
	t.Helper()
	rs := make([]any, len(rules))
	for i, r := range rules {
		rs[i] = r
	}
	out, err := yaml.Marshal(map[string]any{"groups": []any{map[string]any{"name": "e2e", "rules": rs}}})
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// startDaemon runs a leakscope command until the test ends (or stop kills
// it with SIGKILL) and returns the URL from its first stdout line (after
// prefix), ending in a slash.
func startDaemon(t *testing.T, ctx context.Context, name, prefix, bin string, args ...string) (u string, stop func()) {
	t.Helper()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 30 * time.Second
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	logTo(t, name, cmd)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Signal(os.Interrupt); cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, prefix) {
		t.Fatalf("%s: first line %q (%v)", name, line, err)
	}
	u = strings.Fields(strings.TrimPrefix(line, prefix))[0]
	if !strings.HasSuffix(u, "/") {
		u += "/"
	}
	go io.Copy(io.Discard, out)
	return u, func() { cmd.Process.Kill(); cmd.Wait() }
}

// startProcess runs a daemon of Debian's until the test ends.
func startProcess(t *testing.T, ctx context.Context, name, bin string, args ...string) {
	t.Helper()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 10 * time.Second
	logTo(t, name, cmd)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Signal(os.Interrupt); cmd.Wait() })
}

// logTo keeps the tail of a daemon's stderr for the test log on failure.
func logTo(t *testing.T, name string, cmd *exec.Cmd) {
	var buf tail
	cmd.Stderr = &buf
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("%s stderr (tail):\n%s", name, buf.String())
		}
	})
}

type tail struct{ b []byte }

func (w *tail) Write(p []byte) (int, error) {
	w.b = append(w.b, p...)
	if len(w.b) > 32<<10 {
		w.b = w.b[len(w.b)-32<<10:]
	}
	return len(p), nil
}

func (w *tail) String() string { return string(w.b) }

// freeAddr returns a loopback address with a port free right now.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func getJSON(u string, v any) error {
	if _, err := url.Parse(u); err != nil {
		return err
	}
	c := http.Client{Timeout: 10 * time.Second}
	resp, err := c.Get(u)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return fmt.Errorf("GET %s: %s %s", u, resp.Status, b)
	}
	return json.NewDecoder(resp.Body).Decode(v)
}

// waitUntil polls cond until it holds, failing with its last word after a
// deadline of several minutes.
func waitUntil(t *testing.T, ctx context.Context, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(4 * time.Minute)
	var last string
	for time.Now().Before(deadline) && ctx.Err() == nil {
		ok, why := cond()
		if ok {
			return
		}
		last = why
		time.Sleep(500 * time.Millisecond)
	}
	t.Fatalf("timed out waiting for %s: %s", what, last)
}
