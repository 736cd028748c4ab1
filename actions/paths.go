package actions

import (
	"net/url"
	"strings"
)

// The one codec of add.path and remove.path (PROTOCOL.md: "a URI ... the
// path is percent-encoded"): EscapePath writes a relative path as the log
// holds it, CanonicalPath reads any path the log holds into the form two
// file actions are compared in, and UnescapePath decodes strictly.

// EscapePath percent-encodes a relative path as a URI path, as Spark does
// through java.net.URI: ASCII letters, digits, "-_.!~*'()", ";:@&=+$,",
// "/" and non-ASCII bytes stay; every other byte (space, '%', control
// characters, ...) becomes %XX.
func EscapePath(p string) string {
	const hex = "0123456789ABCDEF"
	n := 0
	for i := 0; i < len(p); i++ {
		if !pathSafe(p[i]) {
			n++
		}
	}
	if n == 0 {
		return p
	}
	var b strings.Builder
	b.Grow(len(p) + 2*n)
	for i := 0; i < len(p); i++ {
		c := p[i]
		if pathSafe(c) {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&15])
	}
	return b.String()
}

func pathSafe(c byte) bool {
	switch {
	case c >= 0x80, 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	return strings.IndexByte("-_.!~*'();:@&=+$,/", c) >= 0
}

// UnescapePath decodes %XX escapes, leaving '+' alone as paths do; a
// malformed escape is an error.
func UnescapePath(s string) (string, error) {
	if !strings.Contains(s, "%") {
		return s, nil
	}
	return url.PathUnescape(s)
}

// CanonicalPath decodes a file action's path into the form two actions
// are compared in: percent-decoded, with a "file:" scheme removed.
// Relative paths stay relative to the table root. A path that does not
// decode (a stray '%') is taken as written, as Spark's URI parsing of
// such paths is lenient too.
func CanonicalPath(p string) string {
	if rest, ok := strings.CutPrefix(p, "file://"); ok {
		p = rest
	} else if rest, ok := strings.CutPrefix(p, "file:"); ok {
		p = rest
	}
	if d, err := UnescapePath(p); err == nil {
		return d
	}
	return p
}
