package gosrc

import "testing"

const freshSrc = `package main

import (
	"sync"
	"time"
)

func worker(i int, ch chan<- int) {
	ch <- i // @send
}

func producer() {
	for i := 0; ; i++ {
		ch := make(chan int)
		go worker(i, ch)
		if i%4 != 0 {
			<-ch // @recv
		}
		time.Sleep(time.Millisecond) // @sleep
	}
}

func reuse(ch chan int) {
	for {
		go worker(0, ch)
		<-ch
		time.Sleep(time.Millisecond) // @reusesleep
	}
}

func reassigned(src chan int) {
	ch := make(chan int)
	for {
		go worker(0, ch)
		time.Sleep(time.Millisecond) // @reassleep
		<-ch
		ch = src
	}
}

func batch() {
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done() }()
	wg.Wait() // @batchwait
}

func main() {
	go producer()
	go reuse(make(chan int))
	go reassigned(make(chan int))
	batch()
}
`

// TestFreshLocals checks that an operation on a local made anew each
// turn releases no goroutine parked now once the path makes it again:
// the producer sleeping after a turn receives next from a new channel,
// not from the worker parked on an old one; but one on the current
// channel (between make and receive), one on a parameter, and one on a
// local also given an existing channel still can.
func TestFreshLocals(t *testing.T) {
	g := load(t, freshSrc)
	send := g.wait(t, "chan send", g.at("main.worker", "send")).Cases[0]
	sleeping := []Frame{{Function: "time.Sleep"}, g.at("main.producer", "sleep")}
	if cp, ok := g.can(send, -1, sleeping...); ok {
		t.Errorf("the producer after its turn can receive from an old worker's channel: %+v", cp)
	}
	reuse := []Frame{{Function: "time.Sleep"}, g.at("main.reuse", "reusesleep")}
	if _, ok := g.can(send, -1, reuse...); !ok {
		t.Error("a loop receiving from its parameter cannot release the worker")
	}
	reass := []Frame{{Function: "time.Sleep"}, g.at("main.reassigned", "reassleep")}
	if _, ok := g.can(send, -1, reass...); !ok {
		t.Error("a loop on a local also assigned a parameter cannot release the worker")
	}
	wg := g.wait(t, "waitgroup", Frame{Function: "sync.(*WaitGroup).Wait"}, g.at("main.batch", "batchwait"))
	if len(wg.Cases) != 1 {
		t.Fatalf("batch's wait: %+v", wg.Cases)
	}
}

const namesSrc = `package main

func after() <-chan struct{} {
	ch := make(chan struct{})
	go func() { close(ch) }()
	return ch
}

func main() {
	done := after()
	<-done // @recv
}
`

// TestClassNames checks that a class is named by its named variables
// only: the unnamed result it is returned through adds no empty name.
func TestClassNames(t *testing.T) {
	g := load(t, namesSrc)
	c := g.wait(t, "chan receive", g.at("main.main", "recv")).Cases[0]
	names := c.Obj.Names()
	if len(names) == 0 {
		t.Fatal("the channel's class has no names")
	}
	for _, n := range names {
		if n == "" || n == "_" {
			t.Errorf("class names %q hold an unnamed variable", names)
		}
	}
}
