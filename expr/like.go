package expr

import (
	"fmt"
	"regexp"
	"strings"
)

// likeMatcher is a compiled LIKE pattern.
type likeMatcher struct {
	// prefix is the literal text before the first wildcard, and exact
	// reports that the pattern has no wildcard at all.
	prefix string
	exact  bool
	// onlyPrefix reports that the pattern is prefix followed by one %.
	onlyPrefix bool
	re         *regexp.Regexp
}

// compileLike compiles a LIKE pattern. The escape character makes the
// next character literal; it may only precede %, _ or itself, as in Spark.
func compileLike(pattern string, escape rune) (*likeMatcher, error) {
	if escape == 0 {
		escape = '\\'
	}
	var re strings.Builder
	var lit strings.Builder
	re.WriteString(`(?s)\A`)
	m := &likeMatcher{}
	sawWildcard := false
	rs := []rune(pattern)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case r == escape:
			if i+1 >= len(rs) || (rs[i+1] != '%' && rs[i+1] != '_' && rs[i+1] != escape) {
				return nil, fmt.Errorf("LIKE pattern %s: the escape character %q must be followed by %%, _ or itself", quoteString(pattern), escape)
			}
			i++
			re.WriteString(regexp.QuoteMeta(string(rs[i])))
			if !sawWildcard {
				lit.WriteRune(rs[i])
			}
		case r == '%':
			re.WriteString(`.*`)
			if !sawWildcard {
				m.onlyPrefix = i == len(rs)-1
			}
			sawWildcard = true
		case r == '_':
			re.WriteString(`.`)
			sawWildcard = true
		default:
			re.WriteString(regexp.QuoteMeta(string(r)))
			if !sawWildcard {
				lit.WriteRune(r)
			}
		}
	}
	re.WriteString(`\z`)
	m.prefix = lit.String()
	m.exact = !sawWildcard
	if !m.exact && !m.onlyPrefix {
		var err error
		if m.re, err = regexp.Compile(re.String()); err != nil {
			return nil, fmt.Errorf("LIKE pattern %s: %v", quoteString(pattern), err)
		}
	}
	return m, nil
}

func (m *likeMatcher) match(s string) bool {
	switch {
	case m.exact:
		return s == m.prefix
	case m.onlyPrefix:
		return strings.HasPrefix(s, m.prefix)
	}
	return m.re.MatchString(s)
}
