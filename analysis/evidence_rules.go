package analysis

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strings"

	"github.com/leakscope/leakscope/analysis/flame"
)

// RulesEnv names the environment variable holding a user rules file that
// extends the built-in rules.
const RulesEnv = "LEAKSCOPE_RULES"

//go:embed rules/default.json
var defaultRulesJSON []byte

// RulesFile is the JSON shape of a rules file: {"rules": [...]}.
type RulesFile struct {
	Rules []Rule `json:"rules"`
}

// DefaultRules returns the built-in rules, compiled.
func DefaultRules() []Rule {
	rs, err := ParseRules(defaultRulesJSON, "rules/default.json")
	if err != nil {
		panic(err) // the embedded file is tested
	}
	return rs
}

// ParseRules parses and compiles a rules file; name is used in errors.
func ParseRules(data []byte, name string) ([]Rule, error) {
	var f RulesFile
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("%s: not a rules file: %w", name, err)
	}
	for i := range f.Rules {
		if err := f.Rules[i].compile(); err != nil {
			return nil, fmt.Errorf("%s: rule %d (%s): %w", name, i+1, f.Rules[i].Pattern, err)
		}
	}
	if f.Rules == nil {
		f.Rules = []Rule{}
	}
	return f.Rules, nil
}

// LoadRules returns the rules of the file at path (tried first) followed by
// the built-in rules. An empty path uses $LEAKSCOPE_RULES, and no file at
// all means the built-in rules alone.
func LoadRules(path string) ([]Rule, error) {
	if path == "" {
		path = os.Getenv(RulesEnv)
	}
	def := DefaultRules()
	if path == "" {
		return def, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read rules: %w", err)
	}
	user, err := ParseRules(data, path)
	if err != nil {
		return nil, err
	}
	return append(user, def...), nil
}

func (r *Rule) compile() error {
	if r.Pattern == "" {
		return fmt.Errorf("missing pattern name")
	}
	if r.Kind == "" {
		r.Kind = KindGoroutine
	}
	if r.Kind != KindGoroutine && r.Kind != KindHeap && r.Kind != KindIncident {
		return fmt.Errorf("kind %q is not %q, %q or %q", r.Kind, KindGoroutine, KindHeap, KindIncident)
	}
	var err error
	if r.states, err = compileAll(r.States); err != nil {
		return err
	}
	if r.frames, err = compileAll(r.Frames); err != nil {
		return err
	}
	if r.notFrames, err = compileAll(r.NotFrames); err != nil {
		return err
	}
	if r.source, err = compileAll(r.Source); err != nil {
		return err
	}
	for _, f := range r.Statement {
		if !knownFact(f) {
			return fmt.Errorf("statement fact %q is not one of %s, or calls:PKG.FUNC", f, strings.Join(statementFacts, ", "))
		}
	}
	if r.creation, err = compileAll(r.Creation); err != nil {
		return err
	}
	if r.members, err = compileAll(r.Members); err != nil {
		return err
	}
	if r.memberPatterns, err = compileAll(r.MemberPatterns); err != nil {
		return err
	}
	if r.allocator, err = compileAll(r.Allocator); err != nil {
		return err
	}
	if r.Kind == KindIncident && len(r.creation)+len(r.members) == 0 {
		return fmt.Errorf("an incident rule needs creation or members")
	}
	r.compiled = true
	return nil
}

func compileAll(exprs []string) ([]*regexp.Regexp, error) {
	out := make([]*regexp.Regexp, len(exprs))
	for i, e := range exprs {
		re, err := regexp.Compile(e)
		if err != nil {
			return nil, fmt.Errorf("bad regexp %q: %w", e, err)
		}
		out[i] = re
	}
	return out, nil
}

// Match reports whether the rule matches a suspect kind, a wait reason, a
// stack's function names (leaf first) and the statement at the location
// as go/printer prints it ("" when unknown; no statement facts known).
func (r *Rule) Match(kind, state string, functions []string, source string) bool {
	return r.match(kind, state, functions, &waitStmt{text: source}, nil)
}

// match is Match with the statement read from the kept source and the
// wait-for findings of the group.
func (r *Rule) match(kind, state string, functions []string, st *waitStmt, findings []string) bool {
	if !r.compiled && r.compile() != nil {
		return false
	}
	if r.Kind != kind {
		return false
	}
	if len(r.WaitFor) > 0 && !anyEqual(r.WaitFor, findings) {
		return false
	}
	if len(r.Statement) > 0 && !anyEqual(r.Statement, st.facts()) {
		return false
	}
	if len(r.source) > 0 {
		ok := false
		for _, re := range r.source {
			if st != nil && st.text != "" && re.MatchString(st.text) {
				ok = true
				break
			}
		}
		if !ok {
			return false
		}
	}
	if len(r.states) > 0 {
		ok := false
		for _, re := range r.states {
			if re.MatchString(state) {
				ok = true
				break
			}
		}
		if !ok {
			return false
		}
	}
	if len(r.allocator) > 0 && !anyAllocator(r.allocator, functions) {
		return false
	}
	for _, re := range r.frames {
		if !anyMatch(re, functions) {
			return false
		}
	}
	for _, re := range r.notFrames {
		if anyMatch(re, functions) {
			return false
		}
	}
	return true
}

func anyMatch(re *regexp.Regexp, fns []string) bool {
	for _, f := range fns {
		if re.MatchString(f) {
			return true
		}
	}
	return false
}

// classify returns the first rule matching, or nil.
func classify(rules []Rule, kind, state string, functions []string, st *waitStmt) *Rule {
	return classifyFound(rules, kind, state, functions, st, nil)
}

// classifyFound is classify for a group with wait-for findings.
func classifyFound(rules []Rule, kind, state string, functions []string, st *waitStmt, findings []string) *Rule {
	state = normState(state)
	for i := range rules {
		if rules[i].match(kind, state, functions, st, findings) {
			return &rules[i]
		}
	}
	return nil
}

// statementFacts are the statement facts a rule may name (besides
// calls:PKG.FUNC).
var statementFacts = []string{stmtSelect, stmtReceive, stmtRange, stmtSend, stmtOther, "in-loop", factSemaphore,
	caseTimer + "-case", caseTicker + "-case", caseMaybeTimer + "-case", caseStopped + "-case", caseDone + "-case",
	caseSignal + "-case", caseSend + "-case", caseChan + "-case"}

func knownFact(f string) bool {
	if rest, ok := strings.CutPrefix(f, "calls:"); ok {
		return strings.Contains(rest, ".")
	}
	for _, k := range statementFacts {
		if f == k {
			return true
		}
	}
	return false
}

func anyEqual(a, b []string) bool {
	for _, x := range a {
		for _, y := range b {
			if x == y {
				return true
			}
		}
	}
	return false
}

// matchIncident returns the first incident rule matching the member
// suspects (indexes into sus), or nil.
func matchIncident(rules []Rule, sus []Suspect, members []int) *Rule {
	var creation, stacks, patterns []string
	for _, i := range members {
		s := sus[i]
		if s.Kind == KindGoroutine {
			patterns = append(patterns, s.Pattern)
		}
		stacks = append(stacks, functions(s.Stack)...)
		for _, h := range s.CreationChain {
			creation = append(creation, functions(h.Stack)...)
		}
	}
	for i := range rules {
		r := &rules[i]
		if r.Kind != KindIncident || !r.compiled && r.compile() != nil {
			continue
		}
		if allMatch(r.creation, creation) && allMatch(r.members, stacks) && allMatch(r.memberPatterns, patterns) {
			return r
		}
	}
	return nil
}

// allMatch reports whether each regexp matches some function.
func allMatch(res []*regexp.Regexp, fns []string) bool {
	for _, re := range res {
		if !anyMatch(re, fns) {
			return false
		}
	}
	return true
}

// anyAllocator reports whether a regexp matches the function that made
// an allocation (stack leaf first): a frame of the first frames outside
// the runtime that are in one package (time.newTimer under
// time.NewTimer), before the first frame of another.
func anyAllocator(res []*regexp.Regexp, functions []string) bool {
	pkg := ""
	for _, f := range functions {
		if pkg == "" && isRuntime(f) {
			continue
		}
		if p := flame.PackageOf(f); pkg == "" {
			pkg = p
		} else if p != pkg {
			return false
		}
		for _, re := range res {
			if re.MatchString(f) {
				return true
			}
		}
	}
	return false
}
