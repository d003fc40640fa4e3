// Command httpserve is healthy: main serves HTTP (parked in Accept) and a
// keep-alive client polls it twice a second, so connection goroutines
// wait in the network poller between requests.
package main

import (
	"io"
	"net"
	"net/http"
	"time"
)

func health(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }

func poll(url string) {
	c := &http.Client{Timeout: 5 * time.Second}
	for {
		if resp, err := c.Get(url); err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		time.Sleep(500 * time.Millisecond)
	}
}

func main() {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", health)
	go poll("http://" + ln.Addr().String() + "/healthz")
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	if err := srv.Serve(ln); err != nil {
		panic(err)
	}
}
