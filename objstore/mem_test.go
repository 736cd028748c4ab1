package objstore_test

import (
	"errors"
	"testing"
	"time"

	"github.com/lakelog/lakelog/objstore"
)

func TestMemRejectsInvalidKeys(t *testing.T) {
	m := objstore.NewMem()
	for _, key := range []string{"", "/abs", "../x", "a//b", "a/", "a/./b", "a\x00"} {
		if err := put(t, m, key, "x", objstore.PutOptions{}); !errors.Is(err, objstore.ErrInvalidKey) {
			t.Errorf("Put(%q) = %v, want ErrInvalidKey", key, err)
		}
		if _, err := m.Head(t.Context(), key); !errors.Is(err, objstore.ErrInvalidKey) {
			t.Errorf("Head(%q) = %v, want ErrInvalidKey", key, err)
		}
	}
	if got := listKeys(t, m, "", ""); len(got) != 0 {
		t.Errorf("List = %q, want nothing", got)
	}
}

func TestMemModTimeIsPutTime(t *testing.T) {
	m := objstore.NewMem()
	before := time.Now()
	mustPut(t, m, "a", "1")
	after := time.Now()
	info, err := m.Head(t.Context(), "a")
	if err != nil {
		t.Fatal(err)
	}
	if info.ModTime.Before(before.Round(0)) || info.ModTime.After(after) {
		t.Errorf("ModTime %v not within the Put (%v .. %v)", info.ModTime, before, after)
	}
}

func TestMemInstancesAreSeparate(t *testing.T) {
	a, b := objstore.NewMem(), objstore.NewMem()
	mustPut(t, a, "k", "v")
	if _, err := b.Get(t.Context(), "k"); !errors.Is(err, objstore.ErrNotFound) {
		t.Errorf("a key put in one Mem is visible in another: %v", err)
	}
}
