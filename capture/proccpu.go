package capture

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// processCPU reads the user plus system CPU time of process pid (all its
// threads, including the time they spend in uprobe handlers) from
// /proc/PID/stat.
func processCPU(pid int) (time.Duration, error) {
	path := fmt.Sprintf("/proc/%d/stat", pid)
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	if i < 0 || i+2 > len(s) {
		return 0, fmt.Errorf("%s: no command name in %q", path, s)
	}
	// After "pid (comm) ", fields start at state (3); utime is 14, stime 15.
	f := strings.Fields(s[i+2:])
	if len(f) < 15-2 {
		return 0, fmt.Errorf("%s: %d fields after the command name, want at least 13", path, len(f))
	}
	ut, err1 := strconv.ParseInt(f[14-3], 10, 64)
	st, err2 := strconv.ParseInt(f[15-3], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("%s: utime %q, stime %q are not numbers", path, f[14-3], f[15-3])
	}
	const clkTck = 100 // USER_HZ on Linux
	return time.Duration(ut+st) * time.Second / clkTck, nil
}
