// Package binsyms reads from a Go executable the methods that release an
// object (Close, Shutdown, …), so that a bundle can say which release a
// leaked library object has when the library's source is not at hand.
package binsyms

import (
	"debug/elf"
	"debug/gosym"
	"errors"
	"fmt"
	"sort"
	"strings"
)

// ReleaseNames are the method names that release an object, in the order
// one is preferred when a type has several.
var ReleaseNames = []string{"Close", "Shutdown", "ShutDown", "Stop", "Cancel", "CloseIdleConnections"}

// maxMethods bounds the methods kept of one executable.
const maxMethods = 20000

// maxPclntab bounds the function table read.
const maxPclntab = 1 << 30

// ReleaseMethods returns, sorted, the functions of the executable at path
// that are release methods of some type ("database/sql.(*DB).Close"),
// from its ELF symbol table, or from its Go function table (pclntab) when
// it is stripped.
func ReleaseMethods(path string) ([]string, error) {
	f, err := elf.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read symbols of %s: %w", path, err)
	}
	defer f.Close()
	names, err := functionNames(f)
	if err != nil {
		return nil, fmt.Errorf("read symbols of %s: %w", path, err)
	}
	var out []string
	for _, n := range names {
		if IsRelease(n) {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	out = compact(out)
	if len(out) > maxMethods {
		out = out[:maxMethods]
	}
	return out, nil
}

// functionNames lists the function symbols of .symtab, or of the pclntab
// when there is no .symtab.
func functionNames(f *elf.File) ([]string, error) {
	syms, err := f.Symbols()
	if err == nil {
		var out []string
		for _, s := range syms {
			if elf.ST_TYPE(s.Info) == elf.STT_FUNC {
				out = append(out, s.Name)
			}
		}
		return out, nil
	}
	if !errors.Is(err, elf.ErrNoSymbols) {
		return nil, err
	}
	sec := f.Section(".gopclntab")
	if sec == nil {
		sec = f.Section(".data.rel.ro.gopclntab")
	}
	if sec == nil || sec.Type == elf.SHT_NOBITS || sec.Size > maxPclntab {
		return nil, errors.New("no .symtab and no readable .gopclntab")
	}
	data, err := sec.Data()
	if err != nil {
		return nil, err
	}
	var text uint64
	if t := f.Section(".text"); t != nil {
		text = t.Addr
	}
	tab, err := gosym.NewTable(nil, gosym.NewLineTable(data, text))
	if err != nil {
		return nil, fmt.Errorf("parse .gopclntab: %w", err)
	}
	out := make([]string, 0, len(tab.Funcs))
	for _, fn := range tab.Funcs {
		out = append(out, fn.Name)
	}
	return out, nil
}

// IsRelease reports whether a function symbol is a method named as one
// of [ReleaseNames]: "pkg.(*T).Close" or "pkg.T.Close" (type arguments
// allowed), not a closure inside one.
func IsRelease(fn string) bool {
	i := strings.LastIndexByte(fn, '.')
	if i < 0 {
		return false
	}
	name, recv := fn[i+1:], fn[:i]
	found := false
	for _, r := range ReleaseNames {
		found = found || name == r
	}
	if !found {
		return false
	}
	// The receiver is "(*T)" or "T" after the package path's last dot.
	slash := strings.LastIndexByte(recv, '/')
	dot := strings.IndexByte(recv[slash+1:], '.')
	return dot >= 0 && slash+1+dot+1 < len(recv)
}

// compact drops adjacent duplicates of a sorted list.
func compact(s []string) []string {
	out := s[:0]
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return out
}
