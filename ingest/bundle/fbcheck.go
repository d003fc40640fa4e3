package bundle

import (
	"encoding/binary"
	"fmt"
)

// Arrow's IPC metadata is a flatbuffer, and arrow's Go reader trusts it:
// it sizes slices by the vector lengths it finds there. checkMetadata walks
// the parts of an IPC message that reader decodes — the message table, the
// schema with its fields, children and key-value metadata, record and
// dictionary batch headers — and requires every table, vector and string
// to lie inside the metadata, so a hostile length cannot make it allocate
// gigabytes from a few bytes.

// IPC message header types (Message.fbs).
const (
	fbSchema          = 1
	fbDictionaryBatch = 2
	fbRecordBatch     = 3
)

// maxFieldDepth bounds nested fields (leakscope's deepest is 2).
const maxFieldDepth = 32

type fbCheck struct{ buf []byte }

// checkMetadata verifies one message's flatbuffer metadata.
func checkMetadata(meta []byte) error {
	c := fbCheck{meta}
	if len(meta) < 4 {
		return fmt.Errorf("message metadata of %d bytes", len(meta))
	}
	root := int(binary.LittleEndian.Uint32(meta))
	if err := c.table(root); err != nil {
		return fmt.Errorf("message: %w", err)
	}
	if err := c.keyValues(root, 4); err != nil {
		return fmt.Errorf("message metadata: %w", err)
	}
	kind, _ := c.u8(root, 1)
	header, ok, err := c.subTable(root, 2)
	if err != nil || !ok {
		return fmt.Errorf("message header: %v", err)
	}
	switch kind {
	case fbSchema:
		return c.schema(header)
	case fbRecordBatch:
		return c.recordBatch(header)
	case fbDictionaryBatch:
		batch, ok, err := c.subTable(header, 1)
		if err != nil || !ok {
			return fmt.Errorf("dictionary batch without data: %v", err)
		}
		return c.recordBatch(batch)
	}
	return fmt.Errorf("message of type %d is not a schema, dictionary or record batch", kind)
}

func (c fbCheck) schema(pos int) error {
	n, start, err := c.vector(pos, 1, 4)
	if err != nil {
		return fmt.Errorf("schema fields: %w", err)
	}
	for i := range n {
		if err := c.fieldAt(start+4*i, 0); err != nil {
			return fmt.Errorf("field %d: %w", i, err)
		}
	}
	if err := c.keyValues(pos, 2); err != nil {
		return fmt.Errorf("schema metadata: %w", err)
	}
	_, _, err = c.vector(pos, 3, 8)
	return err
}

// fieldAt checks the Field table referenced from the offset at ref.
func (c fbCheck) fieldAt(ref, depth int) error {
	if depth > maxFieldDepth {
		return fmt.Errorf("fields nested more than %d deep", maxFieldDepth)
	}
	pos, err := c.indirect(ref)
	if err != nil {
		return err
	}
	if err := c.table(pos); err != nil {
		return err
	}
	if err := c.str(pos, 0); err != nil {
		return fmt.Errorf("name: %w", err)
	}
	if _, _, err := c.subTable(pos, 3); err != nil {
		return fmt.Errorf("type: %w", err)
	}
	if dict, ok, err := c.subTable(pos, 4); err != nil {
		return fmt.Errorf("dictionary: %w", err)
	} else if ok {
		if _, _, err := c.subTable(dict, 1); err != nil {
			return fmt.Errorf("dictionary index type: %w", err)
		}
	}
	n, start, err := c.vector(pos, 5, 4)
	if err != nil {
		return fmt.Errorf("children: %w", err)
	}
	for i := range n {
		if err := c.fieldAt(start+4*i, depth+1); err != nil {
			return fmt.Errorf("child %d: %w", i, err)
		}
	}
	return c.keyValues(pos, 6)
}

func (c fbCheck) recordBatch(pos int) error {
	for _, f := range []struct {
		slot, size int
		what       string
	}{{1, 16, "nodes"}, {2, 16, "buffers"}, {4, 8, "variadic counts"}} {
		if _, _, err := c.vector(pos, f.slot, f.size); err != nil {
			return fmt.Errorf("record batch %s: %w", f.what, err)
		}
	}
	if _, _, err := c.subTable(pos, 3); err != nil {
		return fmt.Errorf("record batch compression: %w", err)
	}
	return nil
}

// keyValues checks a vector of KeyValue tables in the given slot.
func (c fbCheck) keyValues(pos, slot int) error {
	n, start, err := c.vector(pos, slot, 4)
	if err != nil {
		return err
	}
	for i := range n {
		kv, err := c.indirect(start + 4*i)
		if err == nil {
			err = c.table(kv)
		}
		if err == nil {
			err = c.str(kv, 0)
		}
		if err == nil {
			err = c.str(kv, 1)
		}
		if err != nil {
			return fmt.Errorf("key-value %d: %w", i, err)
		}
	}
	return nil
}

// table checks that a table and its vtable lie inside the buffer.
func (c fbCheck) table(pos int) error {
	if pos < 0 || pos+4 > len(c.buf) {
		return fmt.Errorf("table at %d outside %d bytes", pos, len(c.buf))
	}
	vt := pos - int(int32(binary.LittleEndian.Uint32(c.buf[pos:])))
	if vt < 0 || vt+4 > len(c.buf) {
		return fmt.Errorf("vtable at %d outside %d bytes", vt, len(c.buf))
	}
	vtSize := int(binary.LittleEndian.Uint16(c.buf[vt:]))
	objSize := int(binary.LittleEndian.Uint16(c.buf[vt+2:]))
	if vtSize < 4 || vtSize%2 != 0 || vt+vtSize > len(c.buf) || objSize < 4 || pos+objSize > len(c.buf) {
		return fmt.Errorf("table at %d (vtable %d, %d bytes) outside %d bytes", pos, vtSize, objSize, len(c.buf))
	}
	for off := 4; off < vtSize; off += 2 {
		if fo := int(binary.LittleEndian.Uint16(c.buf[vt+off:])); fo != 0 && fo >= objSize {
			return fmt.Errorf("field at %d past its table's %d bytes", fo, objSize)
		}
	}
	return nil
}

// slot returns the absolute position of a table's field, 0 when absent.
func (c fbCheck) slot(pos, slot int) int {
	vt := pos - int(int32(binary.LittleEndian.Uint32(c.buf[pos:])))
	vtSize := int(binary.LittleEndian.Uint16(c.buf[vt:]))
	off := 4 + 2*slot
	if off+2 > vtSize {
		return 0
	}
	if fo := int(binary.LittleEndian.Uint16(c.buf[vt+off:])); fo != 0 {
		return pos + fo
	}
	return 0
}

func (c fbCheck) u8(pos, slot int) (byte, bool) {
	if p := c.slot(pos, slot); p != 0 && p < len(c.buf) {
		return c.buf[p], true
	}
	return 0, false
}

// indirect follows the offset stored at ref.
func (c fbCheck) indirect(ref int) (int, error) {
	if ref < 0 || ref+4 > len(c.buf) {
		return 0, fmt.Errorf("offset at %d outside %d bytes", ref, len(c.buf))
	}
	return ref + int(binary.LittleEndian.Uint32(c.buf[ref:])), nil
}

// subTable checks the table a slot refers to, if present.
func (c fbCheck) subTable(pos, slot int) (int, bool, error) {
	p := c.slot(pos, slot)
	if p == 0 {
		return 0, false, nil
	}
	t, err := c.indirect(p)
	if err == nil {
		err = c.table(t)
	}
	return t, err == nil, err
}

// vector checks the vector a slot refers to (elements of size bytes) and
// returns its length and the position of its first element.
func (c fbCheck) vector(pos, slot, size int) (n, start int, err error) {
	p := c.slot(pos, slot)
	if p == 0 {
		return 0, 0, nil
	}
	v, err := c.indirect(p)
	if err != nil {
		return 0, 0, err
	}
	if v < 0 || v+4 > len(c.buf) {
		return 0, 0, fmt.Errorf("vector at %d outside %d bytes", v, len(c.buf))
	}
	n = int(binary.LittleEndian.Uint32(c.buf[v:]))
	if int64(n)*int64(size) > int64(len(c.buf)-v-4) {
		return 0, 0, fmt.Errorf("vector of %d elements at %d, only %d bytes left", n, v, len(c.buf)-v-4)
	}
	return n, v + 4, nil
}

// str checks the string a slot refers to.
func (c fbCheck) str(pos, slot int) error {
	_, _, err := c.vector(pos, slot, 1)
	return err
}
