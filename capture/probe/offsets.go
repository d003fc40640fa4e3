package probe

import (
	"debug/dwarf"
	"debug/elf"
	"fmt"
	"go/version"
	"slices"
)

// Offsets are byte offsets of the runtime struct fields the BPF programs
// read, for one target binary.
type Offsets struct {
	GGoid       int64 // runtime.g.goid
	GParentGoid int64 // runtime.g.parentGoid
	GGopc       int64 // runtime.g.gopc (PC of the go statement)
	GStartPC    int64 // runtime.g.startpc (the goroutine's function)
	GM          int64 // runtime.g.m
	MCurg       int64 // runtime.m.curg
	// Source says where the values came from: "dwarf", or "table:go1.N"
	// when the binary has no DWARF and a built-in table was used.
	Source string
}

// Map returns the offsets by field name, e.g. "g.goid".
func (o Offsets) Map() map[string]int64 {
	return map[string]int64{
		"g.goid": o.GGoid, "g.parentGoid": o.GParentGoid, "g.gopc": o.GGopc,
		"g.startpc": o.GStartPC, "g.m": o.GM, "m.curg": o.MCurg,
	}
}

// MinGoVersion and MaxGoVersion bound the Go releases (language versions)
// whose runtime the probes understand.
const (
	MinGoVersion = "go1.22"
	MaxGoVersion = "go1.26"
)

// offsetTable holds offsets for binaries without DWARF, by language
// version. Only versions measured from real DWARF are listed: go1.26 was
// read from a go1.26.8 binary (see TestOffsetsDWARF). Other versions need
// a binary that keeps its DWARF (build without -ldflags=-w).
var offsetTable = map[string]Offsets{
	"go1.26": {GGoid: 152, GParentGoid: 280, GGopc: 288, GStartPC: 304, GM: 48, MCurg: 184},
}

// readOffsets finds the runtime.g and runtime.m field offsets, from DWARF
// when present and from offsetTable otherwise. It also checks, when DWARF
// allows, that the probed functions take the arguments the programs read.
func readOffsets(f *elf.File, goVersion string) (Offsets, *dwarf.Data, []string, error) {
	lang := version.Lang(goVersion)
	if lang == "" {
		return Offsets{}, nil, nil, fmt.Errorf("unrecognised Go version %q", goVersion)
	}
	if version.Compare(lang, MinGoVersion) < 0 || version.Compare(lang, MaxGoVersion) > 0 {
		return Offsets{}, nil, nil, fmt.Errorf("built with %s, probes support %s to %s: %w", goVersion, MinGoVersion, MaxGoVersion, ErrNotSupported)
	}
	d, err := f.DWARF()
	if err != nil {
		off, ok := offsetTable[lang]
		if !ok {
			return Offsets{}, nil, nil, fmt.Errorf("no DWARF (%v) and no built-in offsets for %s; rebuild without -ldflags=-w: %w", err, lang, ErrNotSupported)
		}
		off.Source = "table:" + lang
		return off, nil, []string{fmt.Sprintf("no DWARF in binary: runtime offsets taken from the built-in %s table", lang)}, nil
	}
	off, notes, err := dwarfOffsets(d)
	if err != nil {
		return Offsets{}, nil, nil, fmt.Errorf("read DWARF: %w", err)
	}
	return off, d, notes, nil
}

// wantArgs lists, per probed function whose arguments the programs read,
// the parameter names in the order the programs assume (ABIInternal
// assigns AX, BX, CX... in declaration order). newproc1 is not listed:
// only its single result (AX) is read.
var wantArgs = map[string][]string{
	"runtime.profilealloc": {"mp", "x", "size"},
}

// dwarfOffsets scans the runtime compilation unit for the struct members
// and probed functions it needs.
func dwarfOffsets(d *dwarf.Data) (Offsets, []string, error) {
	want := map[string]map[string]int64{
		"runtime.g": {"goid": -1, "parentGoid": -1, "gopc": -1, "startpc": -1, "m": -1},
		"runtime.m": {"curg": -1},
	}
	args := map[string][]string{}
	r := d.Reader()
	var structName string // enclosing struct while reading its members
	var funcName string   // enclosing subprogram while reading its params
	for {
		e, err := r.Next()
		if err != nil {
			return Offsets{}, nil, err
		}
		if e == nil {
			break
		}
		switch e.Tag {
		case dwarf.TagCompileUnit:
			name, _ := e.Val(dwarf.AttrName).(string)
			if name != "runtime" {
				r.SkipChildren()
			}
			continue
		case 0:
			structName, funcName = "", ""
			continue
		case dwarf.TagStructType:
			name, _ := e.Val(dwarf.AttrName).(string)
			structName = ""
			if _, ok := want[name]; ok && e.Children {
				structName = name
			} else if e.Children {
				r.SkipChildren()
			}
			continue
		case dwarf.TagSubprogram:
			name, _ := e.Val(dwarf.AttrName).(string)
			funcName = ""
			if _, ok := wantArgs[name]; ok && e.Children {
				funcName = name
			} else if e.Children {
				r.SkipChildren()
			}
			continue
		case dwarf.TagMember:
			if structName == "" {
				continue
			}
			name, _ := e.Val(dwarf.AttrName).(string)
			if _, ok := want[structName][name]; ok {
				if loc, ok := e.Val(dwarf.AttrDataMemberLoc).(int64); ok {
					want[structName][name] = loc
				}
			}
		case dwarf.TagFormalParameter:
			if funcName == "" {
				continue
			}
			if isRet, _ := e.Val(dwarf.AttrVarParam).(bool); isRet {
				continue
			}
			name, _ := e.Val(dwarf.AttrName).(string)
			args[funcName] = append(args[funcName], name)
		}
		if e.Children {
			r.SkipChildren()
		}
	}
	for s, fields := range want {
		for fld, v := range fields {
			if v < 0 {
				return Offsets{}, nil, fmt.Errorf("field %s.%s not found", s, fld)
			}
		}
	}
	var notes []string
	for fn, w := range wantArgs {
		got, ok := args[fn]
		switch {
		case !ok:
			notes = append(notes, fmt.Sprintf("DWARF has no parameters for %s: argument registers unchecked", fn))
		case !slices.Equal(got, w):
			return Offsets{}, nil, fmt.Errorf("%s takes %v, probes expect %v: %w", fn, got, w, ErrNotSupported)
		}
	}
	g, m := want["runtime.g"], want["runtime.m"]
	return Offsets{
		GGoid: g["goid"], GParentGoid: g["parentGoid"], GGopc: g["gopc"], GStartPC: g["startpc"],
		GM: g["m"], MCurg: m["curg"], Source: "dwarf",
	}, notes, nil
}
