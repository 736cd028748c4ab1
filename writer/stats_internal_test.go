package writer

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestTruncateStrings(t *testing.T) {
	a32 := strings.Repeat("a", 32)
	for _, tc := range []struct {
		in, min, max string
	}{
		{"short", "short", "short"},
		{a32, a32, a32},
		{a32 + "b", a32, a32 + "\ufffd"},
		// Characters at or above U+FFFD after the prefix are kept, so that
		// the tie-breaker still ends up above the dropped tail.
		{a32 + "\uffff\U0001F600x", a32, a32 + "\uffff\U0001F600\ufffd"},
		{a32 + "\ufffd", a32, a32 + "\ufffd\ufffd"},
		// Counting is by characters, not bytes.
		{strings.Repeat("é", 40), strings.Repeat("é", 32), strings.Repeat("é", 32) + "\ufffd"},
	} {
		if got := truncateMin(tc.in); got != tc.min {
			t.Errorf("truncateMin(%q) = %q, want %q", tc.in, got, tc.min)
		}
		got := truncateMax(tc.in)
		if got != tc.max {
			t.Errorf("truncateMax(%q) = %q, want %q", tc.in, got, tc.max)
		}
		if got < tc.in {
			t.Errorf("truncateMax(%q) = %q is below the value", tc.in, got)
		}
		if !utf8.ValidString(got) {
			t.Errorf("truncateMax(%q) = %q is not UTF-8", tc.in, got)
		}
	}
}

// FuzzTruncateMax checks that the truncated max is always an upper bound
// and the truncated min a lower bound, in byte (code point) order.
func FuzzTruncateMax(f *testing.F) {
	f.Add(strings.Repeat("x", 40))
	f.Add(strings.Repeat("\uffff", 40) + "a")
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) {
			return
		}
		if hi := truncateMax(s); hi < s {
			t.Errorf("truncateMax(%q) = %q < value", s, hi)
		}
		if lo := truncateMin(s); lo > s {
			t.Errorf("truncateMin(%q) = %q > value", s, lo)
		}
	})
}
