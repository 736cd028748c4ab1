package actions_test

import (
	"strings"
	"testing"

	"github.com/lakelog/lakelog/actions"
)

func TestPathCodec(t *testing.T) {
	for _, c := range []struct{ raw, escaped string }{
		{"part-0.parquet", "part-0.parquet"},
		{"p=a b/part-0.parquet", "p=a%20b/part-0.parquet"},
		{"p=100%/x", "p=100%25/x"},
		{"p=ünï/x", "p=ünï/x"},
		{"p=a+b;c@d/x", "p=a+b;c@d/x"},
		{"p=\x01#?/x", "p=%01%23%3F/x"},
	} {
		if got := actions.EscapePath(c.raw); got != c.escaped {
			t.Errorf("EscapePath(%q) = %q, want %q", c.raw, got, c.escaped)
		}
		if got := actions.CanonicalPath(c.escaped); got != c.raw {
			t.Errorf("CanonicalPath(%q) = %q, want %q", c.escaped, got, c.raw)
		}
	}
	for in, want := range map[string]string{
		"file:///data/t/x.parquet": "/data/t/x.parquet",
		"file:/data/t/a%20b":       "/data/t/a b",
		"bad%zz":                   "bad%zz",
	} {
		if got := actions.CanonicalPath(in); got != want {
			t.Errorf("CanonicalPath(%q) = %q, want %q", in, got, want)
		}
	}
	if _, err := actions.UnescapePath("a%2"); err == nil {
		t.Error("UnescapePath of a cut escape: no error")
	}
}

// FuzzPathCodec: every relative path survives EscapePath then
// CanonicalPath, the escaped form holds only URI path characters, and
// neither function panics on any input.
func FuzzPathCodec(f *testing.F) {
	for _, s := range []string{"", "a b", "p=%41/x", "ü/%", "file:x", "\x00\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		esc := actions.EscapePath(p)
		_ = actions.CanonicalPath(p)
		for i := 0; i < len(esc); i++ {
			c := esc[i]
			switch {
			case c == '%':
				if i+2 >= len(esc) || !isHex(esc[i+1]) || !isHex(esc[i+2]) {
					t.Fatalf("EscapePath(%q) = %q: a bare %%", p, esc)
				}
				i += 2
			case c < 0x80 && !strings.ContainsRune("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.!~*'();:@&=+$,/", rune(c)):
				t.Fatalf("EscapePath(%q) = %q keeps %q, which a URI path cannot hold", p, esc, c)
			}
		}
		if strings.HasPrefix(p, "file:") {
			return // a scheme, not a relative path
		}
		if got := actions.CanonicalPath(esc); got != p {
			t.Fatalf("CanonicalPath(EscapePath(%q)) = %q", p, got)
		}
	})
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'A' <= c && c <= 'F' || 'a' <= c && c <= 'f'
}
