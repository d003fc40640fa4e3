package blocking

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
)

// TruthFile is the name of the ground-truth file in every program
// directory.
const TruthFile = "truth.json"

// Program shapes.
const (
	// ShapeTest is a test kernel: a package whose TestXxx triggers the bug
	// in goroutines it spawns; it runs as a test binary, so the test
	// runner's goroutine waits in testing.(*T).Run beside the bug.
	ShapeTest = "test"
	// ShapeService is a package main that runs until it is signalled.
	ShapeService = "service"
)

// Classes are the bug classes of the corpus (after the usual taxonomy of
// blocking bugs: resource deadlocks, communication deadlocks and mixed
// ones), "two-bugs" for a program with two independent bugs, and
// "healthy" for the controls.
var Classes = []string{
	"double-lock", "lock-order-cycle", "rwr-deadlock",
	"waitgroup-missing-done", "waitgroup-wait-in-worker", "waitgroup-add-in-goroutine",
	"chan-send-no-receiver", "chan-recv-no-sender", "chan-recv-never-closed",
	"collector-returned-early", "nil-channel", "select-no-cases",
	"select-without-cancel", "context-never-cancelled",
	"cond-no-signal", "lost-signal", "ticker-leak", "timer-never-fires",
	"chan-and-lock", "rlock-across-wait", "lock-across-callback",
	"semaphore-leak", "resource-pool-leak",
	"two-bugs",
	"healthy",
}

// Goroutines names goroutines a program must show once its bug has
// triggered (or, for a control, once it is up).
type Goroutines struct {
	// Function is the frame a report must name: the innermost frame of
	// the program's own code in their stacks.
	Function string `json:"function"`
	// State is the wait reason the dump prints for them ("chan send",
	// "sync.Mutex.Lock", "select (no cases)" ...), matched as a prefix of
	// the printed state.
	State string `json:"state"`
	// Count is how many such goroutines there are at least.
	Count int `json:"count"`
	// Pattern, in a blocked group, is the pattern a suspect naming
	// Function should have when it is not the truth's own (a program with
	// two bugs).
	Pattern string `json:"pattern,omitempty"`
}

// Truth is the content of a program's truth.json.
type Truth struct {
	// Name is the directory name (and the module path).
	Name string `json:"name"`
	// Shape is [ShapeTest] or [ShapeService].
	Shape string `json:"shape"`
	// Test is the test function a test kernel runs.
	Test string `json:"test,omitempty"`
	// Class is one of [Classes].
	Class string `json:"class"`
	// Pattern is the leak pattern a report should give ("none" for a
	// control).
	Pattern string `json:"pattern"`
	// Description says in one sentence what goes wrong (or, for a
	// control, why it is healthy).
	Description string `json:"description"`
	// Healthy controls have no bug: no suspect may be reported.
	Healthy bool `json:"healthy"`
	// Global is set when the blocked object is reachable from a
	// package-level variable.
	Global bool `json:"global"`
	// GoroutineLeak is set when the runtime's goroutineleak profile is
	// expected to report the blocked goroutines.
	GoroutineLeak bool `json:"goroutineleak"`
	// Blocked are the stuck goroutines; a report detects the bug when its
	// top suspect names one of their functions.
	Blocked []Goroutines `json:"blocked,omitempty"`
	// Consequences are goroutines waiting for the blocked ones (the test
	// runner in testing.(*T).Run, a WaitGroup.Wait over stuck workers):
	// a report must fold them under their cause, not list them apart.
	Consequences []Goroutines `json:"consequences,omitempty"`
	// Parked are a control's healthy look-alikes: idle goroutines that
	// must be present before it is captured, and must not be reported.
	Parked []Goroutines `json:"parked,omitempty"`
}

// Program is one corpus program found by [All].
type Program struct {
	// Dir is the program's directory.
	Dir string
	// Truth is its parsed truth.json.
	Truth Truth
}

// Package is the name of the package a hook file for the program must
// declare: "main" for a service, the directory name for a test kernel.
func (p Program) Package() string {
	if p.Truth.Shape == ShapeService {
		return "main"
	}
	return p.Truth.Name
}

// PatternOf returns the pattern a suspect located at fn should have: the
// blocked group's own pattern if it has one, else the truth's.
func (t Truth) PatternOf(fn string) string {
	for _, g := range t.Blocked {
		if g.Function == fn && g.Pattern != "" {
			return g.Pattern
		}
	}
	return t.Pattern
}

// BlockedFunctions returns the distinct functions of Blocked.
func (t Truth) BlockedFunctions() []string {
	var out []string
	seen := map[string]bool{}
	for _, g := range t.Blocked {
		if !seen[g.Function] {
			seen[g.Function] = true
			out = append(out, g.Function)
		}
	}
	return out
}

// Validate checks t against the rules above.
func (t Truth) Validate() error {
	if t.Name == "" || strings.ContainsAny(t.Name, ".-/ ") {
		return fmt.Errorf("truth: name %q must be a plain package name", t.Name)
	}
	switch t.Shape {
	case ShapeTest:
		if !strings.HasPrefix(t.Test, "Test") {
			return fmt.Errorf("truth %s: test kernel without a TestXxx", t.Name)
		}
	case ShapeService:
		if t.Test != "" {
			return fmt.Errorf("truth %s: service with a test %q", t.Name, t.Test)
		}
	default:
		return fmt.Errorf("truth %s: unknown shape %q", t.Name, t.Shape)
	}
	if !known(t.Class) {
		return fmt.Errorf("truth %s: unknown class %q", t.Name, t.Class)
	}
	if t.Healthy != (t.Class == "healthy") {
		return fmt.Errorf("truth %s: healthy is %v but class is %q", t.Name, t.Healthy, t.Class)
	}
	if t.Healthy {
		if len(t.Blocked) > 0 || len(t.Parked) == 0 || t.Pattern != "none" || t.GoroutineLeak || t.Global {
			return fmt.Errorf("truth %s: a control has no blocked goroutines, no pattern, nothing for goroutineleak, and at least one parked group", t.Name)
		}
	} else if len(t.Blocked) == 0 || len(t.Parked) > 0 || t.Pattern == "" || t.Pattern == "none" {
		return fmt.Errorf("truth %s: a bug needs blocked goroutines and a pattern, and no parked ones", t.Name)
	}
	if t.Shape == ShapeTest && !t.Healthy && !hasFunction(t.Consequences, "testing.(*T).Run") {
		return fmt.Errorf("truth %s: a test kernel's runner waits in testing.(*T).Run: list it among the consequences", t.Name)
	}
	for i, list := range [][]Goroutines{t.Blocked, t.Consequences, t.Parked} {
		for _, g := range list {
			if g.Function == "" || g.State == "" || g.Count < 1 {
				return fmt.Errorf("truth %s: goroutines %+v need a function, a state and a positive count", t.Name, g)
			}
			if g.Pattern != "" && (i != 0 || g.Pattern == "none") {
				return fmt.Errorf("truth %s: goroutines %+v: only blocked groups have a pattern of their own", t.Name, g)
			}
		}
	}
	return nil
}

func known(class string) bool {
	for _, c := range Classes {
		if c == class {
			return true
		}
	}
	return false
}

func hasFunction(gs []Goroutines, fn string) bool {
	for _, g := range gs {
		if g.Function == fn {
			return true
		}
	}
	return false
}

// Load reads dir/truth.json; its name must equal the directory's.
func Load(dir string) (Program, error) {
	path := filepath.Join(dir, TruthFile)
	data, err := os.ReadFile(path)
	if err != nil {
		return Program{}, fmt.Errorf("load truth: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var t Truth
	if err := dec.Decode(&t); err != nil {
		return Program{}, fmt.Errorf("%s: %w", path, err)
	}
	if err := t.Validate(); err != nil {
		return Program{}, fmt.Errorf("%s: %w", path, err)
	}
	if base := filepath.Base(dir); t.Name != base {
		return Program{}, fmt.Errorf("%s: name %q does not match directory %q", path, t.Name, base)
	}
	return Program{Dir: dir, Truth: t}, nil
}

// All loads every program under root (each subdirectory holding a
// truth.json), sorted by name.
func All(root string) ([]Program, error) {
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil, fmt.Errorf("list corpus: %w", err)
	}
	var out []Program
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		dir := filepath.Join(root, e.Name())
		if _, err := os.Stat(filepath.Join(dir, TruthFile)); errors.Is(err, os.ErrNotExist) {
			continue
		}
		p, err := Load(dir)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Truth.Name < out[j].Truth.Name })
	return out, nil
}

// Root returns the corpus directory, found from this file's compile-time
// path.
func Root() (string, error) {
	_, file, _, ok := runtime.Caller(0)
	if !ok || !filepath.IsAbs(file) {
		return "", errors.New("corpus root: source path unknown")
	}
	return filepath.Dir(file), nil
}
