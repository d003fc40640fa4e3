//go:build ignore

// stuckprog gets goroutines stuck in the classic ways (mode "stuck") or
// parks them in healthy look-alikes (mode "healthy"), or queues calls on
// a contended lock that moves (mode "contended"), or runs queue workers
// in sync.Cond.Wait fed by a closure (mode "fedcond"), or has two
// independent bugs, a leak per request and one lock-order deadlock (mode
// "twobugs"); it serves
// net/http/pprof on a loopback port and prints "ADDR host:port" and then
// "READY" to stderr once every goroutine is in place. It runs until
// SIGQUIT (a traceback) or SIGTERM. The stuck verdict tests build and run
// it.
package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	_ "net/http/pprof"
	"os"
	"os/signal"
	"runtime"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sync/singleflight"
)

type account struct {
	mu      sync.Mutex
	balance int
}

// transfer takes the two locks in argument order: two transfers in
// opposite directions deadlock.
func transfer(from, to *account, ready *sync.WaitGroup) {
	from.mu.Lock()
	defer from.mu.Unlock()
	ready.Done()
	ready.Wait()
	to.mu.Lock()
	defer to.mu.Unlock()
	from.balance--
	to.balance++
}

var registry sync.Mutex

// register locks the package-level mutex twice.
func register() {
	registry.Lock()
	defer registry.Unlock()
	registerLocked()
}

func registerLocked() { registry.Lock() }

type config struct {
	mu     sync.RWMutex
	values map[string]string
}

// get holds a read lock and takes it again through lookup; reload, a
// writer, arrives in between.
func (c *config) get(k string, writing chan<- struct{}) string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	writing <- struct{}{}
	time.Sleep(50 * time.Millisecond)
	return c.lookup(k)
}

func (c *config) lookup(k string) string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.values[k]
}

func (c *config) reload(writing <-chan struct{}) {
	<-writing
	c.mu.Lock()
	defer c.mu.Unlock()
	c.values = map[string]string{}
}

// syncAll adds one more than it starts: Wait never returns.
func syncAll(items []string) {
	var wg sync.WaitGroup
	wg.Add(len(items) + 1)
	for range items {
		go func() { defer wg.Done() }()
	}
	wg.Wait()
}

// fanOut's workers send results nobody receives (collect returned
// early), and fanOut waits for them: it is their consequence.
func fanOut(n int) {
	results := make(chan int)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() { defer wg.Done(); produce(results, i) }()
	}
	wg.Wait()
}

func produce(results chan<- int, i int) { results <- i * i }

type latch struct {
	mu   sync.Mutex
	cond *sync.Cond
	open bool
}

// await waits for a latch nobody will open.
func (l *latch) await() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for !l.open {
		l.cond.Wait()
	}
}

type bus struct{ events chan string }

// publish sends on a channel that was never made.
func (b *bus) publish(e string) { b.events <- e }

// serveForever blocks in an empty select.
func serveForever() { select {} }

func stuck() {
	a, b := &account{}, &account{}
	var ready sync.WaitGroup
	ready.Add(2)
	go transfer(a, b, &ready)
	go transfer(b, a, &ready)
	go register()
	c := &config{values: map[string]string{}}
	writing := make(chan struct{})
	go c.get("k", writing)
	go c.reload(writing)
	go syncAll([]string{"a", "b"})
	go fanOut(3)
	l := &latch{}
	l.cond = sync.NewCond(&l.mu)
	go l.await()
	go (&bus{}).publish("x")
	go serveForever()
}

// worker is an idle pool member: main owns the channel and feeds it.
func worker(jobs <-chan int, results chan<- int) {
	for j := range jobs {
		results <- j
	}
}

type queue struct {
	mu    sync.Mutex
	cond  *sync.Cond
	items []int
}

func (q *queue) get() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	for len(q.items) == 0 {
		q.cond.Wait()
	}
	it := q.items[0]
	q.items = q.items[1:]
	return it
}

func (q *queue) add(i int) {
	q.mu.Lock()
	q.items = append(q.items, i)
	q.mu.Unlock()
	q.cond.Signal()
}

func (q *queue) run() {
	for {
		q.get()
	}
}

// resync feeds the queue every 300 ms, as an informer's resync does.
func (q *queue) resync(ctx context.Context) {
	t := time.NewTicker(300 * time.Millisecond)
	defer t.Stop()
	for i := 0; ; i++ {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			q.add(i)
		}
	}
}

// janitor sleeps between sweeps.
func janitor() {
	for {
		time.Sleep(time.Hour)
	}
}

func healthy(ctx context.Context, jobs chan int) {
	results := make(chan int, 16)
	for range 8 {
		go worker(jobs, results)
	}
	q := &queue{}
	q.cond = sync.NewCond(&q.mu)
	for range 3 {
		go q.run()
	}
	go q.resync(ctx)
	go janitor()
}

// store is shared by every call, as a fake API server's tracker is: each
// call holds its lock across a slow write, and calls come faster than it
// serves them, so the queue on the lock grows while it moves.
var store struct {
	mu sync.Mutex
	n  int
}

func record(i int) {
	store.mu.Lock()
	defer store.mu.Unlock()
	time.Sleep(20 * time.Millisecond)
	store.n += i
}

// contended starts a call every 10 ms.
func contended(ctx context.Context) {
	go func() {
		t := time.NewTicker(10 * time.Millisecond)
		defer t.Stop()
		for i := 0; ; i++ {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				go record(i)
			}
		}
	}()
}

// fedcond starts five queue workers and feeds them from a closure every
// 100 ms; /burst adds 500 items a millisecond apart, so the Cond is
// waited on and signalled hundreds of times.
func fedcond() {
	q := &queue{}
	q.cond = sync.NewCond(&q.mu)
	for range 5 {
		go q.run()
	}
	go func() {
		for i := 0; ; i++ {
			time.Sleep(100 * time.Millisecond)
			q.add(i)
		}
	}()
	http.HandleFunc("/burst", func(w http.ResponseWriter, r *http.Request) {
		for i := range 500 {
			q.add(i)
			time.Sleep(time.Millisecond)
		}
		fmt.Fprintln(w, "ok")
	})
}

type ledger struct {
	id      int
	settled chan bool
}

// awaitSettlement waits for a settlement nobody sends.
//
//go:noinline
func awaitSettlement(l *ledger, id int) {
	if <-l.settled {
		l.id = id
	}
}

// settleAccounts leaks one goroutine per call.
//
//go:noinline
func settleAccounts(id int) {
	l := &ledger{id: id, settled: make(chan bool)}
	go awaitSettlement(l, id)
}

// twobugs leaks a goroutine per request, 50 requests a second, and once
// takes two locks in opposite orders.
func twobugs(ctx context.Context) {
	a, b := &account{}, &account{}
	var ready sync.WaitGroup
	ready.Add(2)
	go transfer(a, b, &ready)
	go transfer(b, a, &ready)
	go func() {
		t := time.NewTicker(20 * time.Millisecond)
		defer t.Stop()
		for i := 0; ; i++ {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				settleAccounts(i)
			}
		}
	}()
}

// mailbox holds its lock while it sends: post blocks on the send, and
// drain, the only receiver, first waits for the lock.
type mailbox struct {
	mu sync.Mutex
	ch chan string
}

func (m *mailbox) post(s string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.ch <- s
}

func (m *mailbox) drain() {
	for {
		m.mu.Lock()
		m.mu.Unlock()
		<-m.ch
	}
}

// table holds a read lock across a Cond wait: rebuild, a writer, waits
// for the reader; markReady, which would signal, waits behind the writer.
type table struct {
	rw    sync.RWMutex
	mu    sync.Mutex
	cond  *sync.Cond
	ready bool
}

func (t *table) awaitReady() {
	t.rw.RLock()
	defer t.rw.RUnlock()
	t.mu.Lock()
	defer t.mu.Unlock()
	for !t.ready {
		t.cond.Wait()
	}
}

func (t *table) rebuild() {
	t.rw.Lock()
	defer t.rw.Unlock()
}

func (t *table) markReady() {
	t.rw.RLock()
	defer t.rw.RUnlock()
	t.mu.Lock()
	t.ready = true
	t.mu.Unlock()
	t.cond.Broadcast()
}

// lockkinds plants a lock held across a send and a read lock held
// across a Cond wait.
func lockkinds() {
	m := &mailbox{ch: make(chan string)}
	go m.post("x")
	time.Sleep(50 * time.Millisecond)
	go m.drain()
	t := &table{}
	t.cond = sync.NewCond(&t.mu)
	go t.awaitReady()
	time.Sleep(50 * time.Millisecond)
	go t.rebuild()
	time.Sleep(50 * time.Millisecond)
	go t.markReady()
}

// tokenCache holds its lock across a singleflight call whose callback
// blocks on a send nobody receives: lookups queue on the lock.
type tokenCache struct {
	mu      sync.Mutex
	group   singleflight.Group
	updates chan string
}

func (c *tokenCache) refresh(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.group.Do(key, func() (any, error) {
		c.updates <- key
		return nil, nil
	})
}

func (c *tokenCache) lookup() {
	c.mu.Lock()
	defer c.mu.Unlock()
}

// callback plants a lock held across a blocking singleflight callback.
func callback() {
	c := &tokenCache{updates: make(chan string)}
	go c.refresh("k")
	time.Sleep(50 * time.Millisecond)
	for range 3 {
		go c.lookup()
	}
}

// quitSelf sends the process SIGQUIT, as a harness that wants a
// traceback of itself does: the runtime prints every goroutine, this one
// among them, and exits.
func quitSelf() {
	time.Sleep(100 * time.Millisecond)
	p, err := os.FindProcess(os.Getpid())
	if err == nil {
		err = p.Signal(syscall.SIGQUIT)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
	time.Sleep(time.Hour) // the runtime prints the traceback and exits meanwhile
}

func main() {
	mode := os.Args[1]
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	go http.Serve(ln, nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	jobs := make(chan int)
	switch mode {
	case "stuck":
		stuck()
	case "healthy":
		healthy(ctx, jobs)
	case "contended":
		contended(ctx)
	case "fedcond":
		fedcond()
	case "twobugs":
		twobugs(ctx)
	case "lockkinds":
		lockkinds()
	case "callback":
		callback()
	default:
		fmt.Fprintln(os.Stderr, "unknown mode", mode)
		os.Exit(2)
	}
	for range 100 {
		runtime.Gosched()
		time.Sleep(10 * time.Millisecond)
	}
	fmt.Fprintf(os.Stderr, "ADDR %s\nREADY\n", ln.Addr())
	if len(os.Args) > 2 && os.Args[2] == "selfquit" {
		go quitSelf()
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	<-sigs
	close(jobs)
}
