// Command operator runs the Service controller with three workers; each
// Service whose load balancer never comes up parks one worker, and after
// three such Services the controller stops reconciling.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"operator/controller"
)

func main() {
	ctx, cancel := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer cancel()
	r := &controller.Reconciler{Queue: make(chan string), Cloud: controller.NewCloud()}
	r.Start(ctx, 3)
	for i := 0; i < 3; i++ {
		r.Queue <- fmt.Sprint("default/svc-", i)
	}
	<-ctx.Done()
	fmt.Fprintln(os.Stderr, "shutting down")
}
