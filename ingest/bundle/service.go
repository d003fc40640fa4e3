package bundle

import (
	"path/filepath"
	"strings"
)

// Unknown is how a view names a service, node or build no source named.
// The identity methods return "" for it, so that no two unidentified
// captures are taken as one program, node or build.
const Unknown = "unknown"

// Service names the program a capture is of, so that captures of one
// service on many nodes can be compared: the executable's file name, else
// the main module path, else "" (unknown: files ingested without build
// info). Every view takes a capture's service from here.
func (t Target) Service() string {
	switch {
	case t.Exe != "":
		return filepath.Base(t.Exe)
	case t.ModulePath != "":
		return t.ModulePath
	}
	return ""
}

// Build names the build of the program a capture is of: the main module's
// version when the go command stamped one, and the VCS revision (its
// first 12 hex digits, "+modified" for a tree with changes), as in
// "v1.4.2 3f2a9c0e71bd"; else the Go build id's first 12 characters,
// "id X"; else "" (unknown). Views write it after the word "build".
func (t Target) Build() string {
	var parts []string
	if v := t.ModuleVersion; v != "" && v != "(devel)" {
		parts = append(parts, v)
	}
	if r := t.VCSRevision; r != "" {
		r = r[:min(12, len(r))]
		if t.VCSModified {
			r += "+modified"
		}
		if len(parts) == 0 || !strings.Contains(parts[0], t.VCSRevision[:min(12, len(t.VCSRevision))]) {
			parts = append(parts, r)
		}
	}
	if len(parts) == 0 && t.BuildID != "" {
		return "id " + t.BuildID[:min(12, len(t.BuildID))]
	}
	return strings.Join(parts, " ")
}

// NodeName is the node a capture was taken on, "" when no one said.
func (m Manifest) NodeName() string { return strings.TrimSpace(m.Node) }

// OrUnknown is name, or [Unknown] when it is "": how a view (a metric
// label, a heading) shows an identity no source named.
func OrUnknown(name string) string {
	if name == "" {
		return Unknown
	}
	return name
}
