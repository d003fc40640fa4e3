package dump

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
)

// Streams a log line can come from. Plain input has one stream; container
// logs say which of stdout and stderr wrote each line, and each stream is
// parsed on its own so that lines of one cannot interrupt a traceback on
// the other.
const (
	streamPlain = iota
	streamStdout
	streamStderr
	numStreams
)

// logLine is one line of the input with its log envelope removed.
type logLine struct {
	text    []byte // the content, without its line end
	stream  int
	num     int  // line number in the input where the line starts
	partial bool // the input ended inside this line (no newline)
	tooLong bool // longer than maxLine: text holds its start only
}

// lineReader reads lines, removing the envelopes container runtimes put
// around each line of a program's output:
//
//   - CRI (containerd, CRI-O; /var/log/pods): "2026-12-01T08:00:00.1Z
//     stderr F text", where P instead of F marks a line the runtime split,
//     continued by the stream's next record;
//   - Docker's json-file driver: {"log":"text\n","stream":"stderr",...},
//     a log without its newline being continued by the next record;
//   - an RFC 3339 timestamp and a space (kubectl logs --timestamps).
//
// Lines without an envelope pass as they are, so a log may mix them.
type lineReader struct {
	br *bufio.Reader
	// chunk, when not nil, is what a parser worker reads instead of br
	// (see par.go): whole lines, at is where the next one starts. At its
	// end next returns io.EOF without flushing split lines, and a line
	// longer than readBuf stops it with errLongLine.
	chunk   []byte
	at      int
	long    []byte
	num     int
	bytes   int64
	eof     bool
	pending [numStreams][]byte // parts of a split line, per stream
	pendAt  [numStreams]int
	jsonBuf dockerLine
}

// readBuf is the size of lineReader's buffer.
const readBuf = 256 << 10

func newLineReader(r io.Reader) *lineReader {
	return &lineReader{br: bufio.NewReaderSize(r, readBuf)}
}

// errLongLine stops a parser worker's lineReader at a line longer than
// readBuf, which the sequential reader reads in parts.
var errLongLine = errors.New("line longer than the read buffer")

// next returns the next line, io.EOF at the end. Its text is valid until
// the next call.
func (lr *lineReader) next() (logLine, error) {
	for {
		raw, complete, tooLong, err := lr.physical()
		if err != nil {
			if err == io.EOF && lr.chunk == nil {
				return lr.flush()
			}
			return logLine{}, err
		}
		ln := logLine{text: raw, num: lr.num, partial: !complete, tooLong: tooLong}
		text, stream, split, ok := unwrap(raw, &lr.jsonBuf)
		if !ok {
			return ln, nil
		}
		ln.stream = stream
		if split && complete {
			// The runtime split a long line: keep its parts until the
			// record that ends it.
			if lr.pending[stream] == nil {
				lr.pendAt[stream] = lr.num
			}
			if len(lr.pending[stream])+len(text) <= maxLine {
				lr.pending[stream] = append(lr.pending[stream], text...)
			}
			continue
		}
		if p := lr.pending[stream]; p != nil {
			ln.text = append(p, text...)
			ln.num = lr.pendAt[stream]
			lr.pending[stream] = nil
			return ln, nil
		}
		ln.text = text
		return ln, nil
	}
}

// flush returns a split line whose end never came, as a partial line.
func (lr *lineReader) flush() (logLine, error) {
	for s, p := range lr.pending {
		if p != nil {
			lr.pending[s] = nil
			return logLine{text: p, stream: s, num: lr.pendAt[s], partial: true}, nil
		}
	}
	return logLine{}, io.EOF
}

// physical reads one line of the input without its line end.
func (lr *lineReader) physical() (line []byte, complete, tooLong bool, err error) {
	if lr.chunk != nil {
		return lr.chunkLine()
	}
	if lr.eof {
		return nil, false, false, io.EOF
	}
	b, err := lr.br.ReadSlice('\n')
	lr.bytes += int64(len(b))
	if err == bufio.ErrBufferFull {
		lr.long = append(lr.long[:0], b...)
		for err == bufio.ErrBufferFull {
			b, err = lr.br.ReadSlice('\n')
			lr.bytes += int64(len(b))
			if len(lr.long)+len(b) <= maxLine {
				lr.long = append(lr.long, b...)
			} else {
				tooLong = true
			}
		}
		b = lr.long
	}
	switch {
	case err == io.EOF:
		lr.eof = true
		if len(b) == 0 && !tooLong {
			return nil, false, false, io.EOF
		}
	case err != nil:
		return nil, false, false, err
	default:
		complete = true
	}
	lr.num++
	b = bytes.TrimSuffix(b, []byte("\n"))
	b = bytes.TrimSuffix(b, []byte("\r"))
	return b, complete, tooLong, nil
}

// chunkLine is physical for a parser worker's chunk of whole lines.
func (lr *lineReader) chunkLine() (line []byte, complete, tooLong bool, err error) {
	rest := lr.chunk[lr.at:]
	if len(rest) == 0 {
		return nil, false, false, io.EOF
	}
	i := bytes.IndexByte(rest, '\n')
	if i < 0 || i >= readBuf {
		return nil, false, false, errLongLine
	}
	lr.at += i + 1
	lr.bytes += int64(i + 1)
	lr.num++
	return bytes.TrimSuffix(rest[:i], []byte("\r")), true, false, nil
}

// unwrap removes a log envelope from line. ok is false for a line
// without one. split reports a record that does not end its line.
func unwrap(line []byte, jb *dockerLine) (text []byte, stream int, split, ok bool) {
	if len(line) == 0 {
		return nil, 0, false, false
	}
	switch c := line[0]; {
	case c == '{':
		return unwrapDocker(line, jb)
	case c >= '0' && c <= '9':
		n := timestampLen(line)
		if n == 0 || n >= len(line) || line[n] != ' ' {
			if n > 0 && n == len(line) {
				return nil, streamPlain, false, true // a timestamp alone: an empty line
			}
			return nil, 0, false, false
		}
		rest := line[n+1:]
		if text, stream, split, ok := unwrapCRI(rest); ok {
			return text, stream, split, true
		}
		return rest, streamPlain, false, true
	}
	return nil, 0, false, false
}

// unwrapCRI parses "stdout F text" (after the timestamp).
func unwrapCRI(rest []byte) (text []byte, stream int, split, ok bool) {
	switch {
	case bytes.HasPrefix(rest, []byte("stdout ")):
		stream = streamStdout
	case bytes.HasPrefix(rest, []byte("stderr ")):
		stream = streamStderr
	default:
		return nil, 0, false, false
	}
	rest = rest[len("stdout "):]
	if len(rest) == 0 || (rest[0] != 'F' && rest[0] != 'P') || (len(rest) > 1 && rest[1] != ' ') {
		return nil, 0, false, false
	}
	split = rest[0] == 'P'
	if len(rest) > 2 {
		text = rest[2:]
	}
	return text, stream, split, true
}

// dockerLine is one record of Docker's json-file log driver.
type dockerLine struct {
	Log    string `json:"log"`
	Stream string `json:"stream"`
}

func unwrapDocker(line []byte, jb *dockerLine) (text []byte, stream int, split, ok bool) {
	if !bytes.HasPrefix(line, []byte(`{"log":`)) {
		return nil, 0, false, false
	}
	*jb = dockerLine{}
	if json.Unmarshal(line, jb) != nil {
		return nil, 0, false, false
	}
	switch jb.Stream {
	case "stdout":
		stream = streamStdout
	case "stderr":
		stream = streamStderr
	}
	text = []byte(jb.Log)
	split = true
	if t, cut := bytes.CutSuffix(text, []byte("\n")); cut {
		text, split = bytes.TrimSuffix(t, []byte("\r")), false
	}
	return text, stream, split, true
}

// timestampLen returns the length of the RFC 3339 timestamp that starts
// line ("2026-12-01T08:00:00Z", fractions and offsets allowed), or 0.
func timestampLen(line []byte) int {
	const layout = "dddd-dd-ddTdd:dd:dd"
	if len(line) < len(layout) {
		return 0
	}
	for i := 0; i < len(layout); i++ {
		c := line[i]
		switch layout[i] {
		case 'd':
			if c < '0' || c > '9' {
				return 0
			}
		case 'T':
			if c != 'T' && c != 't' && c != ' ' {
				return 0
			}
		default:
			if c != layout[i] {
				return 0
			}
		}
	}
	n := len(layout)
	if n < len(line) && (line[n] == '.' || line[n] == ',') {
		n++
		for n < len(line) && line[n] >= '0' && line[n] <= '9' {
			n++
		}
	}
	switch {
	case n < len(line) && (line[n] == 'Z' || line[n] == 'z'):
		return n + 1
	case n+6 <= len(line) && (line[n] == '+' || line[n] == '-') && line[n+3] == ':':
		return n + 6
	}
	return 0
}
