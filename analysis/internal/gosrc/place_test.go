package gosrc

import "testing"

// placeSrc has locks held by value at known offsets in structs that
// parameters point to, a parameter the function reassigns, and a lock
// reached through a pointer field.
const placeSrc = `package main

import (
	"sync"
	"time"
)

type inner struct {
	n  int64
	mu sync.Mutex
}

type store struct {
	id    int64
	flag  bool
	state inner
	peer  *store
	lock  *sync.Mutex
}

func (s *store) hold(d time.Duration) {
	s.state.mu.Lock()
	defer s.state.mu.Unlock()
	time.Sleep(d) // @hold
}

func moved(s *store, d time.Duration) {
	s.state.mu.Lock()
	defer s.state.mu.Unlock()
	s = s.peer
	time.Sleep(d) // @moved
}

func viaPeer(s *store, d time.Duration) {
	s.peer.state.mu.Lock()
	defer s.peer.state.mu.Unlock()
	time.Sleep(d) // @peer
}

func viaPtr(s *store, d time.Duration) {
	s.lock.Lock()
	defer s.lock.Unlock()
	time.Sleep(d) // @ptr
}

func (s *store) takePtr() {
	s.lock.Lock() // @takeptr
	s.lock.Unlock()
}

func (s *store) take() {
	s.state.mu.Lock() // @take
	s.id++
	s.state.mu.Unlock()
}

func main() {}
`

// TestReleasePlaces: a release through a parameter that is never
// reassigned is placed at the pointer it prints plus the lock's offset
// (8 for id, 8 for flag's word, 8 for n: 24); a reassigned parameter
// or a lock behind a pointer field places nothing.
func TestReleasePlaces(t *testing.T) {
	g := load(t, placeSrc)
	c := g.wait(t, "lock", Frame{Function: "sync.(*Mutex).Lock"}, g.at("main.(*store).take", "take")).Cases[0]
	sleep := Frame{Function: "time.Sleep"}
	cp, ok := g.can(c, -1, sleep, g.at("main.(*store).hold", "hold"))
	if !ok || cp.Anywhere || len(cp.Where) != 1 || cp.Where[0] != (Where{Frame: 1, Word: 0, Offset: 24}) {
		t.Errorf("hold's release: %+v %v, want one at frame 1, word 0, offset 24", cp, ok)
	}
	if cp, ok := g.can(c, -1, sleep, g.at("main.moved", "moved")); !ok || !cp.Anywhere {
		t.Errorf("moved reassigns s, so its release is not placed: %+v %v", cp, ok)
	}
	if cp, ok := g.can(c, -1, sleep, g.at("main.viaPeer", "peer")); !ok || !cp.Anywhere {
		t.Errorf("viaPeer's lock is behind a pointer field, so its release is not placed: %+v %v", cp, ok)
	}
	cptr := g.wait(t, "lock", Frame{Function: "sync.(*Mutex).Lock"}, g.at("main.(*store).takePtr", "takeptr")).Cases[0]
	if cp, ok := g.can(cptr, -1, sleep, g.at("main.viaPtr", "ptr")); !ok || !cp.Anywhere {
		t.Errorf("viaPtr's lock is what a field points to, so its release is not placed: %+v %v", cp, ok)
	}
}
