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
// the probes were tested with: the version matrix (dev/versions)
// attaches them to targets built with each. A target outside this range
// is still probed when its DWARF gives the offsets and confirms the probed
// functions' arguments, with a warning in [BinaryInfo.Notes].
const (
	MinGoVersion = "go1.22"
	MaxGoVersion = "go1.27"
)

// offsetTable holds the offsets of binaries without DWARF (built with
// -ldflags=-w), by language version. Every entry was read from the DWARF
// of a binary built by that release (go1.22.12, go1.23.12, go1.24.9,
// go1.25.5, go1.26.8, go1.27.3), and TestOffsetTables checks each against
// a fresh DWARF build. The layout of runtime.g and runtime.m changes
// between releases (goid moved to 160 in 1.23 and back in 1.25), so a
// stripped binary of a release without an entry is refused rather than
// read with a neighbour's offsets.
var offsetTable = map[string]Offsets{
	"go1.22": {GGoid: 152, GParentGoid: 272, GGopc: 280, GStartPC: 296, GM: 48, MCurg: 192},
	"go1.23": {GGoid: 160, GParentGoid: 280, GGopc: 288, GStartPC: 304, GM: 48, MCurg: 192},
	"go1.24": {GGoid: 160, GParentGoid: 280, GGopc: 288, GStartPC: 304, GM: 48, MCurg: 192},
	"go1.25": {GGoid: 152, GParentGoid: 272, GGopc: 280, GStartPC: 296, GM: 48, MCurg: 184},
	"go1.26": {GGoid: 152, GParentGoid: 280, GGopc: 288, GStartPC: 304, GM: 48, MCurg: 184},
	"go1.27": {GGoid: 152, GParentGoid: 280, GGopc: 288, GStartPC: 304, GM: 48, MCurg: 184},
}

// Tested reports whether the probes were tested with binaries of
// goVersion's release (see [MinGoVersion]).
func Tested(goVersion string) bool {
	lang := version.Lang(goVersion)
	return lang != "" && version.Compare(lang, MinGoVersion) >= 0 && version.Compare(lang, MaxGoVersion) <= 0
}

// readOffsets finds the runtime.g and runtime.m field offsets, from DWARF
// when present and from offsetTable otherwise. It also checks, when DWARF
// allows, that the probed functions take the arguments the programs read.
// A release outside the tested range needs DWARF and gets a warning note.
func readOffsets(f *elf.File, goVersion string) (Offsets, *dwarf.Data, []string, error) {
	lang := version.Lang(goVersion)
	var notes []string
	if !Tested(goVersion) {
		notes = append(notes, fmt.Sprintf("warning: built with %s, outside the releases the probes were tested with (%s to %s): offsets and argument registers taken from its DWARF, events unverified", goVersion, MinGoVersion, MaxGoVersion))
	}
	d, err := f.DWARF()
	if err != nil {
		off, ok := offsetTable[lang]
		if !ok {
			return Offsets{}, nil, nil, fmt.Errorf("built with %s without DWARF (%v), and the probes have built-in offsets only for %s to %s; to probe it, rebuild it keeping DWARF (without -s -w, or with -ldflags='-s -w=0'): %w", goVersion, err, MinGoVersion, MaxGoVersion, ErrNotSupported)
		}
		off.Source = "table:" + lang
		return off, nil, append(notes, fmt.Sprintf("no DWARF in binary: runtime offsets taken from the built-in %s table", lang)), nil
	}
	off, dnotes, err := dwarfOffsets(d)
	if err != nil {
		return Offsets{}, nil, nil, fmt.Errorf("read DWARF of a %s binary: %w", goVersion, err)
	}
	return off, d, append(notes, dnotes...), nil
}

// signature is what the programs assume of a probed function: its
// parameter names in declaration order (ABIInternal assigns AX, BX, CX...
// in that order) and its result types. A nil list is not checked.
type signature struct {
	params, results []string
}

// wantSignatures lists the probed functions whose registers the programs
// read: profilealloc's arguments (BX=x, CX=size), gdestroy's (AX=gp) and
// newproc1's result (AX=the new g; its parameters changed in 1.23 and are
// not read).
var wantSignatures = map[string]signature{
	"runtime.profilealloc": {params: []string{"mp", "x", "size"}},
	"runtime.gdestroy":     {params: []string{"gp"}},
	"runtime.newproc1":     {results: []string{"*runtime.g"}},
}

// runtimeDWARF is what dwarfOffsets finds in the runtime's compilation
// unit.
type runtimeDWARF struct {
	fields map[string]map[string]int64 // struct -> member -> offset, -1 if absent
	sigs   map[string]*signature       // probed function -> as declared
}

// dwarfOffsets reads the struct member offsets the programs need and
// checks the probed functions' signatures.
func dwarfOffsets(d *dwarf.Data) (Offsets, []string, error) {
	rt, err := scanRuntime(d)
	if err != nil {
		return Offsets{}, nil, err
	}
	for s, fields := range rt.fields {
		for fld, v := range fields {
			if v < 0 {
				return Offsets{}, nil, fmt.Errorf("field %s.%s not found: %w", s, fld, ErrNotSupported)
			}
		}
	}
	var notes []string
	for fn, w := range wantSignatures {
		got := rt.sigs[fn]
		switch {
		case got == nil:
			notes = append(notes, fmt.Sprintf("DWARF does not describe %s: its registers are unchecked", fn))
		case w.params != nil && !slices.Equal(got.params, w.params):
			return Offsets{}, nil, fmt.Errorf("%s takes %v, probes expect %v: %w", fn, got.params, w.params, ErrNotSupported)
		case w.results != nil && !slices.Equal(got.results, w.results):
			return Offsets{}, nil, fmt.Errorf("%s returns %v, probes expect %v: %w", fn, got.results, w.results, ErrNotSupported)
		}
	}
	g, m := rt.fields["runtime.g"], rt.fields["runtime.m"]
	return Offsets{
		GGoid: g["goid"], GParentGoid: g["parentGoid"], GGopc: g["gopc"], GStartPC: g["startpc"],
		GM: g["m"], MCurg: m["curg"], Source: "dwarf",
	}, notes, nil
}

// scanRuntime walks the runtime compilation unit for the members of
// runtime.g and runtime.m and the parameters of the probed functions.
func scanRuntime(d *dwarf.Data) (runtimeDWARF, error) {
	rt := runtimeDWARF{
		fields: map[string]map[string]int64{
			"runtime.g": {"goid": -1, "parentGoid": -1, "gopc": -1, "startpc": -1, "m": -1},
			"runtime.m": {"curg": -1},
		},
		sigs: map[string]*signature{},
	}
	r := d.Reader()
	var structName string // enclosing struct while reading its members
	var sig *signature    // enclosing probed function while reading its params
	for {
		e, err := r.Next()
		if err != nil || e == nil {
			return rt, err
		}
		descend := false
		switch e.Tag {
		case dwarf.TagCompileUnit:
			name, _ := e.Val(dwarf.AttrName).(string)
			descend = name == "runtime"
		case 0:
			structName, sig = "", nil
			continue
		case dwarf.TagStructType:
			name, _ := e.Val(dwarf.AttrName).(string)
			structName = ""
			if _, ok := rt.fields[name]; ok {
				structName, descend = name, true
			}
		case dwarf.TagSubprogram:
			name, _ := e.Val(dwarf.AttrName).(string)
			sig = nil
			if _, ok := wantSignatures[name]; ok {
				sig = &signature{}
				rt.sigs[name], descend = sig, true
			}
		case dwarf.TagMember:
			name, _ := e.Val(dwarf.AttrName).(string)
			if _, ok := rt.fields[structName][name]; ok {
				if loc, ok := e.Val(dwarf.AttrDataMemberLoc).(int64); ok {
					rt.fields[structName][name] = loc
				}
			}
		case dwarf.TagFormalParameter:
			if sig != nil {
				addParam(d, sig, e)
			}
		}
		if e.Children && !descend {
			r.SkipChildren()
		}
	}
}

// addParam appends a formal parameter to sig: its name, or for a result
// (DW_AT_variable_parameter) its type.
func addParam(d *dwarf.Data, sig *signature, e *dwarf.Entry) {
	if isResult, _ := e.Val(dwarf.AttrVarParam).(bool); !isResult {
		name, _ := e.Val(dwarf.AttrName).(string)
		sig.params = append(sig.params, name)
		return
	}
	typ := "?"
	if off, ok := e.Val(dwarf.AttrType).(dwarf.Offset); ok {
		if t, err := d.Type(off); err == nil {
			typ = t.String()
		}
	}
	sig.results = append(sig.results, typ)
}
