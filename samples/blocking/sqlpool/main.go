// Command sqlpool is healthy: a database/sql pool over a real pure-Go
// SQLite driver (modernc.org/sqlite) at rest between requests. Four
// connections were opened by concurrent queries and are idle in the pool;
// the pool's opener goroutine waits for a request for a new connection and
// its cleaner for the next idle-time check, both until the DB is closed.
package main

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	_ "modernc.org/sqlite"
)

func open(dir string) (*sql.DB, error) {
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "app.db")+"?_pragma=busy_timeout(5000)")
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(8)
	db.SetMaxIdleConns(4)
	db.SetConnMaxIdleTime(10 * time.Minute)
	if _, err := db.Exec(`CREATE TABLE IF NOT EXISTS orders (id INTEGER PRIMARY KEY, total INTEGER)`); err != nil {
		return nil, err
	}
	return db, nil
}

// warm runs n queries at once, so the pool opens n connections and keeps
// them idle afterwards.
func warm(ctx context.Context, db *sql.DB, n int) error {
	conns := make([]*sql.Conn, n)
	for i := range conns {
		c, err := db.Conn(ctx)
		if err != nil {
			return err
		}
		conns[i] = c
	}
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var total int
			errs[i] = c.QueryRowContext(ctx, `SELECT count(*) FROM orders`).Scan(&total)
		}()
	}
	wg.Wait()
	for i, c := range conns {
		if errs[i] != nil {
			return errs[i]
		}
		c.Close()
	}
	return nil
}

func main() {
	dir, err := os.MkdirTemp("", "sqlpool-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer os.RemoveAll(dir)
	db, err := open(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer db.Close()
	if err := warm(context.Background(), db, 4); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	<-sigs
}
