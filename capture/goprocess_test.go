package capture

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestCheckGoProcess checks that a non-Go process (sleep, from coreutils)
// is refused with a message saying so, and this Go test binary is not.
func TestCheckGoProcess(t *testing.T) {
	if err := checkGoProcess(os.Getpid()); err != nil {
		t.Fatalf("this Go test process refused: %v", err)
	}
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Fatalf("no sleep binary to run as a non-Go process: %v", err)
	}
	cmd := exec.Command(sleep, "30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	err = checkGoProcess(cmd.Process.Pid)
	if err == nil || !strings.Contains(err.Error(), "is not a Go program") {
		t.Errorf("sleep (pid %d): err %v, want it named not a Go program", cmd.Process.Pid, err)
	}
}
