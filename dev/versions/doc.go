// Package versions holds what leakscope knows about the Go releases its
// users build with: the toolchains the version matrix is tested against
// ([Toolchains]), a builder that compiles a program with any of them in
// the three forms services ship in (plain, stripped, PIE) and caches the
// binaries ([Build]), and the matrix's target program (target/, a module
// of its own so that every toolchain since Go 1.21 can build it).
//
// Toolchains come from the Go module proxy through GOTOOLCHAIN
// (`GOTOOLCHAIN=go1.22.12 go build`), which keeps them in the module
// cache; `make deps` fetches them all ahead of the tests with
// `go run ./dev/versions/fetch`.
//
// The package's tests are the version matrix: the target built with every
// toolchain in every form, captured live with every source, and each
// source checked against the others (see matrix_test.go and docs/CAPTURE.md's
// version table).
package versions
