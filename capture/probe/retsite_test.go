package probe

import (
	"bytes"
	"testing"
)

// Hand-assembled amd64 snippets for findRetSites. Each ends in a RET.
var (
	movRAXRCX = []byte{0x48, 0x89, 0xc8}       // MOV RAX, RCX
	cmpEDX1   = []byte{0x83, 0xfa, 0x01}       // CMP EDX, 1
	xorEBX    = []byte{0x31, 0xdb}             // XOR EBX, EBX
	addRSP    = []byte{0x48, 0x83, 0xc4, 0x50} // ADD RSP, 0x50
	popRBP    = []byte{0x5d}                   // POP RBP
	ret       = []byte{0xc3}                   // RET
	movEAX1   = []byte{0xb8, 1, 0, 0, 0}       // MOV EAX, 1
	jmpRCX    = []byte{0xff, 0xe1}             // JMP RCX (indirect)
	callRel   = []byte{0xe8, 0, 0, 0, 0}       // CALL next
)

// jcc8 is JNE rel8, jcc32 JNE rel32, jmp8 JMP rel8.
func jcc8(rel int8) []byte  { return []byte{0x75, byte(rel)} }
func jcc32(rel int8) []byte { return []byte{0x0f, 0x85, byte(rel), 0, 0, 0} }
func jmp8(rel int8) []byte  { return []byte{0xeb, byte(rel)} }
func je8(rel int8) []byte   { return []byte{0x74, byte(rel)} }

func TestFindRetSites(t *testing.T) {
	cases := []struct {
		name string
		code [][]byte
		want uint64 // site offset of the last RET
	}{
		{"jcc over a move", [][]byte{movRAXRCX, cmpEDX1, jcc8(2), xorEBX, addRSP, popRBP, ret}, 6},
		{"rel32 jcc", [][]byte{movRAXRCX, cmpEDX1, jcc32(2), xorEBX, popRBP, ret}, 6},
		// The JNE at 3 lands on the JE at 8, which every path crosses.
		{"nearest of two", [][]byte{cmpEDX1, jcc8(3), cmpEDX1, je8(2), xorEBX, popRBP, ret}, 8},
		// JMP rel8 at 3 lands on the POP: every path to the RET passes it.
		{"jmp", [][]byte{movRAXRCX, jmp8(2), xorEBX, popRBP, ret}, 3},
		// AX is written after the only branch: the RET itself.
		{"ax written after", [][]byte{cmpEDX1, jcc8(5), movEAX1, popRBP, ret}, 11},
		// A CALL between branch and RET.
		{"call after", [][]byte{cmpEDX1, jcc8(5), callRel, popRBP, ret}, 11},
		// The branch leaves the stretch (backwards): no site.
		{"branch out", [][]byte{popRBP, cmpEDX1, jcc8(-6), popRBP, ret}, 7},
		// The JE at 0 lands inside the stretch after the JNE at 5, so the
		// JNE is not on every path; the JE is, since nothing else enters.
		{"entered from outside", [][]byte{je8(7), cmpEDX1, jcc8(2), xorEBX, popRBP, ret}, 0},
		// As above, but AX is written between the JE and the JNE.
		{"entered, ax between", [][]byte{je8(8), movRAXRCX, cmpEDX1, jcc8(2), xorEBX, popRBP, ret}, 13},
		// An indirect jump anywhere hides where control goes.
		{"jump table", [][]byte{jmpRCX, cmpEDX1, jcc8(2), xorEBX, popRBP, ret}, 10},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code := bytes.Join(c.code, nil)
			retOff := uint64(len(code) - 1)
			sites := findRetSites(code, []uint64{retOff})
			if len(sites) != 1 || sites[0].Ret != retOff || sites[0].Offset != c.want {
				t.Errorf("sites %+v, want offset %#x for the RET at %#x", sites, c.want, retOff)
			}
		})
	}
}

func TestRetSitesNewproc1(t *testing.T) {
	full, stripped := openSpawner(t, ""), openSpawner(t, "stripped")
	f1, err := full.Func("runtime.newproc1")
	if err != nil {
		t.Fatal(err)
	}
	f2, err := stripped.Func("runtime.newproc1")
	if err != nil {
		t.Fatal(err)
	}
	s1, err1 := full.retSites(f1)
	s2, err2 := stripped.retSites(f2)
	if err1 != nil || err2 != nil || len(s1) == 0 || len(s1) != len(s2) {
		t.Fatalf("sites %+v (%v) vs %+v (%v)", s1, err1, s2, err2)
	}
	code, err := full.code(f1)
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range s1 {
		if s != s2[i] {
			t.Errorf("site %d: %+v with symbols, %+v stripped", i, s, s2[i])
		}
		// Go 1.22-1.26 end newproc1 with releasem's preemption check, a
		// Jcc a few instructions before the RET.
		if s.Offset >= s.Ret || s.Ret-s.Offset > 64 || !emulatedBranch(code[s.Offset:]) || code[s.Ret] != 0xc3 {
			t.Errorf("site %+v: want a JMP/Jcc shortly before the RET; code there % x", s, code[s.Offset:s.Ret+1])
		}
	}
	t.Logf("newproc1 return sites %+v", s1)
}
