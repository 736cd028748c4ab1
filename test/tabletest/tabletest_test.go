package tabletest

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/lakelog/lakelog/objstore"
)

// TestRoundTrip: a table created, appended to twice and read back.
func TestRoundTrip(t *testing.T) {
	store := objstore.NewMem()
	snap := Create(t, store, "id long, p string", map[string]string{"delta.appendOnly": "true"}, "p")
	snap = Append(t, snap, `[{"id": 2, "p": "b"}, {"id": 1, "p": "a"}]`)
	AppendTo(t, store, `[{"id": 3, "p": null}]`)
	snap = Open(t, store)
	if snap.Version() != 2 || !snap.Properties().AppendOnly {
		t.Fatalf("version %d, properties %+v", snap.Version(), snap.Properties())
	}
	DiffLines(t, "rows", ScanLines(t, snap), Sorted(`{"id":1,"p":"a"}`, `{"id":2,"p":"b"}`, `{"id":3,"p":null}`))
}

// recorder is a testing.TB that records errors instead of failing.
type recorder struct {
	testing.TB
	errs []string
}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, a ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, a...))
}

// TestDiffLines: the difference names the extra and the missing lines,
// counts repeated ones, and reports an order that differs.
func TestDiffLines(t *testing.T) {
	for _, c := range []struct {
		got, want []string
		says      []string
	}{
		{[]string{"a", "b"}, []string{"a", "b"}, nil},
		{[]string{"a", "b", "b"}, []string{"a", "c"}, []string{"got 3 rows, want 2", "unexpected: b\n             b", "missing: c"}},
		{[]string{"b", "a"}, []string{"a", "b"}, []string{"another order"}},
	} {
		r := &recorder{TB: t}
		DiffLines(r, "what", c.got, c.want)
		if (len(r.errs) == 0) != (c.says == nil) {
			t.Fatalf("%v vs %v: errors %q", c.got, c.want, r.errs)
		}
		for _, s := range c.says {
			if !slices.ContainsFunc(r.errs, func(e string) bool { return strings.Contains(e, s) && strings.HasPrefix(e, "what: ") }) {
				t.Errorf("%v vs %v: %q does not say %q", c.got, c.want, r.errs, s)
			}
		}
	}
}
