// Command token-handler-lock-held is a token service: its HTTP handler
// Token issues tokens from a cache, minting a missing one once through
// a singleflight.Group and telling an audit logger about it. The bug:
// Token holds the issuer's mutex across singleflight's Do, whose
// callback sends on the audit channel, which nobody reads once the
// logger has seen its first tokens: the next miss blocks for good
// holding the lock, and every later request's handler queues on it.
// Clients give up after a short timeout; the handlers stay.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net/http"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/leakscope/leakscope/samples/internal/service"
)

func main() {
	opts := service.Flags(10, "token requests per second")
	flag.Parse()
	ctx, stop := service.Context(opts.Duration)
	defer stop()
	srv, err := service.Listen(opts.Addr)
	if err != nil {
		log.Fatal(err)
	}
	iss := &issuer{tokens: map[string]string{}, audit: make(chan string)}
	go iss.auditLog(ctx)
	http.HandleFunc("/token", iss.Token)
	http.HandleFunc("/work", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintln(w, "ok")
	})
	srv.Start()
	url := fmt.Sprintf("http://%s/token?audience=", srv.Addr())
	client := &http.Client{Timeout: 300 * time.Millisecond, Transport: &http.Transport{DisableKeepAlives: true}}
	service.Pace(ctx, opts.Rate, func(ctx context.Context, n int) {
		go request(client, fmt.Sprintf("%saud-%d", url, n%50))
		service.Called()
	})
	if err := srv.Shutdown(); err != nil {
		log.Fatal(err)
	}
}

// request asks for a token, as a client of the service does.
func request(client *http.Client, url string) {
	resp, err := client.Get(url)
	if err != nil {
		return
	}
	resp.Body.Close()
}

// issuer holds the tokens minted so far.
type issuer struct {
	mu     sync.Mutex
	tokens map[string]string
	sf     singleflight.Group
	audit  chan string
}

// Token answers a token for the request's audience, minting it on a
// miss. The bug: it holds mu across sf.Do, whose callback blocks on the
// audit send once auditLog has returned.
func (i *issuer) Token(w http.ResponseWriter, r *http.Request) {
	aud := r.URL.Query().Get("audience")
	i.mu.Lock()
	defer i.mu.Unlock()
	tok, ok := i.tokens[aud]
	if !ok {
		v, _, _ := i.sf.Do(aud, func() (any, error) { return i.mint(aud) })
		tok = v.(string)
		i.tokens[aud] = tok
	}
	fmt.Fprintln(w, tok)
}

// mint makes a token and tells the audit logger; the send blocks for
// good once the logger has returned.
func (i *issuer) mint(aud string) (any, error) {
	i.audit <- aud
	return "tok-" + aud, nil
}

// auditLog logs the first tokens minted at start-up, then returns.
func (i *issuer) auditLog(ctx context.Context) {
	for range 10 {
		select {
		case <-ctx.Done():
			return
		case aud := <-i.audit:
			log.Printf("audit: token for %s minted", aud)
		}
	}
}
