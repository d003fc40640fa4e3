// Command token-handler-lock-free is the healthy twin of
// token-handler-lock-held: Token mints a missing token through the
// singleflight.Group without holding the issuer's mutex, and the audit
// logger reads for as long as the service runs.
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
// miss without holding mu.
func (i *issuer) Token(w http.ResponseWriter, r *http.Request) {
	aud := r.URL.Query().Get("audience")
	i.mu.Lock()
	tok, ok := i.tokens[aud]
	i.mu.Unlock()
	if !ok {
		v, _, _ := i.sf.Do(aud, func() (any, error) { return i.mint(aud) })
		tok = v.(string)
		i.mu.Lock()
		i.tokens[aud] = tok
		i.mu.Unlock()
	}
	fmt.Fprintln(w, tok)
}

// mint makes a token and tells the audit logger.
func (i *issuer) mint(aud string) (any, error) {
	i.audit <- aud
	return "tok-" + aud, nil
}

// auditLog logs the tokens minted until the service stops.
func (i *issuer) auditLog(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case aud := <-i.audit:
			log.Printf("audit: token for %s minted", aud)
		}
	}
}
