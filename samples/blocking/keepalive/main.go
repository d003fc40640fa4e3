// Command keepalive is healthy: an http.Server and a client that made
// four requests at once and keeps their connections open for reuse. The
// server's connection goroutines wait in IO for the next request, the
// client transport's read and write loops in select, until the idle
// timeouts (ten minutes) close them.
package main

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"
)

const conns = 4

// barrier holds each request until all of them are in flight, so the
// client opens one connection per request.
type barrier struct {
	wg sync.WaitGroup
}

func (b *barrier) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b.wg.Done()
	b.wg.Wait()
	io.WriteString(w, "ok\n")
}

func serve() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	b := &barrier{}
	b.wg.Add(conns)
	srv := &http.Server{Handler: b, IdleTimeout: 10 * time.Minute, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	return "http://" + ln.Addr().String() + "/", nil
}

func fetchAll(client *http.Client, url string) error {
	errs := make(chan error, conns)
	for i := 0; i < conns; i++ {
		go func() {
			resp, err := client.Get(url)
			if err == nil {
				_, err = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			errs <- err
		}()
	}
	for i := 0; i < conns; i++ {
		if err := <-errs; err != nil {
			return err
		}
	}
	return nil
}

func main() {
	url, err := serve()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: conns, IdleConnTimeout: 10 * time.Minute}}
	if err := fetchAll(client, url); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	<-sigs
}
