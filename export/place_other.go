//go:build !linux

package export

import "errors"

// exchange is not available: install moves the earlier export aside.
func exchange(a, b string) error { return errors.ErrUnsupported }

// lockDir does not lock: run one exporter per directory.
func lockDir(path string) (func(), error) { return func() {}, nil }
