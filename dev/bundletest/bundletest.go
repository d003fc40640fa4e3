// Package bundletest makes bundles for tests: small real ones, and hostile
// ones whose table files claim more than they hold, as an attacker or a
// damaged disk would leave them.
package bundletest

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/ipc"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/leakscope/leakscope/ingest/bundle"
	"github.com/leakscope/leakscope/ingest/schema"
)

// TiB is the size the hostile files claim.
const TiB = 1 << 40

// Small writes a valid bundle NAME.lsb under parent with goroutine rows of
// two snapshots (200 and 400 rows, one batch each), metrics and a raw artifact, and returns its directory.
func Small(t testing.TB, parent, name string) string {
	t.Helper()
	dir := filepath.Join(parent, name+".lsb")
	w, err := bundle.Create(dir, bundle.NewManifest("cap-"+name, "bundletest"), memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	sid, err := w.StackID([]bundle.StackFrame{{Function: "main.leak", File: "/src/leak.go", Line: 7}, {Function: "main.main", File: "/src/main.go", Line: 3}})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC)
	for snap := range 2 {
		ts := t0.Add(time.Duration(snap) * time.Minute).UnixNano()
		// One record batch per snapshot, written whole: rows appended one
		// by one could be split by the writer's once-a-second flush on a
		// loaded machine.
		rb := array.NewRecordBuilder(memory.DefaultAllocator, schema.GoroutinesSchema)
		for i := range 200 * (snap + 1) {
			schema.Goroutine{SnapshotTS: ts, Goid: int64(i + 1), State: "chan send", StackID: sid, Source: "raw/goroutines.txt"}.AppendTo(rb)
		}
		rec := rb.NewRecord()
		rb.Release()
		err := w.WriteRecord(schema.TableGoroutines, rec)
		rec.Release()
		if err != nil {
			t.Fatal(err)
		}
		w.Append(schema.Metric{TS: ts, Name: schema.MetricGoroutines, Value: float64(200 * (snap + 1))})
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := w.CopyRaw("goroutines.txt", strings.NewReader("goroutine 1 [chan send]:\nmain.leak()\n\t/src/leak.go:7 +0x1\n")); err != nil {
		t.Fatal(err)
	}
	w.Update(func(m *bundle.Manifest) {
		m.Source(bundle.SourceDump)
		m.Widen(t0)
		m.Widen(t0.Add(time.Minute))
	})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return dir
}

// Message locates one IPC message inside a table file.
type Message struct {
	Offset    int64 // where the message starts
	MetaStart int64 // where its flatbuffer metadata starts
	MetaLen   int64
	BodyStart int64
	BodyLen   int64
	Type      ipc.MessageType
}

// Messages lists the messages of a well-formed table file.
func Messages(data []byte) ([]Message, error) {
	var out []Message
	for off := int64(0); off+8 <= int64(len(data)); {
		m := Message{Offset: off}
		if binary.LittleEndian.Uint32(data[off:]) != 0xFFFFFFFF {
			return nil, fmt.Errorf("no continuation marker at %d", off)
		}
		m.MetaLen = int64(binary.LittleEndian.Uint32(data[off+4:]))
		if m.MetaLen == 0 {
			break
		}
		m.MetaStart = off + 8
		if m.MetaStart+m.MetaLen > int64(len(data)) {
			return nil, fmt.Errorf("metadata past the end at %d", off)
		}
		msg := ipc.NewMessage(memory.NewBufferBytes(data[m.MetaStart:m.MetaStart+m.MetaLen]), memory.NewBufferBytes(nil))
		m.BodyLen, m.Type = msg.BodyLen(), msg.Type()
		msg.Release()
		m.BodyStart = m.MetaStart + m.MetaLen
		out = append(out, m)
		off = m.BodyStart + m.BodyLen
	}
	return out, nil
}

// Damage names one way of making a table file claim too much.
type Damage string

// The damages [Corrupt] applies.
const (
	// HugeBuffer sets the uncompressed size of the first compressed buffer
	// of the last record batch to 1 TiB.
	HugeBuffer Damage = "huge-buffer"
	// HugeBody sets the body length of the last record batch to 1 TiB.
	HugeBody Damage = "huge-body"
	// HugeMetadata sets the metadata length of the last record batch to
	// almost 2 GiB.
	HugeMetadata Damage = "huge-metadata"
)

// Damages lists every [Damage].
var Damages = []Damage{HugeBuffer, HugeBody, HugeMetadata}

// Corrupt damages the table file of the bundle in dir in place.
func Corrupt(t testing.TB, dir, table string, d Damage) {
	t.Helper()
	path := filepath.Join(dir, table+".arrow")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	msgs, err := Messages(data)
	if err != nil {
		t.Fatal(err)
	}
	var last *Message
	for i := range msgs {
		if msgs[i].Type == ipc.MessageRecordBatch {
			last = &msgs[i]
		}
	}
	if last == nil {
		t.Fatalf("%s has no record batch", path)
	}
	switch d {
	case HugeBuffer:
		if int64(binary.LittleEndian.Uint64(data[last.BodyStart:])) <= 0 {
			t.Fatalf("%s: first buffer is not compressed", path)
		}
		binary.LittleEndian.PutUint64(data[last.BodyStart:], TiB)
	case HugeBody:
		meta := data[last.MetaStart : last.MetaStart+last.MetaLen]
		n := 0
		for i := 0; i+8 <= len(meta); i++ {
			if int64(binary.LittleEndian.Uint64(meta[i:])) == last.BodyLen {
				binary.LittleEndian.PutUint64(meta[i:], TiB)
				n++
			}
		}
		if n == 0 {
			t.Fatalf("%s: body length not found in the metadata", path)
		}
	case HugeMetadata:
		binary.LittleEndian.PutUint32(data[last.Offset+4:], 0x7FFFFFF0)
	default:
		t.Fatalf("unknown damage %q", d)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// StackFunctions returns the function names of every stack of b, by
// stack id, innermost first.
func StackFunctions(t testing.TB, b *bundle.Bundle, mem memory.Allocator) map[int64][]string {
	t.Helper()
	names := map[int64]string{}
	if err := b.Frames(mem, func(f schema.Frame) { names[f.ID] = f.Function }); err != nil {
		t.Fatal(err)
	}
	out := map[int64][]string{}
	if err := b.Stacks(mem, func(s schema.Stack) {
		fns := make([]string, len(s.FrameIDs))
		for i, id := range s.FrameIDs {
			fns[i] = names[id]
		}
		out[s.ID] = fns
	}); err != nil {
		t.Fatal(err)
	}
	return out
}
