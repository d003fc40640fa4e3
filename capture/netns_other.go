//go:build !linux

package capture

import (
	"context"
	"net"
)

// netnsDialer: network namespaces are Linux's; elsewhere dial directly.
func netnsDialer(int) func(ctx context.Context, network, addr string) (net.Conn, error) { return nil }
