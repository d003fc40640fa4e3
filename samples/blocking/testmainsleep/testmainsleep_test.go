// Package testmainsleep: the test binary's TestMain runs the tests in a
// goroutine and sleeps in main, as a harness waiting for its own
// deadline does. The test's registry locks its mutex in add and again in
// count, which add calls. A SIGQUIT sent from outside finds main asleep,
// the test runner in testing.(*T).Run and the test goroutine on its own
// lock.
package testmainsleep

import (
	"os"
	"sync"
	"testing"
	"time"
)

type registry struct {
	mu    sync.Mutex
	names map[string]int
}

func (r *registry) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.names)
}

func (r *registry) add(name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.names[name] = r.count() // bug: count locks r.mu again
}

func TestRegister(t *testing.T) {
	r := &registry{names: map[string]int{}}
	r.add("etcd")
}

func TestMain(m *testing.M) {
	go func() { os.Exit(m.Run()) }()
	time.Sleep(time.Hour)
}
