package deltalog

import (
	"maps"
	"testing"
)

// TestSharedPartitionValues: equal maps become one, whatever the order
// they were built in; a null value, an empty string and a missing key stay
// apart; past maxSharedPartitions distinct maps, maps are kept as given.
func TestSharedPartitionValues(t *testing.T) {
	str := func(s string) *string { return &s }
	st := newState()
	a := st.sharedPartitionValues(map[string]*string{"x": str("1"), "y": str("b")})
	b := st.sharedPartitionValues(map[string]*string{"y": str("b"), "x": str("1")})
	if !samePV(a, b) {
		t.Error("equal maps were not shared")
	}
	distinct := []map[string]*string{
		{"x": str("1"), "y": str("c")},
		{"x": str("1"), "y": nil},
		{"x": str("1"), "y": str("")},
		{"x": str("1")},
		{"x1": str(""), "y": str("b")}, // the encoding must not run keys into values
		{},
	}
	for i, m := range distinct {
		got := st.sharedPartitionValues(maps.Clone(m))
		if samePV(got, a) {
			t.Errorf("map %d %v shared with %v", i, m, a)
		}
		if !equalPV(got, m) {
			t.Errorf("map %d: got %v, want %v", i, got, m)
		}
	}
	for i := len(st.pv); i < maxSharedPartitions+10; i++ {
		st.sharedPartitionValues(map[string]*string{"n": str(string(rune('a'+i%26)) + string(rune(i)))})
	}
	if len(st.pv) != maxSharedPartitions {
		t.Errorf("%d maps shared, want at most %d", len(st.pv), maxSharedPartitions)
	}
}

// samePV reports whether a and b are the same map.
func samePV(a, b map[string]*string) bool {
	if len(a) != len(b) {
		return false
	}
	k := "\x00probe"
	a[k] = nil
	_, same := b[k]
	delete(a, k)
	return same
}

func equalPV(a, b map[string]*string) bool {
	return maps.EqualFunc(a, b, func(x, y *string) bool { return (x == nil) == (y == nil) && (x == nil || *x == *y) })
}
