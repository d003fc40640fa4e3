package bundle

import "path/filepath"

// Service names the program a capture is of, so that captures of one
// service on many nodes can be compared: the executable's file name, else
// the main module path, else "unknown".
func (t Target) Service() string {
	switch {
	case t.Exe != "":
		return filepath.Base(t.Exe)
	case t.ModulePath != "":
		return t.ModulePath
	}
	return "unknown"
}
