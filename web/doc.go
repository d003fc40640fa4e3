// Package web serves the leakscope workbench: a single-page application
// (built from web/ui into web/static and embedded with go:embed, so the
// binary alone is enough) and the JSON API of docs/DESIGN.md over the
// captures kept in a data directory.
//
// The [Store] owns the data directory: every capture is a bundle directory
// DATA/captures/ID. Uploads are unpacked and validated beside it by
// bundle.Unpack and renamed into place only when complete, so a failed or
// hostile upload leaves nothing behind. Deletes wait for the reads in
// flight on the capture. Analysis results (report, ancestry, flame graphs,
// lifetimes) are computed by package analysis on first use and cached in
// memory per capture until it is deleted.
//
// [NewRouter] wires the API and the assets. A server bound to a loopback
// address answers only loopback clients whose Host header names a loopback
// host (against DNS rebinding) and refuses cross-origin writes; a server on
// any other address requires [Options.Token] on every write.
package web
