package dump

import (
	"bytes"
	"strconv"
)

// Race is one report of the race detector ("WARNING: DATA RACE"), as a
// program built with -race writes it to stderr: the two conflicting
// accesses with their stacks, and where each goroutine involved was
// created.
type Race struct {
	// Line is the line of its "WARNING: DATA RACE".
	Line int
	// Accesses are the accesses the report names, the current first
	// ("Write at ..."), then the previous one ("Previous read at ...").
	Accesses []RaceAccess
	// Location describes the memory ("global 'main.x' of size 8 at
	// 0x... (prog+0x...)"), when the report says.
	Location string
	// Complete is set when the report's closing "==================" was
	// read; a report cut short keeps what it had.
	Complete bool
}

// RaceAccess is one access of a race report.
type RaceAccess struct {
	// Op is "read", "write", "atomic read" or "atomic write", with
	// "previous " before it for the earlier access.
	Op   string
	Addr uint64
	// Goid is the accessing goroutine (1 for "main goroutine").
	Goid int64
	// Frames are the access's stack, leaf first.
	Frames []Frame
	// State is "running" or "finished" as the report's "Goroutine N
	// (running) created at:" says, and CreatedAt that section's stack.
	State     string
	CreatedAt []Frame
}

// maxRaces bounds the race reports kept from one input; more are counted.
const maxRaces = 10_000

// races parses race reports of one stream.
type races struct {
	r      *Reader
	active bool
	cur    Race
	frames *[]Frame // the section frames go to, nil to drop them
	pend   string   // function line waiting for its location
	havePd bool
}

var (
	raceWarning = []byte("WARNING: DATA RACE")
	raceFence   = []byte("==================")
)

// feed offers a line outside goroutine blocks to the race parser and
// reports whether it was part of a race report.
func (p *races) feed(ln logLine) bool {
	line := ln.text
	if !p.active {
		if bytes.Equal(line, raceWarning) {
			p.active = true
			p.cur = Race{Line: ln.num}
			p.frames, p.havePd = nil, false
			return true
		}
		return bytes.Equal(line, raceFence)
	}
	switch {
	case bytes.Equal(line, raceFence):
		p.cur.Complete = !ln.partial
		p.done()
		return true
	case len(bytes.TrimSpace(line)) == 0:
		p.frames, p.havePd = nil, false
		return true
	case p.access(line), p.created(line):
		return true
	case bytes.HasPrefix(line, []byte("Location is ")):
		p.cur.Location = string(bytes.TrimSuffix(line[len("Location is "):], []byte(":")))
		p.frames, p.havePd = nil, false
		return true
	case bytes.Equal(bytes.TrimSpace(line), []byte("[failed to restore the stack]")):
		return true
	}
	if p.frame(line) {
		return true
	}
	// Not part of a report: it was cut short.
	p.done()
	return false
}

// frame takes a stack line of a report: "  pkg.f()" then
// "      /path/file.go:12 +0x3c".
func (p *races) frame(line []byte) bool {
	if bytes.HasPrefix(line, []byte("      ")) && p.havePd {
		var fl fileLine
		if !parseFileLine(append([]byte{'\t'}, bytes.TrimLeft(line, " ")...), &fl) {
			return false
		}
		if p.frames != nil && len(*p.frames) < 1024 {
			*p.frames = append(*p.frames, Frame{Function: p.pend, File: p.r.intern(fl.file), Line: fl.line})
		}
		p.havePd = false
		return true
	}
	if bytes.HasPrefix(line, []byte("  ")) && !bytes.HasPrefix(line, []byte("   ")) {
		name, _, ok := parseFunc(line[2:])
		if !ok {
			return false
		}
		p.pend, p.havePd = p.r.intern(name), true
		return true
	}
	return false
}

// access parses "Write at 0x00c000012345 by goroutine 7:" and "Previous
// read at 0x... by main goroutine:".
func (p *races) access(line []byte) bool {
	rest, ok := bytes.CutSuffix(line, []byte(":"))
	if !ok {
		return false
	}
	op, rest, ok := bytes.Cut(rest, []byte(" at 0x"))
	if !ok || !raceOp(op) {
		return false
	}
	addr, by, ok := bytes.Cut(rest, []byte(" by "))
	if !ok {
		return false
	}
	a := RaceAccess{Op: string(bytes.ToLower(op))}
	var err error
	if a.Addr, err = strconv.ParseUint(string(addr), 16, 64); err != nil {
		return false
	}
	switch {
	case bytes.Equal(by, []byte("main goroutine")):
		a.Goid = 1
	case bytes.HasPrefix(by, []byte("goroutine ")):
		if a.Goid, err = strconv.ParseInt(string(by[len("goroutine "):]), 10, 64); err != nil {
			return false
		}
	default:
		return false
	}
	if len(p.cur.Accesses) >= 16 {
		return false
	}
	p.cur.Accesses = append(p.cur.Accesses, a)
	p.frames, p.havePd = &p.cur.Accesses[len(p.cur.Accesses)-1].Frames, false
	return true
}

func raceOp(op []byte) bool {
	op = bytes.TrimPrefix(op, []byte("Previous "))
	op = bytes.TrimPrefix(bytes.TrimPrefix(op, []byte("atomic ")), []byte("Atomic "))
	switch string(op) {
	case "Read", "Write", "read", "write":
		return true
	}
	return false
}

// created parses "Goroutine 7 (running) created at:".
func (p *races) created(line []byte) bool {
	rest, ok := bytes.CutPrefix(line, []byte("Goroutine "))
	if !ok {
		return false
	}
	rest, ok = bytes.CutSuffix(rest, []byte(") created at:"))
	if !ok {
		return false
	}
	id, state, ok := bytes.Cut(rest, []byte(" ("))
	if !ok {
		return false
	}
	goid, err := strconv.ParseInt(string(id), 10, 64)
	if err != nil {
		return false
	}
	p.frames, p.havePd = nil, false
	for i := range p.cur.Accesses {
		if a := &p.cur.Accesses[i]; a.Goid == goid && a.State == "" {
			a.State = string(state)
			p.frames = &a.CreatedAt
			break
		}
	}
	return true
}

// done ends the current report, keeping it if it named any access.
func (p *races) done() {
	p.active = false
	p.frames, p.havePd = nil, false
	if len(p.cur.Accesses) == 0 {
		return
	}
	p.r.raceTotal++
	if len(p.r.races) < maxRaces {
		p.r.races = append(p.r.races, p.cur)
	}
	p.cur = Race{}
}
