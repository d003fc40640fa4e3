// Command sql-db-per-call is a billing service: for each tenant report it
// counts the tenant's orders in the tenant's database (database/sql over
// a small in-memory driver). The bug: tenantReport opens a *sql.DB on
// every call and never closes it, so each report leaks the DB's
// connection-opener goroutine, its pool and its idle connection.
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
	b := &billing{}
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

// billing reports on tenants' orders.
type billing struct{}

// tenantReport counts a tenant's orders. The bug: it opens the tenant's
// database on every call and never calls db.Close.
func (b *billing) tenantReport(ctx context.Context, tenant string) (int64, error) {
	db, err := sql.Open(memdb.Name, "tenant="+tenant)
	if err != nil {
		return 0, err
	}
	if _, err := db.ExecContext(ctx, "add", tenant); err != nil {
		return 0, err
	}
	var n int64
	err = db.QueryRowContext(ctx, "count", tenant).Scan(&n)
	return n, err
}
