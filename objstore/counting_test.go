package objstore_test

import (
	"errors"
	"slices"
	"sync"
	"testing"

	"github.com/lakelog/lakelog/objstore"
)

func TestCounting(t *testing.T) {
	c := objstore.Counting(objstore.NewMem())
	ctx := t.Context()
	mustPut(t, c, "_delta_log/00.json", "v0")
	mustPut(t, c, "_delta_log/01.json", "v1")
	_, _ = c.Get(ctx, "_delta_log/01.json")
	_, _ = c.Get(ctx, "_delta_log/01.json")
	_, err := c.Get(ctx, "missing")
	if !errors.Is(err, objstore.ErrNotFound) {
		t.Fatal(err)
	}
	_, _ = c.GetRange(ctx, "_delta_log/00.json", 0, 1)
	_, _ = c.Head(ctx, "_delta_log/00.json")
	_ = c.Delete(ctx, "gone")
	listKeys(t, c, "_delta_log/", "")
	// A listing that is made but never iterated does no work and is not counted.
	_ = c.List(ctx, "never", "")

	want := map[objstore.Op][]string{
		objstore.OpPut:      {"_delta_log/00.json", "_delta_log/01.json"},
		objstore.OpGet:      {"_delta_log/01.json", "_delta_log/01.json", "missing"},
		objstore.OpGetRange: {"_delta_log/00.json"},
		objstore.OpHead:     {"_delta_log/00.json"},
		objstore.OpDelete:   {"gone"},
		objstore.OpList:     {"_delta_log/"},
	}
	for op, keys := range want {
		if got := c.Keys(op); !slices.Equal(got, keys) {
			t.Errorf("Keys(%s) = %q, want %q", op, got, keys)
		}
		if got := c.Count(op); got != len(keys) {
			t.Errorf("Count(%s) = %d, want %d", op, got, len(keys))
		}
	}
	// Keys returns a copy.
	c.Keys(objstore.OpGet)[0] = "changed"
	if c.Keys(objstore.OpGet)[0] != "_delta_log/01.json" {
		t.Error("Keys shares its slice with the store")
	}
	c.Reset()
	for op := range want {
		if c.Count(op) != 0 || len(c.Keys(op)) != 0 {
			t.Errorf("after Reset, %s has %d calls", op, c.Count(op))
		}
	}
	_, _ = c.Get(ctx, "_delta_log/00.json")
	if c.Count(objstore.OpGet) != 1 {
		t.Errorf("Count after Reset and one Get = %d", c.Count(objstore.OpGet))
	}
}

// OpenObject through a counting store reads by GetRange, so reads are seen.
func TestCountingSeesOpenObjectReads(t *testing.T) {
	c := objstore.Counting(objstore.NewMem())
	mustPut(t, c, "part-0.parquet", "0123456789")
	c.Reset()
	r, err := objstore.OpenObject(t.Context(), c, "part-0.parquet", -1)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	buf := make([]byte, 4)
	if _, err := r.ReadAt(buf, 3); err != nil || string(buf) != "3456" {
		t.Fatalf("ReadAt = %q, %v", buf, err)
	}
	if c.Count(objstore.OpHead) != 1 || c.Count(objstore.OpGetRange) != 1 {
		t.Errorf("counted %d heads and %d range reads, want 1 and 1", c.Count(objstore.OpHead), c.Count(objstore.OpGetRange))
	}
}

func TestCountingConcurrent(t *testing.T) {
	c := objstore.Counting(objstore.NewMem())
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 100 {
				_, _ = c.Get(t.Context(), "k")
			}
		})
	}
	wg.Wait()
	if c.Count(objstore.OpGet) != 800 {
		t.Errorf("Count = %d, want 800", c.Count(objstore.OpGet))
	}
}

func TestCountingConformance(t *testing.T) {
	objstoretestRun(t, func(t *testing.T) objstore.Store { return objstore.Counting(objstore.NewMem()) })
}
