package probe

import (
	"encoding/binary"
	"slices"
	"testing"

	"github.com/leakscope/leakscope/ingest/schema"
)

// record builds a raw ring buffer record as the BPF programs write it.
func record(kind uint32, caller uint64, stackLen int64, stack ...uint64) []byte {
	raw := make([]byte, headerSize+8*len(stack))
	le := binary.LittleEndian
	le.PutUint32(raw[offKind:], kind)
	le.PutUint32(raw[offCPU:], 1)
	le.PutUint64(raw[offKtime:], 123456789)
	le.PutUint64(raw[offPidTgid:], 42<<32|43)
	le.PutUint64(raw[offGoid:], 7)
	le.PutUint64(raw[offParent:], 3)
	le.PutUint64(raw[offPC:], 0x401000)
	le.PutUint64(raw[offStartPC:], 0x402000)
	le.PutUint64(raw[offSize:], 65536)
	le.PutUint64(raw[offAddr:], 0xc000100000)
	le.PutUint64(raw[offCaller:], caller)
	le.PutUint64(raw[offStackLen:], uint64(stackLen))
	for i, pc := range stack {
		le.PutUint64(raw[headerSize+8*i:], pc)
	}
	return raw
}

func TestDecodeEvent(t *testing.T) {
	var ev Event
	if err := decodeEvent(record(kindGoCreate, 0, 0), &ev); err != nil {
		t.Fatal(err)
	}
	want := Event{Kind: schema.EventGoCreate, MonoNS: 123456789, PID: 42, TID: 43, CPU: 1, Goid: 7,
		ParentGoid: 3, PC: 0x401000, StartPC: 0x402000, Size: 65536, Addr: 0xc000100000}
	if ev.Stack != nil || ev.Kind != want.Kind || ev.PID != 42 || ev.TID != 43 || ev.Goid != 7 || ev.ParentGoid != 3 ||
		ev.MonoNS != want.MonoNS || ev.PC != want.PC || ev.StartPC != want.StartPC || ev.Size != want.Size || ev.Addr != want.Addr || ev.CPU != 1 {
		t.Errorf("decoded %+v, want %+v", ev, want)
	}

	cases := []struct {
		name   string
		raw    []byte
		stack  []uint64
		errno  int
		hasErr bool
	}{
		// A RET probe: the kernel's walk skipped the caller, put it back.
		{"caller missing", record(kindAlloc, 0xb0, 24, 0xa0, 0xc0, 0xd0), []uint64{0xa0, 0xb0, 0xc0, 0xd0}, 0, false},
		// An entry probe on a kernel that already added it.
		{"caller present", record(kindAlloc, 0xb0, 24, 0xa0, 0xb0, 0xc0), []uint64{0xa0, 0xb0, 0xc0}, 0, false},
		// Fewer PCs than the record has room for.
		{"short stack", record(kindAlloc, 0xb0, 8, 0xa0, 0, 0), []uint64{0xa0, 0xb0}, 0, false},
		// A length larger than the record is clamped.
		{"overlong", record(kindAlloc, 0, 800, 0xa0), []uint64{0xa0}, 0, false},
		{"stack error", record(kindAlloc, 0xb0, -14, 0, 0), nil, -14, false},
		{"unknown kind", record(99, 0, 0), nil, 0, true},
		{"zero kind", record(0, 0, 0), nil, 0, true},
		{"truncated", record(kindGoExit, 0, 0)[:headerSize-1], nil, 0, true},
	}
	for _, c := range cases {
		var ev Event
		err := decodeEvent(c.raw, &ev)
		if (err != nil) != c.hasErr {
			t.Errorf("%s: err %v", c.name, err)
			continue
		}
		if !slices.Equal(ev.Stack, c.stack) || ev.StackErr != c.errno {
			t.Errorf("%s: stack %#x err %d, want %#x err %d", c.name, ev.Stack, ev.StackErr, c.stack, c.errno)
		}
	}
}

func TestOptionsDefaults(t *testing.T) {
	o := Options{}.withDefaults()
	if !o.Goroutines || !o.Alloc || !o.GC || o.RingBufferBytes != 8<<20 || o.StackDepth != 32 {
		t.Errorf("zero options became %+v", o)
	}
	o = Options{Alloc: true, RingBufferBytes: 5000, StackDepth: 500}.withDefaults()
	if o.Goroutines || o.GC || !o.Alloc || o.RingBufferBytes != 8192 || o.StackDepth != 127 {
		t.Errorf("options became %+v", o)
	}
}
