// Command blockforever is healthy: it starts its metrics server and a
// reporter, then parks main in an empty select, the usual "run until
// killed" idiom.
package main

import (
	"io"
	"net"
	"net/http"
	"time"
)

func report() {
	for {
		time.Sleep(3 * time.Second)
	}
}

func main() {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	http.HandleFunc("/metrics", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "up 1\n") })
	go http.Serve(ln, nil)
	go report()
	select {}
}
