package probe

import (
	"debug/buildinfo"
	"debug/elf"
	"debug/gosym"
	"errors"
	"fmt"
	"os"
)

// Binary is an opened Go executable: its build info, function table and
// runtime struct offsets. It is safe for concurrent use after OpenBinary
// returns. Close releases the file.
type Binary struct {
	path      string
	file      *os.File
	elf       *elf.File
	goVersion string
	module    string
	stripped  bool
	pie       bool
	table     *gosym.Table
	syms      map[string]elf.Symbol // function symbols from .symtab, nil when stripped
	offsets   Offsets
	inl       *inlineIndex // nil without DWARF
	notes     []string
}

// OpenBinary reads the Go executable at path (e.g. /proc/PID/exe). It fails
// with a clear error when the file is not an ELF Go binary or when its
// function table is unreadable. Missing DWARF is not an error: offsets then
// come from a per-version table (see [Offsets.Source]).
func OpenBinary(path string) (b *Binary, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open binary: %w", err)
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("parse binary %s: malformed file (%v)", path, r)
		}
		if err != nil {
			f.Close()
			b = nil
		}
	}()
	ef, err := elf.NewFile(f)
	if err != nil {
		return nil, fmt.Errorf("parse binary %s: %w", path, err)
	}
	b = &Binary{path: path, file: f, elf: ef, pie: ef.Type == elf.ET_DYN}
	bi, err := buildinfo.Read(f)
	if err != nil {
		return nil, fmt.Errorf("parse binary %s: not a Go executable (%v): %w", path, err, ErrNotSupported)
	}
	b.goVersion = bi.GoVersion
	b.module = bi.Main.Path
	if err := b.loadSymbols(); err != nil {
		return nil, fmt.Errorf("parse binary %s: %w", path, err)
	}
	off, d, notes, err := readOffsets(ef, b.goVersion)
	if err != nil {
		return nil, fmt.Errorf("parse binary %s: %w", path, err)
	}
	b.offsets = off
	if d != nil {
		b.inl = newInlineIndex(d)
	} else {
		b.notes = append(b.notes, "no DWARF: symbolised stacks do not expand inlined calls")
	}
	b.notes = append(b.notes, notes...)
	return b, nil
}

// Close releases the underlying file.
func (b *Binary) Close() error { return b.file.Close() }

// Path is the file the binary was read from.
func (b *Binary) Path() string { return b.path }

// GoVersion is the toolchain version from the build info, e.g. "go1.26.8".
func (b *Binary) GoVersion() string { return b.goVersion }

// Module is the main module path from the build info.
func (b *Binary) Module() string { return b.module }

// Stripped reports whether the binary lacks a .symtab section.
func (b *Binary) Stripped() bool { return b.stripped }

// Offsets are the runtime.g and runtime.m field offsets of this binary.
func (b *Binary) Offsets() Offsets { return b.offsets }

// Notes are human-readable remarks made while reading the binary (a
// fallback taken, a check that could not be made).
func (b *Binary) Notes() []string { return append([]string(nil), b.notes...) }

// errNoFunc is returned when a function is absent from the binary.
var errNoFunc = errors.New("function not found")
