// Command heartbeat is healthy: a client holds a TCP connection to a
// loopback peer and blocks reading it; the peer writes a heartbeat every
// half second, so the reader spends most of its time in the poller.
package main

import (
	"bufio"
	"net"
	"time"
)

func peer(ln net.Listener) {
	c, err := ln.Accept()
	if err != nil {
		panic(err)
	}
	for {
		if _, err := c.Write([]byte("beat\n")); err != nil {
			return
		}
		time.Sleep(500 * time.Millisecond)
	}
}

func readBeats(c net.Conn) {
	r := bufio.NewReader(c)
	for {
		if _, err := r.ReadString('\n'); err != nil {
			return
		}
	}
}

func main() {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	go peer(ln)
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		panic(err)
	}
	readBeats(c)
}
