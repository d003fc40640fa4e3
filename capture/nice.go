package capture

import (
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// setNice gives every thread of this process the nice value n, so that on
// a busy node the target wins CPU contention against the capture. Linux
// applies nice per thread; threads created later inherit it.
func setNice(n int) error {
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return fmt.Errorf("set nice: %w", err)
	}
	for _, t := range tasks {
		tid, err := strconv.Atoi(t.Name())
		if err != nil {
			continue
		}
		if err := unix.Setpriority(unix.PRIO_PROCESS, tid, n); err != nil {
			return fmt.Errorf("set nice %d: %w", n, err)
		}
	}
	return nil
}
