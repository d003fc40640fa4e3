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
	bw := bufio.NewWriterSize(w, 64<<10)
	b := make([]byte, 0, 512)
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
	b = append(b, `,"root":`...)
	diff := t.Diff()
	var node func(n *Node) error
	node = func(n *Node) error {
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
		if diff {
			b = strconv.AppendInt(b, n.Total+n.BaseTotal, 10)
			b = append(b, `,"d":`...)
		}
		b = strconv.AppendInt(b, n.Total, 10)
		b = append(b, `,"s":`...)
		b = strconv.AppendInt(b, n.Self, 10)
		if diff {
			b = append(b, `,"b":`...)
			b = strconv.AppendInt(b, n.BaseTotal, 10)
			b = append(b, `,"a":`...)
			b = strconv.AppendInt(b, n.AbsDelta, 10)
		}
		if n.Own {
			b = append(b, `,"o":1`...)
		}
		if len(n.Children) > 0 {
			b = append(b, `,"c":[`...)
			for i, c := range n.Children {
				if i > 0 {
					b = append(b, ',')
				}
				if err := node(c); err != nil {
					return err
				}
			}
			b = append(b, ']')
		}
		b = append(b, '}')
		if len(b) > 32<<10 {
			if _, err := bw.Write(b); err != nil {
				return err
			}
			b = b[:0]
		}
		return nil
	}
	if err := node(t.Root); err != nil {
		return fmt.Errorf("encode flame tree: %w", err)
	}
	b = append(b, '}')
	if _, err := bw.Write(b); err != nil {
		return fmt.Errorf("encode flame tree: %w", err)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("encode flame tree: %w", err)
	}
	return nil
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
