// Package killpoint lets a test kill the process with SIGKILL at a named
// step, to check that what the step guards survives kill -9 at every point.
//
// LEAKSCOPE_KILLPOINT=NAME:N makes the Nth call of At(NAME) kill the
// process (N defaults to 1). Without the variable, At does nothing but
// read one int.
package killpoint

import (
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// Env is the environment variable that names the kill point.
const Env = "LEAKSCOPE_KILLPOINT"

var (
	once  sync.Once
	name  string
	nth   int
	mu    sync.Mutex
	count int
)

// At marks a step. When the environment names it, the process kills
// itself there.
func At(point string) {
	once.Do(func() {
		name, nth = parse(os.Getenv(Env))
	})
	if name == "" || point != name {
		return
	}
	mu.Lock()
	count++
	hit := count == nth
	mu.Unlock()
	if hit {
		syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {} // SIGKILL is not delivered synchronously
	}
}

func parse(v string) (string, int) {
	n, k := v, 1
	if i := strings.LastIndexByte(v, ':'); i >= 0 {
		if x, err := strconv.Atoi(v[i+1:]); err == nil && x > 0 {
			n, k = v[:i], x
		}
	}
	return n, k
}
