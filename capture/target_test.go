package capture

import (
	"os"
	"os/exec"
	"testing"
	"time"
)

// TestProcessStart: a process started now reads as started now, to the
// clock tick and the second of the boot time's resolution.
func TestProcessStart(t *testing.T) {
	before := time.Now()
	cmd := exec.Command("sleep", "5")
	if err := cmd.Start(); err != nil {
		t.Skip("no sleep:", err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	after := time.Now()
	got, err := ProcessStart(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	// btime is whole seconds and the start time whole ticks: the bound is
	// what those resolutions allow, not a guess.
	slack := time.Second + time.Second/clockTicks
	if got.Before(before.Add(-slack)) || got.After(after.Add(slack)) {
		t.Errorf("process start %v, want within [%v, %v] ± %v", got, before, after, slack)
	}
	self, err := ProcessStart(os.Getpid())
	if err != nil || !self.Before(got.Add(slack)) {
		t.Errorf("own start %v (%v) after the child's %v", self, err, got)
	}
	if _, err := ProcessStart(1 << 30); err == nil {
		t.Error("no error for a missing pid")
	}
}

// TestDefaultNode: a capture names the node by $NODE_NAME (the DaemonSet
// sets it from spec.nodeName) before the host name (a pod's own name).
func TestDefaultNode(t *testing.T) {
	t.Setenv("NODE_NAME", "node-9")
	if got := DefaultNode(); got != "node-9" {
		t.Errorf("DefaultNode with NODE_NAME=node-9: %q", got)
	}
	t.Setenv("NODE_NAME", "")
	if h, _ := os.Hostname(); DefaultNode() != h {
		t.Errorf("DefaultNode without NODE_NAME: %q, host name %q", DefaultNode(), h)
	}
}
