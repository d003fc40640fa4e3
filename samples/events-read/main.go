// Command events-read is the healthy twin of events-never-read: the
// service starts a consumer that receives every order event.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net/http"
	"sync/atomic"

	"github.com/leakscope/leakscope/samples/internal/service"
)

func main() {
	opts := service.Flags(10, "orders per second")
	flag.Parse()
	ctx, stop := service.Context(opts.Duration)
	defer stop()
	srv, err := service.Listen(opts.Addr)
	if err != nil {
		log.Fatal(err)
	}
	o := newOrders()
	go o.consume(ctx)
	http.HandleFunc("/work", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "%d orders\n", o.accepted.Load())
	})
	srv.Start()
	service.Pace(ctx, opts.Rate, func(ctx context.Context, n int) {
		o.accept(order{id: n, sku: fmt.Sprintf("sku-%d", n%40)})
		service.Called()
	})
	if err := srv.Shutdown(); err != nil {
		log.Fatal(err)
	}
}

// order is one accepted order.
type order struct {
	id  int
	sku string
}

// orders accepts orders and publishes an event for each.
type orders struct {
	accepted  atomic.Int64
	published atomic.Int64
	events    chan order
}

func newOrders() *orders { return &orders{events: make(chan order)} }

// accept records an order and publishes its event without waiting.
func (o *orders) accept(ord order) {
	o.accepted.Add(1)
	go o.publish(ord)
}

// publish sends the order's event to the consumer.
func (o *orders) publish(ord order) {
	o.events <- ord
}

// consume receives order events until the service stops.
func (o *orders) consume(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case ord := <-o.events:
			o.published.Add(int64(ord.id % 2))
		}
	}
}
