package analysis

import (
	"slices"
	"strings"
	"testing"

	"github.com/leakscope/leakscope/ingest/schema"
)

// TestArgRef: a word is named by its parameter when the signature is
// known, else by its position.
func TestArgRef(t *testing.T) {
	if got := (argRef{fn: "runtime.chanrecv"}).String(); got != "c of runtime.chanrecv" {
		t.Errorf("argRef = %q", got)
	}
	if got := (argRef{fn: "main.transfer", pos: 2}).String(); got != "argument word 3 of main.transfer" {
		t.Errorf("argRef = %q", got)
	}
}

// TestParamWords: argument words are named from the kept declaration,
// a multi-word value word by word, up to the first parameter whose size
// the declaration does not show.
func TestParamWords(t *testing.T) {
	text := `func (b *bank) transfer(name string, from, to *account, opts options, n int) {
}`
	lines := strings.Split(text, "\n")
	src := &sourceCode{funcs: map[[2]string]*funcSource{
		{"f.go", "main.(*bank).transfer"}: {start: 1, end: len(lines), lines: lines, status: schema.SourceOK},
	}}
	want := []string{"b (receiver)", "name (word 1 of the parameter)", "name (word 2 of the parameter)", "from (parameter)", "to (parameter)"}
	if got := src.paramWords("main.(*bank).transfer"); !slices.Equal(got, want) {
		t.Errorf("paramWords = %q, want %q", got, want)
	}
	if got := (argRef{fn: "main.(*bank).transfer", pos: 4, name: want[4]}).String(); got != "to (parameter) of main.(*bank).transfer" {
		t.Errorf("named argRef = %q", got)
	}
	if got := src.paramWords("main.other"); got != nil {
		t.Errorf("paramWords of a function not kept = %q", got)
	}
}

func TestResolveLockStruct(t *testing.T) {
	// A replica at 0x111314be180 with its mutex at +8: the waiter's own
	// lockSlow frame prints 0x111314be188; the holder's frame holds the
	// replica.
	known := []uint64{0x111314be160, 0x111314be180, 0x111314be188}
	b := blockInfo{obj: 0x111314be188, objAt: argRef{fn: "internal/sync.(*Mutex).lockSlow"}}
	objs, at := resolveObjects(b, known, true)
	if len(objs) != 2 || objs[0] != 0x111314be188 || objs[1] != 0x111314be180 || at[1].fn != "internal/sync.(*Mutex).lockSlow" {
		t.Errorf("lock: objects %#x at %v, want the mutex, then the struct holding it", objs, at)
	}
	if objs, _ := resolveObjects(b, known, false); len(objs) != 1 {
		t.Errorf("not a lock: objects %#x, want the exact object alone", objs)
	}
}
