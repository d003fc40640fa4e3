// Command sql-db-shared is the healthy twin of sql-db-per-call: the same
// billing service, with one *sql.DB opened at start-up, shared by every
// tenant report and closed on exit.
package main

import (
	"context"
	"database/sql"
	"flag"
	"fmt"
	"log"
	"net/http"

	"github.com/leakscope/leakscope/samples/internal/service"
	"github.com/leakscope/leakscope/samples/libs/internal/memdb"
)

func main() {
	opts := service.Flags(10, "tenant reports per second")
	flag.Parse()
	ctx, stop := service.Context(opts.Duration)
	defer stop()
	srv, err := service.Listen(opts.Addr)
	if err != nil {
		log.Fatal(err)
	}
	db, err := sql.Open(memdb.Name, "billing")
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	b := &billing{db: db}
	http.HandleFunc("/work", func(w http.ResponseWriter, r *http.Request) {
		n, err := b.tenantReport(r.Context(), "acme")
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		fmt.Fprintf(w, "%d orders\n", n)
	})
	srv.Start()
	service.Pace(ctx, opts.Rate, func(ctx context.Context, n int) {
		if _, err := b.tenantReport(ctx, fmt.Sprintf("tenant-%d", n%50)); err != nil && ctx.Err() == nil {
			log.Print(err)
		}
		service.Called()
	})
	if err := srv.Shutdown(); err != nil {
		log.Fatal(err)
	}
}

// billing reports on tenants' orders from one shared database handle.
type billing struct{ db *sql.DB }

// tenantReport counts a tenant's orders.
func (b *billing) tenantReport(ctx context.Context, tenant string) (int64, error) {
	if _, err := b.db.ExecContext(ctx, "add", tenant); err != nil {
		return 0, err
	}
	var n int64
	err := b.db.QueryRowContext(ctx, "count", tenant).Scan(&n)
	return n, err
}
