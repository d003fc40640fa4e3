//go:build !unix

package versions

// lockFile does nothing where flock is missing: concurrent builds of one
// binary then both run, and the first to finish wins.
func lockFile(path string) (func(), error) { return func() {}, nil }
