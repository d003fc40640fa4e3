// Command longpoll is healthy: watch handlers hold long-poll requests open
// in a select on the next config version, the request's context and a
// five-minute timeout; three local clients keep a request open each.
package main

import (
	"io"
	"net"
	"net/http"
	"sync"
	"time"
)

type hub struct {
	mu      sync.Mutex
	version int
	changed chan struct{}
}

func (h *hub) next() <-chan struct{} {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.changed
}

func (h *hub) watch(w http.ResponseWriter, r *http.Request) {
	select {
	case <-h.next():
		io.WriteString(w, "changed")
	case <-r.Context().Done():
	case <-time.After(5 * time.Minute):
		w.WriteHeader(http.StatusNotModified)
	}
}

func client(url string) {
	c := &http.Client{}
	for {
		if resp, err := c.Get(url); err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		} else {
			time.Sleep(time.Second)
		}
	}
}

func main() {
	h := &hub{changed: make(chan struct{})}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/watch", h.watch)
	for i := 0; i < 3; i++ {
		go client("http://" + ln.Addr().String() + "/watch")
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	panic(srv.Serve(ln))
}
