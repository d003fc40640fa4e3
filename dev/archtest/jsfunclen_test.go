package archtest

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestJSFunctionLength holds the workbench's JavaScript (web/ui) to the
// limit Go code has: no function longer than maxFuncLines, from the line
// it starts on to its closing brace. Every function with a body in braces
// counts, nested ones too: declarations, function expressions, methods
// and arrow functions. (An arrow function whose body is an expression
// lies within some other function or statement, and ends where that
// expression does; only braced bodies are measured.)
func TestJSFunctionLength(t *testing.T) {
	root := "../../web/ui"
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == "node_modules" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".js") && !strings.HasSuffix(path, ".mjs") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		fns, err := jsFunctions(string(src))
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		for _, f := range fns {
			if n := f.end - f.start + 1; n > maxFuncLines {
				rel, _ := filepath.Rel("../..", path)
				t.Errorf("%s:%d: %s is %d lines, more than %d: split it where its comments draw the lines", rel, f.start, f.name, n, maxFuncLines)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestJSFunctions checks the scanner the limit rests on: braces in
// strings, template literals, regular expressions and comments are not
// code, and every kind of function is found with the lines it spans.
func TestJSFunctions(t *testing.T) {
	long := strings.Repeat("  x++;\n", 80)
	src := "// a { in a comment\n" + // 1
		"export async function view(main) {\n" + // 2
		"  const re = /[{}]\\//g, s = '}{', d = \"{\";\n" + // 3
		"  const t = `a ${b({ c: `${'}'}` })} }`;\n" + // 4
		"  /* } */ const half = n / 2 / 3;\n" + // 5
		"  const f = (a) => {\n" + // 6
		"    return a;\n" + // 7
		"  };\n" + // 8
		"  return { m(x) {\n" + // 9
		"    return x;\n" + // 10
		"  } };\n" + // 11
		"}\n" + // 12
		"const g = function () {\n" + // 13
		long +
		"};\n" // 94
	fns, err := jsFunctions(src)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][2]int{}
	for _, f := range fns {
		got[f.name] = [2]int{f.start, f.end}
	}
	want := map[string][2]int{"view": {2, 12}, "f": {6, 8}, "m": {9, 11}, "g": {13, 94}}
	for name, span := range want {
		if got[name] != span {
			t.Errorf("function %s: lines %v, want %v (found %v)", name, got[name], span, got)
		}
	}
	if len(fns) != len(want) {
		t.Errorf("found %d functions, want %d: %v", len(fns), len(want), got)
	}
}

// jsFunction is a function with a braced body: its name (or where it
// is) and the lines of its start and closing brace.
type jsFunction struct {
	name       string
	start, end int
}

// jsToken is a token of JavaScript: its kind ('i' identifier or
// keyword, 'n' number, 's' string, 't' template text, 'r' regular
// expression, 'p' punctuator), text and line.
type jsToken struct {
	kind byte
	text string
	line int
}

// jsFunctions lists the functions with braced bodies in src.
func jsFunctions(src string) ([]jsFunction, error) {
	toks, err := jsTokens(src)
	if err != nil {
		return nil, err
	}
	type open struct {
		fn     *jsFunction
		before int // for "(": the index of the token before it
	}
	var stack []open
	var out []jsFunction
	// parens maps the index of a ")" to that of the token before its "(".
	parens := map[int]int{}
	for i, tk := range toks {
		if tk.kind != 'p' {
			continue
		}
		switch tk.text {
		case "(", "[":
			stack = append(stack, open{before: i - 1})
		case "{":
			stack = append(stack, open{fn: functionAt(toks, i, parens)})
		case ")", "]", "}":
			if len(stack) == 0 {
				return nil, fmt.Errorf("line %d: unbalanced %q", tk.line, tk.text)
			}
			top := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if tk.text == ")" {
				parens[i] = top.before
			}
			if top.fn != nil {
				top.fn.end = tk.line
				out = append(out, *top.fn)
			}
		}
	}
	if len(stack) != 0 {
		return nil, fmt.Errorf("%d brackets not closed", len(stack))
	}
	return out, nil
}

// jsKeywordsBeforeParen are the words a "(" follows that make what comes
// after the ")" a statement's block, not a method's body.
var jsKeywordsBeforeParen = map[string]bool{"if": true, "for": true, "while": true, "switch": true, "catch": true, "with": true, "return": true, "typeof": true, "await": true, "in": true, "of": true, "new": true, "do": true, "else": true}

// functionAt says whether the "{" at toks[i] opens a function body, and
// if so which function, named and dated by its start.
func functionAt(toks []jsToken, i int, parens map[int]int) *jsFunction {
	if i == 0 {
		return nil
	}
	prev := toks[i-1]
	if prev.kind == 'p' && prev.text == "=>" {
		return &jsFunction{name: arrowName(toks, i-1), start: prev.line}
	}
	if prev.kind != 'p' || prev.text != ")" {
		return nil
	}
	j, ok := parens[i-1]
	if !ok || j < 0 {
		return nil
	}
	before := toks[j]
	switch {
	case before.kind == 'i' && before.text == "function":
		return &jsFunction{name: assignedName(toks, j), start: before.line}
	case before.kind == 'i' && jsKeywordsBeforeParen[before.text]:
		return nil
	case before.kind == 'i':
		// "function name(" or a method "name(": a call is never followed
		// by a block.
		if j > 0 && toks[j-1].kind == 'i' && toks[j-1].text == "function" {
			return &jsFunction{name: before.text, start: toks[j-1].line}
		}
		return &jsFunction{name: before.text, start: before.line}
	}
	return nil
}

// arrowName names the arrow function whose "=>" is toks[k]: the name it
// is assigned to or keyed by, else where it is.
func arrowName(toks []jsToken, k int) string {
	j := k - 1
	if j >= 0 && toks[j].kind == 'p' && toks[j].text == ")" {
		depth := 0
		for ; j >= 0; j-- {
			if toks[j].kind == 'p' && toks[j].text == ")" {
				depth++
			} else if toks[j].kind == 'p' && toks[j].text == "(" {
				depth--
				if depth == 0 {
					break
				}
			}
		}
	}
	if j > 0 && toks[j-1].kind == 'i' && toks[j-1].text == "async" {
		j--
	}
	if name := assignedName(toks, j); !strings.HasPrefix(name, "function at") {
		return name
	}
	return fmt.Sprintf("arrow function at line %d", toks[k].line)
}

// assignedName is the name a function starting at toks[j] is given by
// "name =" or "name:" before it.
func assignedName(toks []jsToken, j int) string {
	if j >= 2 && toks[j-1].kind == 'p' && (toks[j-1].text == "=" || toks[j-1].text == ":") && toks[j-2].kind == 'i' {
		return toks[j-2].text
	}
	return fmt.Sprintf("function at line %d", toks[j].line)
}

// jsTokens splits src into tokens, dropping comments and white space.
func jsTokens(src string) ([]jsToken, error) {
	sc := &jsScanner{src: src, line: 1}
	for sc.i < len(src) {
		if err := sc.next(); err != nil {
			return nil, fmt.Errorf("line %d: %w", sc.line, err)
		}
	}
	return sc.toks, nil
}

// jsScanner is jsTokens' state: where it is, the bracket depth, and the
// depths at which a template's ${ … } closes.
type jsScanner struct {
	src   string
	i     int
	line  int
	depth int
	tmpl  []int
	toks  []jsToken
}

// next scans one token, or white space or a comment.
func (sc *jsScanner) next() error {
	src, i, c := sc.src, sc.i, sc.src[sc.i]
	switch {
	case c == '\n':
		sc.line++
		sc.i++
	case c == ' ' || c == '\t' || c == '\r':
		sc.i++
	case strings.HasPrefix(src[i:], "//"):
		for sc.i < len(src) && src[sc.i] != '\n' {
			sc.i++
		}
	case strings.HasPrefix(src[i:], "/*"):
		end := strings.Index(src[i+2:], "*/")
		if end < 0 {
			return fmt.Errorf("comment not closed")
		}
		sc.line += strings.Count(src[i:i+2+end], "\n")
		sc.i += end + 4
	case c == '\'' || c == '"':
		n, err := jsQuoted(src[i:], c)
		if err != nil {
			return err
		}
		sc.emit('s', n)
	case c == '`' || c == '}' && len(sc.tmpl) > 0 && sc.tmpl[len(sc.tmpl)-1] == sc.depth:
		return sc.template(c)
	case c == '/' && sc.regexOK():
		n, err := jsRegex(src[i:])
		if err != nil {
			return err
		}
		sc.emit('r', n)
	case jsWordStart(c) || c >= '0' && c <= '9' || c == '.' && i+1 < len(src) && src[i+1] >= '0' && src[i+1] <= '9':
		// A word: an identifier or keyword, or a number.
		kind, j := byte('i'), i+1
		if !jsWordStart(c) {
			kind = 'n'
		}
		for j < len(src) && (jsWordStart(src[j]) || src[j] >= '0' && src[j] <= '9' || kind == 'n' && src[j] == '.') {
			j++
		}
		sc.emit(kind, j-i)
	case strings.HasPrefix(src[i:], "=>"):
		sc.emit('p', 2)
	default:
		switch c {
		case '{', '(', '[':
			sc.depth++
		case '}', ')', ']':
			sc.depth--
		}
		sc.emit('p', 1)
	}
	return nil
}

// emit adds the n bytes at the scanner as a token of kind.
func (sc *jsScanner) emit(kind byte, n int) {
	sc.toks = append(sc.toks, jsToken{kind, sc.src[sc.i : sc.i+n], sc.line})
	sc.line += strings.Count(sc.src[sc.i:sc.i+n], "\n")
	sc.i += n
}

// template scans a template's text, from its start ("`") or the end of
// a ${ … } ("}") to its end or the next ${.
func (sc *jsScanner) template(c byte) error {
	if c == '}' {
		sc.tmpl = sc.tmpl[:len(sc.tmpl)-1]
	}
	n, open, err := jsTemplate(sc.src[sc.i+1:])
	if err != nil {
		return err
	}
	sc.emit('t', 1+n)
	if open {
		sc.tmpl = append(sc.tmpl, sc.depth)
	}
	return nil
}

// regexOK reports whether a "/" here starts a regular expression: after
// a punctuator other than a closing bracket, or after a keyword; else it
// divides.
func (sc *jsScanner) regexOK() bool {
	if len(sc.toks) == 0 {
		return true
	}
	p := sc.toks[len(sc.toks)-1]
	switch p.kind {
	case 'p':
		return p.text != ")" && p.text != "]" && p.text != "}"
	case 'i':
		return jsKeywordsBeforeParen[p.text] || p.text == "case" || p.text == "void" || p.text == "delete" || p.text == "throw" || p.text == "yield"
	}
	return false
}

// jsWordStart reports whether c may start an identifier.
func jsWordStart(c byte) bool {
	return c == '_' || c == '$' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

// jsQuoted is the length of the string literal s starts with.
func jsQuoted(s string, q byte) (int, error) {
	for i := 1; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case q:
			return i + 1, nil
		case '\n':
			return 0, fmt.Errorf("string not closed")
		}
	}
	return 0, fmt.Errorf("string not closed")
}

// jsTemplate is the length of template text s starts with, up to and
// including the closing "`" or an opening "${" (open is then true).
func jsTemplate(s string) (n int, open bool, err error) {
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '\\':
			i++
		case s[i] == '`':
			return i + 1, false, nil
		case s[i] == '$' && i+1 < len(s) && s[i+1] == '{':
			return i + 2, true, nil
		}
	}
	return 0, false, fmt.Errorf("template not closed")
}

// jsRegex is the length of the regular expression literal s starts
// with, flags included.
func jsRegex(s string) (int, error) {
	class := false
	for i := 1; i < len(s); i++ {
		switch {
		case s[i] == '\\':
			i++
		case s[i] == '[':
			class = true
		case s[i] == ']':
			class = false
		case s[i] == '/' && !class:
			j := i + 1
			for j < len(s) && (s[j] >= 'a' && s[j] <= 'z') {
				j++
			}
			return j, nil
		case s[i] == '\n':
			return 0, fmt.Errorf("regular expression not closed")
		}
	}
	return 0, fmt.Errorf("regular expression not closed")
}
