package agent

import (
	"bytes"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
)

// triggerSection is the Markdown section the agent adds to an entry's
// report and postmortem: what triggered the capture, on which node, and
// for an alert its name, labels, start and where it came from. Every
// outside value is quoted (strconv.Quote) in an indented code block, so
// no label can add Markdown or HTML.
func triggerSection(e *Entry, node string) string {
	var b strings.Builder
	b.WriteString("## Trigger\n\n")
	if e.Alert == nil {
		fmt.Fprintf(&b, "Captured by the leakscope agent's growth rule on node %s at %s.\n\n", codeWord(node), e.Created.UTC().Format(time.RFC3339))
		fmt.Fprintf(&b, "    %s\n\n", strconv.Quote(e.Trigger))
		return b.String()
	}
	al := e.Alert
	fmt.Fprintf(&b, "Captured by the leakscope agent on node %s at %s, for this Alertmanager alert:\n\n", codeWord(node), e.Created.UTC().Format(time.RFC3339))
	line := func(k, v string) { fmt.Fprintf(&b, "    %-13s %s\n", k, strconv.Quote(v)) }
	line("alert", al.Name)
	if !al.StartsAt.IsZero() {
		line("firing since", al.StartsAt.UTC().Format(time.RFC3339))
	}
	if al.Alertmanager != "" {
		line("alertmanager", al.Alertmanager)
	}
	if al.GeneratorURL != "" {
		line("rule", al.GeneratorURL)
	}
	keys := make([]string, 0, len(al.Labels))
	for k := range al.Labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, "    label         %s=%s\n", strconv.Quote(k), strconv.Quote(al.Labels[k]))
	}
	b.WriteString("\n")
	return b.String()
}

// codeWord is s as a Markdown code span when it is a plain word, else
// quoted in one.
func codeWord(s string) string {
	for _, r := range s {
		if !(r == '-' || r == '.' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return "`" + strings.ReplaceAll(strconv.Quote(s), "`", `\x60`) + "`"
		}
	}
	return "`" + s + "`"
}

// withTrigger puts the trigger section after a Markdown document's first
// heading line (at the top when it has none).
func withTrigger(doc []byte, section string) []byte {
	var out bytes.Buffer
	if bytes.HasPrefix(doc, []byte("# ")) {
		if i := bytes.IndexByte(doc, '\n'); i >= 0 {
			out.Write(doc[:i+1])
			out.WriteString("\n" + section)
			out.Write(bytes.TrimLeft(doc[i+1:], "\n"))
			return out.Bytes()
		}
	}
	out.WriteString(section)
	out.Write(doc)
	return out.Bytes()
}
