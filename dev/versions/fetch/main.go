// Command fetch downloads every toolchain of the version matrix into the
// module cache (through the Go module proxy, as GOTOOLCHAIN does), so that
// the tests find them ready. `make deps` runs it.
package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/leakscope/leakscope/dev/versions"
)

func main() {
	ctx := context.Background()
	for _, tc := range append(versions.Toolchains[:len(versions.Toolchains):len(versions.Toolchains)], versions.Untested) {
		start := time.Now()
		root, err := versions.Fetch(ctx, tc)
		if err != nil {
			fmt.Fprintln(os.Stderr, "fetch:", err)
			os.Exit(1)
		}
		fmt.Printf("%-10s ready in %s (%.1fs)\n", tc, root, time.Since(start).Seconds())
	}
}
