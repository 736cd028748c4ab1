package main

import (
	"fmt"
	"strings"
)

// The CLI synopses of DESIGN.md and README.md are generated from the verb
// table; TestDocsMatchVerbTable checks them (and -rewrite rewrites them).

// designSynopsis is the command block of DESIGN.md's CLI contract: every
// verb's usage, wrapped at 78 columns under its name.
func designSynopsis() string {
	var b strings.Builder
	const width = 78
	for _, v := range orderedVerbs() {
		parts := v.synopsisParts()
		indent := strings.Repeat(" ", len("lakelog ")+max(len(parts[0]), 8)+1)
		line := fmt.Sprintf("lakelog %-8s", parts[0])
		for i, p := range parts[1:] {
			if i > 0 && len(line)+1+len(p) > width {
				b.WriteString(line + "\n")
				line = indent + p
				continue
			}
			line += " " + p
		}
		b.WriteString(line + "\n")
	}
	fmt.Fprintf(&b, "lakelog help     [%s|COMMAND]\n", strings.Join(topicNames(), "|"))
	b.WriteString("lakelog --version\n")
	return b.String()
}

// readmeTable is the command table of README.md: each verb's usage and
// summary.
func readmeTable() string {
	var b strings.Builder
	b.WriteString("| command | what it does |\n| --- | --- |\n")
	esc := func(s string) string { return strings.ReplaceAll(s, "|", `\|`) }
	for _, v := range orderedVerbs() {
		fmt.Fprintf(&b, "| `lakelog %s` | %s |\n", esc(v.synopsis()), esc(v.summary))
	}
	fmt.Fprintf(&b, "| `lakelog help [%s\\|CMD]` | the forms of predicates, types, times, URIs and outputs, or a command's flags |\n", strings.Join(topicNames(), `\|`))
	b.WriteString("| `lakelog --version` | the version and commit of this build |\n")
	return b.String()
}
