package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/leakscope/leakscope/ingest/killpoint"
)

// childEnv makes the test binary, run as a child, run an agent from the
// JSON childConfig it holds until it is killed (see TestMain).
const childEnv = "LEAKSCOPE_TEST_AGENT_CHILD"

type childConfig struct {
	PID      int
	Listen   string
	Spool    string
	UploadTo string
}

// runChild runs an agent as the kill-point test's child.
func runChild(arg string) int {
	var c childConfig
	if err := json.Unmarshal([]byte(arg), &c); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	cfg := Config{Select: Selection{PIDs: []int{c.PID}}, Listen: c.Listen, SpoolDir: c.Spool, UploadTo: c.UploadTo,
		WatchEvery: time.Second, Version: "test", UploadBackoff: 500 * time.Millisecond}
	cfg.Capture.Duration, cfg.Capture.Interval = 6*time.Second, 2*time.Second
	cfg.Capture.TraceWindow, cfg.Capture.NoEBPF = time.Second, true
	a, err := New(cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := a.Run(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// TestAgentKillAtEveryStep lets an agent in a child process capture a
// leaky sample on an alert and kills it with SIGKILL at each step: after
// the capture, after the reports, after the upload, after the upload's id
// is saved. An agent started again on the spool finishes the job: the
// workbench holds the capture exactly once, and the entry has its
// reports.
func TestAgentKillAtEveryStep(t *testing.T) {
	liveTest(t)
	p, _ := startLeaky(t, "")
	for _, point := range []string{"agent:captured", "agent:reported", "agent:uploaded", "spool:id-saved"} {
		t.Run(strings.ReplaceAll(point, ":", "-"), func(t *testing.T) {
			wb := newWorkbench(t)
			spool := t.TempDir()
			listen := freeAddr(t)
			cfg, _ := json.Marshal(childConfig{PID: p.PID, Listen: listen, Spool: spool, UploadTo: wb.srv.URL})
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), childEnv+"="+string(cfg), killpoint.Env+"="+point)
			var out strings.Builder
			cmd.Stdout, cmd.Stderr = &out, &out
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer func() { cmd.Process.Kill(); cmd.Wait() }()
			note := fmt.Sprintf(`{"version":"4","alerts":[{"status":"firing","labels":{"alertname":"A","pid":"%d"}}]}`, p.PID)
			deadline := time.Now().Add(3 * time.Minute)
			for {
				resp, err := http.Post("http://"+listen+"/alerts", "application/json", strings.NewReader(note))
				if err == nil {
					resp.Body.Close()
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("the child agent never listened: %v\n%s", err, out.String())
				}
				time.Sleep(100 * time.Millisecond)
			}
			err := cmd.Wait()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != -1 {
				t.Fatalf("the child was not killed at %s: %v\n%s", point, err, out.String())
			}
			a := startAgent(t, Config{Select: Selection{PIDs: []int{p.PID}}, SpoolDir: spool, UploadTo: wb.srv.URL,
				UploadBackoff: 500 * time.Millisecond, WatchEvery: time.Second})
			st := waitFor(t, a, "the capture to be uploaded", func(st status) bool { return uploadedEntry(st) != nil })
			if len(st.Spool) != 1 {
				t.Errorf("spool %+v, want the one entry", st.Spool)
			}
			if n := len(wb.store.List()); n != 1 {
				t.Errorf("killed at %s: the workbench holds %d captures, want 1", point, n)
			}
			for _, f := range []string{reportFile, postmortemFile} {
				if _, err := os.Stat(a.spool.Path(uploadedEntry(st), f)); err != nil {
					t.Errorf("killed at %s: %v", point, err)
				}
			}
		})
	}
}
