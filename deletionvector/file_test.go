package deletionvector_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/RoaringBitmap/roaring/v2/roaring64"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/deletionvector"
	"github.com/lakelog/lakelog/objstore"
)

func rangeOf(from, to uint64) *roaring64.Bitmap {
	bm := roaring64.New()
	for v := from; v < to; v += 2 { // scattered: no runs, so it does not shrink
		bm.Add(v)
	}
	return bm
}

// TestWriterInlineAndFiles: small vectors go inline, the others share one
// .bin file; Load of every descriptor returns its bitmap.
func TestWriterInlineAndFiles(t *testing.T) {
	ctx := context.Background()
	store := objstore.NewMem()
	w := deletionvector.NewWriter(store, "tbl/", deletionvector.WithInlineLimit(100))
	small := roaring64.BitmapOf(1, 5, 9)
	bigs := []*roaring64.Bitmap{rangeOf(0, 400), rangeOf(1000, 2000), rangeOf(1<<33, 1<<33+300)}
	dvSmall, err := w.Add(small)
	if err != nil {
		t.Fatal(err)
	}
	if dvSmall.StorageType != "i" || dvSmall.Offset != nil || dvSmall.Cardinality != 3 {
		t.Fatalf("small vector: %+v, want inline with cardinality 3", dvSmall)
	}
	var dvs []*actions.DeletionVector
	for _, bm := range bigs {
		dv, err := w.Add(bm)
		if err != nil {
			t.Fatal(err)
		}
		if dv.StorageType != "u" || dv.Offset == nil || dv.Cardinality != int64(bm.GetCardinality()) || dv.SizeInBytes <= 100 {
			t.Fatalf("large vector: %+v", dv)
		}
		dvs = append(dvs, dv)
	}
	// Several vectors in one file, at increasing offsets, the first right
	// after the version byte.
	if dvs[0].PathOrInlineDv != dvs[2].PathOrInlineDv || *dvs[0].Offset != 1 || *dvs[1].Offset != 1+4+dvs[0].SizeInBytes+4 {
		t.Fatalf("vectors not packed into one file: %+v %+v", dvs[0], dvs[1])
	}
	if len(w.Keys()) != 0 {
		t.Fatalf("keys before Flush: %v", w.Keys())
	}
	if _, err := deletionvector.Load(ctx, store, "tbl/", dvs[0]); !errors.Is(err, objstore.ErrNotFound) {
		t.Fatalf("Load before Flush: %v, want not found", err)
	}
	if err := w.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	keys := w.Keys()
	if len(keys) != 1 || !strings.HasPrefix(keys[0], "tbl/deletion_vector_") || !strings.HasSuffix(keys[0], ".bin") {
		t.Fatalf("keys %v", keys)
	}
	for i, dv := range append(dvs, dvSmall) {
		want := small
		if i < len(bigs) {
			want = bigs[i]
		}
		got, err := deletionvector.Load(ctx, store, "tbl/", dv)
		if err != nil {
			t.Fatal(err)
		}
		if !got.Equals(want) {
			t.Fatalf("vector %d: loaded %d rows, want %d", i, got.GetCardinality(), want.GetCardinality())
		}
	}
	// A second Flush with nothing pending writes nothing.
	if err := w.Flush(ctx); err != nil || len(w.Keys()) != 1 {
		t.Fatalf("second flush: %v, keys %v", err, w.Keys())
	}
	if _, err := w.Add(roaring64.New()); err == nil {
		t.Fatal("an empty vector was accepted")
	}
}

// TestWriterDefaultThreshold: the default inline limit keeps a vector of
// a few rows inline and puts a vector of thousands of scattered rows in a
// file; WithInlineLimit(0) puts everything in files.
func TestWriterDefaultThreshold(t *testing.T) {
	w := deletionvector.NewWriter(objstore.NewMem(), "")
	if dv, _ := w.Add(roaring64.BitmapOf(3, 4, 5, 100)); dv.StorageType != "i" {
		t.Fatalf("4 rows: storage %q", dv.StorageType)
	}
	if dv, _ := w.Add(rangeOf(0, 10000)); dv.StorageType != "u" {
		t.Fatalf("5000 rows: storage %q", dv.StorageType)
	}
	w = deletionvector.NewWriter(objstore.NewMem(), "", deletionvector.WithInlineLimit(0))
	if dv, _ := w.Add(roaring64.BitmapOf(3)); dv.StorageType != "u" {
		t.Fatalf("WithInlineLimit(0): storage %q", dv.StorageType)
	}
}

// TestWriterConcurrentAndRollover: vectors added from several goroutines,
// spread over several files by a small file size, all load back.
func TestWriterConcurrentAndRollover(t *testing.T) {
	ctx := context.Background()
	store := objstore.NewMem()
	w := deletionvector.NewWriter(store, "", deletionvector.WithInlineLimit(64), deletionvector.WithMaxFileSize(2000))
	type pair struct {
		bm *roaring64.Bitmap
		dv *actions.DeletionVector
	}
	var mu sync.Mutex
	var all []pair
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(g), 2))
			for range 25 {
				bm := roaring64.New()
				for range rng.IntN(300) + 1 {
					bm.Add(rng.Uint64N(1 << 34))
				}
				dv, err := w.Add(bm)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				all = append(all, pair{bm, dv})
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if err := w.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if n := len(w.Keys()); n < 2 {
		t.Fatalf("%d files, want several (the file size is small)", n)
	}
	for i, p := range all {
		got, err := deletionvector.Load(ctx, store, "", p.dv)
		if err != nil {
			t.Fatalf("vector %d: %v", i, err)
		}
		if !got.Equals(p.bm) {
			t.Fatalf("vector %d differs", i)
		}
	}
}

// TestLoadCorrupt: a damaged file or descriptor is a clear error naming
// the file, never rows and never a panic.
func TestLoadCorrupt(t *testing.T) {
	ctx := context.Background()
	store := objstore.NewMem()
	w := deletionvector.NewWriter(store, "", deletionvector.WithInlineLimit(0))
	dv, err := w.Add(rangeOf(0, 200))
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	key := w.Keys()[0]
	good, err := store.Get(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	put := func(b []byte) {
		if err := store.Delete(ctx, key); err != nil {
			t.Fatal(err)
		}
		if err := store.Put(ctx, key, bytes.NewReader(b), objstore.PutOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	damage := map[string]func([]byte) []byte{
		"checksum":  func(b []byte) []byte { b[len(b)-1] ^= 1; return b },
		"data":      func(b []byte) []byte { b[20] ^= 0x40; return b },
		"truncated": func(b []byte) []byte { return b[:len(b)-3] },
		"magic":     func(b []byte) []byte { b[5] ^= 1; fixCRC(b); return b },
		"version":   func(b []byte) []byte { b[0] = 2; return b },
		"size":      func(b []byte) []byte { binary.BigEndian.PutUint32(b[1:], 7); return b },
		"empty":     func(b []byte) []byte { return nil },
	}
	for name, f := range damage {
		put(f(bytes.Clone(good)))
		_, err := deletionvector.Load(ctx, store, "", dv)
		if !errors.Is(err, deletionvector.ErrCorrupt) || !strings.Contains(err.Error(), key) {
			t.Errorf("%s: got %v, want ErrCorrupt naming %s", name, err, key)
		}
	}
	put(good)
	wrong := *dv
	wrong.Cardinality++
	if _, err := deletionvector.Load(ctx, store, "", &wrong); !errors.Is(err, deletionvector.ErrCorrupt) || !strings.Contains(err.Error(), "cardinality") {
		t.Errorf("wrong cardinality: %v", err)
	}
	wrong = *dv
	wrong.SizeInBytes--
	if _, err := deletionvector.Load(ctx, store, "", &wrong); !errors.Is(err, deletionvector.ErrCorrupt) {
		t.Errorf("wrong size: %v", err)
	}
	wrong = *dv
	wrong.PathOrInlineDv = "abc"
	if _, err := deletionvector.Load(ctx, store, "", &wrong); !errors.Is(err, deletionvector.ErrCorrupt) {
		t.Errorf("short uuid: %v", err)
	}
	maxRow := int64(10)
	wrong = *dv
	wrong.MaxRowIndex = &maxRow
	if _, err := deletionvector.Load(ctx, store, "", &wrong); !errors.Is(err, deletionvector.ErrCorrupt) {
		t.Errorf("rows above maxRowIndex: %v", err)
	}
	for _, bad := range []*actions.DeletionVector{
		inline("abc", 4, 1),   // not a multiple of 5
		inline("00000", 4, 0), // wrong magic
		{StorageType: "x", PathOrInlineDv: "00000", SizeInBytes: 4},
		inline("~~~~~", 4, 0), // not Z85
	} {
		if _, err := deletionvector.Load(ctx, store, "", bad); !errors.Is(err, deletionvector.ErrCorrupt) {
			t.Errorf("%+v: %v", bad, err)
		}
	}
}

// fixCRC recomputes the checksum of a file holding one vector.
func fixCRC(b []byte) {
	size := binary.BigEndian.Uint32(b[1:])
	binary.BigEndian.PutUint32(b[5+size:], crcOf(b[5:5+size]))
}

// TestLoadAbsoluteAndPrefix: storage type p resolves a path under the
// store's location and refuses one elsewhere; u honours a random prefix
// directory.
func TestLoadAbsoluteAndPrefix(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	store, err := objstore.NewLocal(dir)
	if err != nil {
		t.Fatal(err)
	}
	w := deletionvector.NewWriter(store, "t/", deletionvector.WithInlineLimit(0))
	want := rangeOf(0, 100)
	dv, err := w.Add(want)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	key := w.Keys()[0]
	abs := *dv
	abs.StorageType = "p"
	abs.PathOrInlineDv = "file://" + store.Location() + "/" + key
	got, err := deletionvector.Load(ctx, store, "t/", &abs)
	if err != nil {
		t.Fatal(err)
	}
	if !got.Equals(want) {
		t.Fatal("absolute path: rows differ")
	}
	abs.PathOrInlineDv = "s3://elsewhere/" + key
	if _, err := deletionvector.Load(ctx, store, "t/", &abs); err == nil || !strings.Contains(err.Error(), "not under") {
		t.Fatalf("path outside the store: %v", err)
	}
	// The same file moved under a prefix directory "ab".
	body, err := store.Get(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	name := key[len("t/"):]
	if err := store.Put(ctx, "t/ab/"+name, bytes.NewReader(body), objstore.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	pre := *dv
	pre.PathOrInlineDv = "ab" + dv.PathOrInlineDv
	if got, err := deletionvector.Load(ctx, store, "t/", &pre); err != nil || !got.Equals(want) {
		t.Fatalf("prefixed: %v", err)
	}
	if k, _ := deletionvector.Key(store, "t/", &pre); k != "t/ab/"+name {
		t.Fatalf("prefixed key %q", k)
	}
	if !slices.Contains([]string{"t/" + name}, key) {
		t.Fatalf("key %q", key)
	}
}

// TestWriterFlushFailures: a failed upload stays pending and its key is
// listed; a retry after a lost response finds its own file and succeeds;
// vectors added after a Flush go to a new file, so an upload already
// tried never changes.
func TestWriterFlushFailures(t *testing.T) {
	ctx := context.Background()
	inner := objstore.NewMem()
	store := objstore.Faulty(inner, objstore.Times(1, objstore.FailMatching(objstore.OpPut, "*.bin", nil)))
	w := deletionvector.NewWriter(store, "", deletionvector.WithInlineLimit(0))
	first := rangeOf(0, 100)
	dv1, err := w.Add(first)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(ctx); !errors.Is(err, objstore.ErrInjected) {
		t.Fatalf("flush: %v, want the injected failure", err)
	}
	if len(w.Keys()) != 1 {
		t.Fatalf("keys after a failed upload: %v", w.Keys())
	}
	// Added after the failed Flush: a second file.
	second := rangeOf(500, 700)
	dv2, err := w.Add(second)
	if err != nil {
		t.Fatal(err)
	}
	if dv2.PathOrInlineDv == dv1.PathOrInlineDv {
		t.Fatal("a vector joined a file Flush had already tried to write")
	}
	store.Add(objstore.Times(1, objstore.LoseResponse(objstore.OpPut, "*.bin")))
	if err := w.Flush(ctx); !errors.Is(err, objstore.ErrLostResponse) {
		t.Fatalf("flush: %v, want the lost response", err)
	}
	if err := w.Flush(ctx); err != nil {
		t.Fatalf("retry after a lost response: %v", err)
	}
	if len(w.Keys()) != 2 {
		t.Fatalf("keys %v, want 2", w.Keys())
	}
	for _, c := range []struct {
		dv   *actions.DeletionVector
		want *roaring64.Bitmap
	}{{dv1, first}, {dv2, second}} {
		got, err := deletionvector.Load(ctx, inner, "", c.dv)
		if err != nil {
			t.Fatal(err)
		}
		if !got.Equals(c.want) {
			t.Fatal("rows differ")
		}
	}
}
