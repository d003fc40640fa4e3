// Package memdb is a tiny database/sql driver over an in-memory table of
// tenants' order counts, so that the database/sql samples need no
// database server and no cgo: what they leak is database/sql's own (a
// *sql.DB's connection opener and pool), whatever the driver.
package memdb

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"io"
	"strconv"
	"sync"
)

// Name is the driver name registered with database/sql.
const Name = "memdb"

func init() { sql.Register(Name, drv{}) }

// orders is the table every connection reads: order counts by tenant.
var orders sync.Map

// drv opens connections to the table; the data source name is ignored.
type drv struct{}

func (drv) Open(string) (driver.Conn, error) { return &conn{}, nil }

// conn is one connection; it holds a read buffer as a real driver would.
type conn struct{ buf []byte }

func (c *conn) Prepare(query string) (driver.Stmt, error) {
	if c.buf == nil {
		c.buf = make([]byte, 4<<10)
	}
	return stmt{query: query}, nil
}
func (c *conn) Close() error              { return nil }
func (c *conn) Begin() (driver.Tx, error) { return nil, errors.New("memdb: no transactions") }

// stmt answers "count" (the tenant's orders) and "add" (one more order).
type stmt struct{ query string }

func (stmt) Close() error  { return nil }
func (stmt) NumInput() int { return 1 }

func (s stmt) Exec(args []driver.Value) (driver.Result, error) {
	v, _ := orders.LoadOrStore(args[0], new(int64))
	*v.(*int64)++
	return driver.RowsAffected(1), nil
}

func (s stmt) Query(args []driver.Value) (driver.Rows, error) {
	var n int64
	if v, ok := orders.Load(args[0]); ok {
		n = *v.(*int64)
	}
	return &rows{n: n}, nil
}

// QueryContext lets database/sql pass the context through.
func (s stmt) QueryContext(_ context.Context, args []driver.NamedValue) (driver.Rows, error) {
	vals := make([]driver.Value, len(args))
	for i, a := range args {
		vals[i] = a.Value
	}
	return s.Query(vals)
}

// rows is a one-row, one-column result.
type rows struct {
	n    int64
	done bool
}

func (*rows) Columns() []string { return []string{"count"} }
func (*rows) Close() error      { return nil }

func (r *rows) Next(dest []driver.Value) error {
	if r.done {
		return io.EOF
	}
	r.done = true
	dest[0] = strconv.FormatInt(r.n, 10)
	return nil
}
