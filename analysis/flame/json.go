package flame

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"unicode/utf8"
)

// jsonTree is the envelope documented in the package doc.
type jsonTree struct {
	Profile    string    `json:"profile"`
	SampleType string    `json:"sample_type"`
	Unit       string    `json:"unit"`
	Source     string    `json:"source"`
	Snapshot   int64     `json:"snapshot"`
	First      int64     `json:"first"`
	Count      int       `json:"count"`
	Delta      bool      `json:"delta"`
	Base       int64     `json:"base"`
	Inverted   bool      `json:"inverted"`
	Truncated  bool      `json:"truncated,omitempty"`
	Total      int64     `json:"total"`
	BaseTotal  int64     `json:"base_total"`
	PercentOf  int64     `json:"percent_of"`
	OwnHidden  *Hidden   `json:"own_hidden,omitempty"`
	Root       *jsonNode `json:"root"`
}

// jsonNode uses the keys d3-flame-graph reads: n, v, c and d.
type jsonNode struct {
	Name     string      `json:"n"`
	File     string      `json:"f,omitempty"`
	Line     int64       `json:"ln,omitempty"`
	Value    int64       `json:"v"`
	Self     int64       `json:"s"`
	Delta    *int64      `json:"d,omitempty"`
	Base     int64       `json:"b,omitempty"`
	AbsDelta int64       `json:"a,omitempty"`
	Own      int         `json:"o,omitempty"`
	Children []*jsonNode `json:"c,omitempty"`
}

// MarshalJSON encodes the tree in the shape documented in the package doc.
func (t *Tree) MarshalJSON() ([]byte, error) {
	var buf bytes.Buffer
	if err := t.WriteJSON(&buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// WriteJSON streams the JSON encoding of [Tree.MarshalJSON] to w, without
// building it in memory first.
func (t *Tree) WriteJSON(w io.Writer) error {
	if t.Root == nil {
		return fmt.Errorf("encode flame tree: no root")
	}
	e := &jsonEncoder{bw: bufio.NewWriterSize(w, 64<<10), b: make([]byte, 0, 512), diff: t.Diff()}
	e.b = t.appendHeader(e.b)
	e.b = append(e.b, `,"root":`...)
	if err := e.node(t.Root); err != nil {
		return fmt.Errorf("encode flame tree: %w", err)
	}
	e.b = append(e.b, '}')
	if _, err := e.bw.Write(e.b); err != nil {
		return fmt.Errorf("encode flame tree: %w", err)
	}
	if err := e.bw.Flush(); err != nil {
		return fmt.Errorf("encode flame tree: %w", err)
	}
	return nil
}

// appendHeader appends the envelope's opening brace and every field before
// "root".
func (t *Tree) appendHeader(b []byte) []byte {
	b = append(b, `{"profile":`...)
	b = appendString(b, t.Profile)
	b = append(b, `,"sample_type":`...)
	b = appendString(b, t.Value)
	b = append(b, `,"unit":`...)
	b = appendString(b, t.Unit)
	b = append(b, `,"source":`...)
	b = appendString(b, t.Source)
	b = append(b, `,"snapshot":`...)
	b = strconv.AppendInt(b, t.Snapshot, 10)
	b = append(b, `,"first":`...)
	b = strconv.AppendInt(b, t.First, 10)
	b = append(b, `,"count":`...)
	b = strconv.AppendInt(b, int64(t.Count), 10)
	b = append(b, `,"delta":`...)
	b = strconv.AppendBool(b, t.Delta)
	b = append(b, `,"base":`...)
	b = strconv.AppendInt(b, t.Base, 10)
	b = append(b, `,"inverted":`...)
	b = strconv.AppendBool(b, t.Inverted)
	if t.Truncated {
		b = append(b, `,"truncated":true`...)
	}
	b = append(b, `,"total":`...)
	b = strconv.AppendInt(b, t.Root.Total, 10)
	b = append(b, `,"base_total":`...)
	b = strconv.AppendInt(b, t.Root.BaseTotal, 10)
	b = append(b, `,"percent_of":`...)
	b = strconv.AppendInt(b, t.PercentOf, 10)
	if h := t.OwnHidden; h != nil {
		b = append(b, `,"own_hidden":{"total":`...)
		b = strconv.AppendInt(b, h.Total, 10)
		b = append(b, `,"base_total":`...)
		b = strconv.AppendInt(b, h.BaseTotal, 10)
		b = append(b, '}')
	}
	return b
}

// jsonEncoder streams a tree's nodes: b collects the encoding and goes to
// bw whenever it passes 32 KiB.
type jsonEncoder struct {
	bw   *bufio.Writer
	b    []byte
	diff bool // the tree is a diff: nodes carry "d", "b" and "a"
}

// node appends n and, depth first, its children.
func (e *jsonEncoder) node(n *Node) error {
	e.appendFields(n)
	if len(n.Children) > 0 {
		e.b = append(e.b, `,"c":[`...)
		for i, c := range n.Children {
			if i > 0 {
				e.b = append(e.b, ',')
			}
			if err := e.node(c); err != nil {
				return err
			}
		}
		e.b = append(e.b, ']')
	}
	e.b = append(e.b, '}')
	if len(e.b) > 32<<10 {
		if _, err := e.bw.Write(e.b); err != nil {
			return err
		}
		e.b = e.b[:0]
	}
	return nil
}

// appendFields appends n's opening brace and its own keys, all but "c".
func (e *jsonEncoder) appendFields(n *Node) {
	b := e.b
	b = append(b, `{"n":`...)
	b = appendString(b, n.Name)
	if n.File != "" {
		b = append(b, `,"f":`...)
		b = appendString(b, n.File)
	}
	if n.Line != 0 {
		b = append(b, `,"ln":`...)
		b = strconv.AppendInt(b, n.Line, 10)
	}
	b = append(b, `,"v":`...)
	if e.diff {
		b = strconv.AppendInt(b, n.Total+n.BaseTotal, 10)
		b = append(b, `,"d":`...)
	}
	b = strconv.AppendInt(b, n.Total, 10)
	b = append(b, `,"s":`...)
	b = strconv.AppendInt(b, n.Self, 10)
	if e.diff {
		b = append(b, `,"b":`...)
		b = strconv.AppendInt(b, n.BaseTotal, 10)
		b = append(b, `,"a":`...)
		b = strconv.AppendInt(b, n.AbsDelta, 10)
	}
	if n.Own {
		b = append(b, `,"o":1`...)
	}
	e.b = b
}

// appendString appends s as a JSON string: quotes, backslashes and control
// characters escaped, invalid UTF-8 replaced by U+FFFD, and <, >, & escaped
// so the output can be inlined in HTML.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

const hexDigits = "0123456789abcdef"

// UnmarshalJSON decodes what [Tree.MarshalJSON] encodes.
func (t *Tree) UnmarshalJSON(data []byte) error {
	var j jsonTree
	if err := json.Unmarshal(data, &j); err != nil {
		return fmt.Errorf("decode flame tree: %w", err)
	}
	if j.Root == nil {
		return fmt.Errorf("decode flame tree: no root")
	}
	diff := j.Base != 0
	var conv func(j *jsonNode) *Node
	conv = func(j *jsonNode) *Node {
		n := &Node{Name: j.Name, File: j.File, Line: j.Line, Total: j.Value, Self: j.Self, Own: j.Own != 0}
		if diff && j.Delta != nil {
			n.Total, n.BaseTotal, n.AbsDelta = *j.Delta, j.Value-*j.Delta, j.AbsDelta
		}
		for _, c := range j.Children {
			if c != nil {
				n.Children = append(n.Children, conv(c))
			}
		}
		return n
	}
	*t = Tree{
		Profile: j.Profile, Value: j.SampleType, Unit: j.Unit, Source: j.Source,
		Snapshot: j.Snapshot, First: j.First, Count: j.Count, Delta: j.Delta, Base: j.Base,
		Inverted: j.Inverted, Truncated: j.Truncated, PercentOf: j.PercentOf, OwnHidden: j.OwnHidden, Root: conv(j.Root),
	}
	return nil
}
