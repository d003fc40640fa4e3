// Command tickerleak starts a status poller per job; a poller loops on its
// ticker with no way to stop, so every finished job leaves its poller
// ticking forever.
package main

import (
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"
)

type poller struct {
	job   int
	polls atomic.Int64
}

func (p *poller) loop() {
	t := time.NewTicker(90 * time.Second)
	for range t.C { // bug: no stop channel, no t.Stop
		p.polls.Add(1)
	}
}

func runJob(id int) {
	p := &poller{job: id}
	go p.loop()
	// the job finishes at once; its poller stays
}

func main() {
	for i := 0; i < 12; i++ {
		runJob(i)
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	<-sigs
}
