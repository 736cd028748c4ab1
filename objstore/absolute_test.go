package objstore_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/lakelog/lakelog/objstore"
)

// A resolving store reads relative keys from its base and absolute ones
// (a local path, a file:// URI, a mem:// URI) from the stores they
// name; it writes and deletes only through its base.
func TestResolving(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "x.parquet"), []byte("outside"), 0o644); err != nil {
		t.Fatal(err)
	}
	base := objstore.NewMem()
	if err := base.Put(ctx, "own.parquet", bytes.NewReader([]byte("own")), objstore.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	r := objstore.Resolving(base)
	if !objstore.ResolvesAbsolute(r) || objstore.ResolvesAbsolute(base) {
		t.Error("ResolvesAbsolute")
	}
	for key, want := range map[string]string{
		"own.parquet":                               "own",
		filepath.Join(dir, "x.parquet"):             "outside",
		"file://" + filepath.Join(dir, "x.parquet"): "outside",
	} {
		got, err := r.Get(ctx, key)
		if err != nil || string(got) != want {
			t.Errorf("Get(%s) = %q, %v; want %q", key, got, err, want)
		}
		got, err = r.GetRange(ctx, key, 1, 2)
		if err != nil || string(got) != want[1:3] {
			t.Errorf("GetRange(%s) = %q, %v", key, got, err)
		}
		obj, err := objstore.OpenObject(ctx, r, key, -1)
		if err != nil {
			t.Fatalf("OpenObject(%s): %v", key, err)
		}
		p := make([]byte, 2)
		if n, err := obj.ReadAt(p, 1); n != 2 || err != nil || string(p) != want[1:3] {
			t.Errorf("ReadAt(%s) = %q, %v", key, p[:n], err)
		}
		obj.Close()
	}
	if _, err := r.Get(ctx, filepath.Join(dir, "nosuch")); !errors.Is(err, objstore.ErrNotFound) {
		t.Errorf("a missing absolute key: %v", err)
	}
	abs := filepath.Join(dir, "x.parquet")
	if err := r.Put(ctx, abs, bytes.NewReader(nil), objstore.PutOptions{}); err == nil {
		t.Error("Put through an absolute key")
	}
	if err := r.Delete(ctx, abs); err == nil {
		t.Error("Delete through an absolute key")
	}
	if _, err := os.Stat(abs); err != nil {
		t.Errorf("the outside file: %v", err)
	}
	if _, err := r.Get(ctx, "s3://"); err == nil {
		t.Error("a URI naming no object")
	}
}
