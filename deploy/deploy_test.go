package deploy

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/leakscope/leakscope/samples"
	"gopkg.in/yaml.v3"
)

// need returns the path of a tool, skipping the test without it (failing
// under CI, which installs it: make deps-apt).
func need(t *testing.T, tool string) string {
	t.Helper()
	p, err := exec.LookPath(tool)
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s not installed (make deps-apt installs it)", tool)
		}
		t.Skipf("%s not installed (make deps-apt installs it)", tool)
	}
	return p
}

func runTool(t *testing.T, name string, args ...string) string {
	t.Helper()
	out, err := exec.Command(need(t, name), args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

func TestRulesCheck(t *testing.T) {
	out := runTool(t, "promtool", "check", "rules", "prometheus/leakscope-rules.yml")
	if !strings.Contains(out, "SUCCESS: 6 rules found") {
		t.Errorf("promtool check rules:\n%s", out)
	}
}

// TestRulesUnit runs the rules' unit tests: fast and slow goroutine
// growth, heap growth and the agent's gauges fire; steady, bursty and
// shedding services do not.
func TestRulesUnit(t *testing.T) {
	out := runTool(t, "promtool", "test", "rules", "prometheus/leakscope-rules.test.yml")
	if !strings.Contains(out, "SUCCESS") {
		t.Errorf("promtool test rules:\n%s", out)
	}
}

// TestRulesNotRate keeps the rules off rate() and irate(), which read a
// gauge's drops as counter resets.
func TestRulesNotRate(t *testing.T) {
	var f struct {
		Groups []struct {
			Rules []struct {
				Alert, Expr string
			}
		}
	}
	readYAML(t, "prometheus/leakscope-rules.yml", &f)
	for _, g := range f.Groups {
		for _, r := range g.Rules {
			if strings.Contains(r.Expr, "rate(") {
				t.Errorf("%s uses rate() on a gauge: %s", r.Alert, r.Expr)
			}
		}
	}
}

func TestPrometheusConfig(t *testing.T) {
	runTool(t, "promtool", "check", "config", "prometheus/prometheus.yml")
}

func TestAlertmanagerConfig(t *testing.T) {
	out := runTool(t, "amtool", "check-config", "alertmanager/alertmanager.yml")
	if !strings.Contains(out, "SUCCESS") {
		t.Errorf("amtool check-config:\n%s", out)
	}
	var c struct {
		Route struct {
			Routes []struct {
				Receiver string
				Matchers []string
			}
		}
		Receivers []struct {
			Name           string
			WebhookConfigs []struct {
				URL          string
				SendResolved bool `yaml:"send_resolved"`
			} `yaml:"webhook_configs"`
		}
	}
	readYAML(t, "alertmanager/alertmanager.yml", &c)
	var routed bool
	for _, r := range c.Route.Routes {
		routed = routed || (r.Receiver == "leakscope-agent" && slices.Contains(r.Matchers, `leakscope="capture"`))
	}
	if !routed {
		t.Error(`no route sends leakscope="capture" alerts to the leakscope-agent receiver`)
	}
	for _, r := range c.Receivers {
		if r.Name == "leakscope-agent" && (len(r.WebhookConfigs) == 0 || !strings.HasSuffix(r.WebhookConfigs[0].URL, "/alerts")) {
			t.Errorf("receiver leakscope-agent does not post to the agent's /alerts: %+v", r.WebhookConfigs)
		}
		// The agent records on its capture when the alert that triggered
		// it resolves.
		if r.Name == "leakscope-agent" && len(r.WebhookConfigs) > 0 && !r.WebhookConfigs[0].SendResolved {
			t.Errorf("receiver leakscope-agent does not send resolved alerts")
		}
	}
}

func readYAML(t *testing.T, path string, v any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(data, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// leakscopeBinary builds the CLI once for the tests that run it.
var leakscopeBinary = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "leakscope-deploy-")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "leakscope")
	cmd := exec.Command("go", "build", "-o", bin, "../cmd/leakscope")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", &buildError{string(out), err}
	}
	return bin, nil
})

type buildError struct {
	out string
	err error
}

func (e *buildError) Error() string { return e.err.Error() + "\n" + e.out }

func TestMain(m *testing.M) {
	code := m.Run()
	samples.Cleanup()
	if bin, err := leakscopeBinary(); err == nil {
		os.RemoveAll(filepath.Dir(bin))
	}
	os.Exit(code)
}

// startsWith runs `leakscope ARGS...` with the test's overrides appended
// (flags given later win) and checks that it parses them and starts
// listening, then stops it.
func startsWith(t *testing.T, env []string, args ...string) {
	t.Helper()
	bin, err := leakscopeBinary()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	args = append(args, "--listen", "127.0.0.1:0", "--spool", t.TempDir(), "--pid", "1")
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = append(os.Environ(), env...)
	stdout, _ := cmd.StdoutPipe()
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, _ := bufio.NewReader(stdout).ReadString('\n')
	cmd.Process.Signal(os.Interrupt)
	cmd.Wait()
	if !strings.HasPrefix(line, "leakscope agent listening on ") {
		t.Errorf("leakscope %s did not start: %q\n%s", strings.Join(args, " "), line, stderr.String())
	}
}

// TestSystemdUnit verifies the unit with systemd-analyze (its ExecStart
// pointed at a freshly built binary) and runs its command line.
func TestSystemdUnit(t *testing.T) {
	tool := need(t, "systemd-analyze")
	bin, err := leakscopeBinary()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile("systemd/leakscope-agent.service")
	if err != nil {
		t.Fatal(err)
	}
	unit := strings.ReplaceAll(string(data), "/usr/local/bin/leakscope", bin)
	path := filepath.Join(t.TempDir(), "leakscope-agent.service")
	if err := os.WriteFile(path, []byte(unit), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(tool, "verify", path).CombinedOutput()
	if err != nil || len(strings.TrimSpace(string(out))) > 0 {
		t.Errorf("systemd-analyze verify: %v\n%s", err, out)
	}
	var exec string
	for _, l := range strings.Split(unit, "\n") {
		if s, ok := strings.CutPrefix(l, "ExecStart="); ok {
			exec = s
		}
	}
	// The command line as systemd expands it with the unit's defaults
	// ($LEAKSCOPE_AGENT_ARGS=--all; ${LEAKSCOPE_WORKBENCH} empty, one
	// word).
	exec = strings.ReplaceAll(exec, "$LEAKSCOPE_AGENT_ARGS", "--all")
	exec = strings.ReplaceAll(exec, "${LEAKSCOPE_WORKBENCH}", "''")
	words := strings.Fields(exec)
	for i, w := range words {
		if w == "''" {
			words[i] = ""
		}
	}
	if words[0] != bin || words[1] != "agent" {
		t.Fatalf("ExecStart runs %q", words[:2])
	}
	startsWith(t, nil, words[1:]...)
}

// TestDaemonSet checks the manifest's fields: host pid namespace, the
// capabilities eBPF and /proc need, the node name, the spool and tracefs
// mounts, a probe the agent answers, and arguments the CLI accepts.
func TestDaemonSet(t *testing.T) {
	f, err := os.Open("kubernetes/leakscope-agent.yaml")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	dec := yaml.NewDecoder(f)
	var ds *daemonSet
	for {
		var doc daemonSet
		if err := dec.Decode(&doc); err != nil {
			break
		}
		if doc.Kind == "DaemonSet" {
			ds = &doc
		}
	}
	if ds == nil {
		t.Fatal("no DaemonSet in the manifest")
	}
	if ds.APIVersion != "apps/v1" {
		t.Errorf("apiVersion %q", ds.APIVersion)
	}
	spec := ds.Spec.Template.Spec
	if !spec.HostPID {
		t.Error("hostPID is not set: the agent would see only its own pod's processes")
	}
	if len(spec.Containers) != 1 {
		t.Fatalf("%d containers", len(spec.Containers))
	}
	c := spec.Containers[0]
	for _, capName := range []string{"BPF", "PERFMON", "SYS_PTRACE", "SYS_ADMIN", "DAC_READ_SEARCH", "SYS_RESOURCE"} {
		if !slices.Contains(c.SecurityContext.Capabilities.Add, capName) {
			t.Errorf("capability %s not added", capName)
		}
	}
	if !slices.Contains(c.SecurityContext.Capabilities.Drop, "ALL") || c.SecurityContext.Privileged {
		t.Error("the container should drop ALL capabilities and not be privileged")
	}
	mounts := map[string]string{}
	for _, m := range c.VolumeMounts {
		mounts[m.MountPath] = m.Name
	}
	hostPaths := map[string]string{}
	for _, v := range spec.Volumes {
		hostPaths[v.Name] = v.HostPath.Path
	}
	for path, host := range map[string]string{"/sys/kernel/tracing": "/sys/kernel/tracing", "/sys/kernel/debug": "/sys/kernel/debug", "/var/lib/leakscope": "/var/lib/leakscope"} {
		if name, ok := mounts[path]; !ok || hostPaths[name] != host {
			t.Errorf("%s is not mounted from the host's %s", path, host)
		}
	}
	var nodeName bool
	env := []string{}
	for _, e := range c.Env {
		if e.Name == "NODE_NAME" && e.ValueFrom.FieldRef.FieldPath == "spec.nodeName" {
			nodeName = true
		}
		if e.ValueFrom.SecretKeyRef.Name != "" {
			env = append(env, e.Name+"=test-secret")
		}
	}
	if !nodeName {
		t.Error("NODE_NAME does not come from spec.nodeName")
	}
	if c.ReadinessProbe.HTTPGet.Path != "/healthz" {
		t.Errorf("readiness probe %q", c.ReadinessProbe.HTTPGet.Path)
	}
	if len(c.Args) == 0 || c.Args[0] != "agent" {
		t.Fatalf("args %q do not run the agent", c.Args)
	}
	if len(c.Ports) != 1 || c.Ports[0].ContainerPort != 9464 || !slices.Contains(c.Args, "--listen=0.0.0.0:9464") {
		t.Errorf("ports %+v do not match the agent's --listen", c.Ports)
	}
	startsWith(t, env, c.Args...)
}

// daemonSet is the part of a DaemonSet the test reads.
type daemonSet struct {
	APIVersion string `yaml:"apiVersion"`
	Kind       string `yaml:"kind"`
	Spec       struct {
		Template struct {
			Spec struct {
				HostPID    bool `yaml:"hostPID"`
				Containers []struct {
					Args []string `yaml:"args"`
					Env  []struct {
						Name      string `yaml:"name"`
						ValueFrom struct {
							FieldRef struct {
								FieldPath string `yaml:"fieldPath"`
							} `yaml:"fieldRef"`
							SecretKeyRef struct {
								Name string `yaml:"name"`
							} `yaml:"secretKeyRef"`
						} `yaml:"valueFrom"`
					} `yaml:"env"`
					Ports []struct {
						ContainerPort int `yaml:"containerPort"`
					} `yaml:"ports"`
					ReadinessProbe struct {
						HTTPGet struct {
							Path string `yaml:"path"`
						} `yaml:"httpGet"`
					} `yaml:"readinessProbe"`
					SecurityContext struct {
						Privileged   bool `yaml:"privileged"`
						Capabilities struct {
							Add  []string `yaml:"add"`
							Drop []string `yaml:"drop"`
						} `yaml:"capabilities"`
					} `yaml:"securityContext"`
					VolumeMounts []struct {
						Name      string `yaml:"name"`
						MountPath string `yaml:"mountPath"`
					} `yaml:"volumeMounts"`
				} `yaml:"containers"`
				Volumes []struct {
					Name     string `yaml:"name"`
					HostPath struct {
						Path string `yaml:"path"`
					} `yaml:"hostPath"`
				} `yaml:"volumes"`
			} `yaml:"spec"`
		} `yaml:"template"`
	} `yaml:"spec"`
}
