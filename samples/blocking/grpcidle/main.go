// Command grpcidle is healthy: a real gRPC server and a client connection
// to it over loopback (google.golang.org/grpc), idle after a few health
// checks. The transports' reader goroutines wait in IO, their writers
// (loopy) and the client's balancer and resolver serializers in select,
// all until the connection is closed.
package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

func serve() (addr string, stop func(), err error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	s := grpc.NewServer()
	healthpb.RegisterHealthServer(s, health.NewServer())
	go s.Serve(ln)
	return ln.Addr().String(), s.GracefulStop, nil
}

func check(ctx context.Context, client healthpb.HealthClient, n int) error {
	for i := 0; i < n; i++ {
		ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		_, err := client.Check(ctx, &healthpb.HealthCheckRequest{})
		cancel()
		if err != nil {
			return err
		}
	}
	return nil
}

func main() {
	addr, stop, err := serve()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer stop()
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer conn.Close()
	if err := check(context.Background(), healthpb.NewHealthClient(conn), 3); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	<-sigs
}
