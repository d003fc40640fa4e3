package probe

import (
	"debug/elf"
	"debug/gosym"
	"encoding/binary"
	"errors"
	"fmt"
)

// Func is a function of the target binary located for probing.
type Func struct {
	// Name is the Go symbol name, e.g. "runtime.newproc1".
	Name string
	// Addr is the function's virtual address (link-time, before any PIE
	// load bias) and Size its length in bytes.
	Addr, Size uint64
	// FileOffset is where the function starts in the executable file: the
	// uprobe address (vaddr - segment vaddr + segment file offset).
	FileOffset uint64
	// Source says where Addr came from: "symtab" or "pclntab".
	Source string
}

// loadSymbols reads .symtab when present and the pclntab always (it is
// needed for symbolisation and is the only function table of stripped
// binaries).
func (b *Binary) loadSymbols() error {
	syms, err := b.elf.Symbols()
	switch {
	case errors.Is(err, elf.ErrNoSymbols):
		b.stripped = true
	case err != nil:
		return fmt.Errorf("read .symtab: %w", err)
	default:
		b.syms = make(map[string]elf.Symbol)
		for _, s := range syms {
			if elf.ST_TYPE(s.Info) == elf.STT_FUNC && s.Value != 0 {
				b.syms[s.Name] = s
			}
		}
	}
	pcln := b.elf.Section(".gopclntab")
	if pcln == nil {
		// PIE binaries of Go 1.25 and older keep it among the
		// relocated read-only data.
		pcln = b.elf.Section(".data.rel.ro.gopclntab")
	}
	if pcln == nil {
		return errors.New("no .gopclntab section: not a Go binary or unsupported layout")
	}
	if pcln.Type == elf.SHT_NOBITS || pcln.Size > 1<<30 {
		return fmt.Errorf("section .gopclntab: invalid size %d", pcln.Size)
	}
	data, err := pcln.Data()
	if err != nil {
		return fmt.Errorf("read .gopclntab: %w", err)
	}
	if err := checkPclntab(data); err != nil {
		return fmt.Errorf("section .gopclntab at file offset %#x: %w", pcln.Offset, err)
	}
	var textStart uint64
	if t := b.elf.Section(".text"); t != nil {
		textStart = t.Addr
	}
	tab, err := gosym.NewTable(nil, gosym.NewLineTable(data, textStart))
	if err != nil {
		return fmt.Errorf("parse .gopclntab: %w", err)
	}
	if len(tab.Funcs) == 0 {
		return errors.New("parse .gopclntab: no functions")
	}
	b.table = tab
	return nil
}

// Func locates a function by its Go symbol name, from .symtab when present
// and from the pclntab otherwise.
func (b *Binary) Func(name string) (Func, error) {
	fn := Func{Name: name}
	if s, ok := b.syms[name]; ok {
		fn.Addr, fn.Size, fn.Source = s.Value, s.Size, "symtab"
	} else if f := b.table.LookupFunc(name); f != nil {
		fn.Addr, fn.Size, fn.Source = f.Entry, f.End-f.Entry, "pclntab"
	} else {
		return Func{}, fmt.Errorf("%s: %w", name, errNoFunc)
	}
	off, err := b.fileOffset(fn.Addr)
	if err != nil {
		return Func{}, fmt.Errorf("%s: %w", name, err)
	}
	fn.FileOffset = off
	return fn, nil
}

// fileOffset converts a virtual address in an executable segment to an
// offset in the file, the form uprobes take.
func (b *Binary) fileOffset(vaddr uint64) (uint64, error) {
	for _, p := range b.elf.Progs {
		if p.Type != elf.PT_LOAD || p.Flags&elf.PF_X == 0 {
			continue
		}
		if p.Vaddr <= vaddr && vaddr < p.Vaddr+p.Memsz {
			return vaddr - p.Vaddr + p.Off, nil
		}
	}
	return 0, fmt.Errorf("address %#x is in no executable segment", vaddr)
}

// code returns the machine code of fn.
func (b *Binary) code(fn Func) ([]byte, error) {
	if fn.Size == 0 || fn.Size > 1<<20 {
		return nil, fmt.Errorf("%s: implausible size %d", fn.Name, fn.Size)
	}
	buf := make([]byte, fn.Size)
	if _, err := b.file.ReadAt(buf, int64(fn.FileOffset)); err != nil {
		return nil, fmt.Errorf("read code of %s at file offset %#x: %w", fn.Name, fn.FileOffset, err)
	}
	return buf, nil
}

// checkPclntab validates the header of a Go 1.18+ 64-bit pclntab before
// debug/gosym trusts it: gosym sizes its function slice from the header's
// count, so a corrupt count would exhaust memory rather than fail.
func checkPclntab(data []byte) error {
	const words = 8 // nfunc, nfiles, textStart, then five table offsets
	if len(data) < 8+8*words {
		return fmt.Errorf("header truncated (%d bytes)", len(data))
	}
	le := binary.LittleEndian
	if m := le.Uint32(data); m != 0xfffffff1 && m != 0xfffffff0 {
		return fmt.Errorf("magic %#x: not a Go 1.18+ little-endian pclntab", m)
	}
	if data[4] != 0 || data[5] != 0 || (data[6] != 1 && data[6] != 2 && data[6] != 4) || data[7] != 8 {
		return fmt.Errorf("header bytes % x: bad padding, PC quantum or pointer size", data[4:8])
	}
	word := func(i int) uint64 { return le.Uint64(data[8+8*i:]) }
	n := uint64(len(data))
	for i := 3; i < words; i++ {
		if word(i) > n {
			return fmt.Errorf("table offset %d (%#x) beyond the section's %d bytes", i, word(i), n)
		}
	}
	// The function table holds 2*nfunc+1 uint32 words.
	if nfunc := word(0); nfunc == 0 || nfunc > (n-word(7))/8 {
		return fmt.Errorf("function count %d does not fit in the section", nfunc)
	}
	return nil
}
