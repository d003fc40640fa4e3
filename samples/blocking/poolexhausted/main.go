// Command poolexhausted hands out connections from a fixed pool; the query
// path forgets to put a connection back when the row scan fails, so the
// pool drains and every later request waits in Get.
package main

import (
	"errors"
	"os"
	"os/signal"
	"syscall"
)

type conn struct{ id int }

type Pool struct {
	free chan *conn
}

func NewPool(n int) *Pool {
	p := &Pool{free: make(chan *conn, n)}
	for i := 0; i < n; i++ {
		p.free <- &conn{id: i}
	}
	return p
}

func (p *Pool) Get() *conn  { return <-p.free }
func (p *Pool) Put(c *conn) { p.free <- c }

func query(p *Pool, q string) error {
	c := p.Get()
	if q == "" {
		return errors.New("scan: empty query") // bug: c is not put back
	}
	p.Put(c)
	return nil
}

func handleRequest(p *Pool, q string) { _ = query(p, q) }

func main() {
	p := NewPool(3)
	for i := 0; i < 3; i++ {
		handleRequest(p, "")
	}
	for i := 0; i < 30; i++ {
		go handleRequest(p, "select 1")
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	<-sigs
}
