package checkpoint

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/objstore"
)

// copyLog copies the _delta_log of a golden table into a fresh Mem store
// under the key prefix "_delta_log/", leaving out the files for which skip
// is true.
func copyLog(t *testing.T, table string, skip func(rel string) bool) *objstore.Mem {
	t.Helper()
	root := filepath.Join(goldenDir, table, "delta", "_delta_log")
	if _, err := os.Stat(root); err != nil {
		t.Skipf("no golden table %s", table)
	}
	s := objstore.NewMem()
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if skip != nil && skip(rel) {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return s.Put(context.Background(), "_delta_log/"+rel, bytes.NewReader(b), objstore.PutOptions{})
	})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// readErr runs Read to the end and returns its error (nil if none).
func readErr(s objstore.Store, parts []Part, opts ...ReadOption) (n int, err error) {
	for _, err := range Read(context.Background(), s, parts, opts...) {
		if err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

func keyParts(keys ...string) []Part {
	out := make([]Part, len(keys))
	for i, k := range keys {
		out[i] = Part{Key: k}
	}
	return out
}

func TestReadCorrupt(t *testing.T) {
	ctx := context.Background()
	good := copyLog(t, "checkpoint", nil)
	cp := "_delta_log/00000000000000000010.checkpoint.parquet"
	body := mustGet(t, good, cp)

	put := func(s objstore.Store, key string, b []byte) {
		if err := s.Put(ctx, key, bytes.NewReader(b), objstore.PutOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	cases := map[string][]byte{
		"empty":          {},
		"magic only":     []byte("PAR1PAR1"),
		"first half":     body[:len(body)/2],
		"no last byte":   body[:len(body)-1],
		"no footer":      append(slices.Clone(body[:len(body)-200]), []byte("PAR1")...),
		"garbage footer": append(append([]byte("PAR1"), bytes.Repeat([]byte{0xff}, 300)...), 0x10, 0, 0, 0, 'P', 'A', 'R', '1'),
		"not parquet":    []byte(`{"add":{"path":"x"}}`),
	}
	for name, b := range cases {
		t.Run(name, func(t *testing.T) {
			s := objstore.NewMem()
			put(s, cp, b)
			_, err := readErr(s, keyParts(cp))
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("err %v, want ErrCorrupt", err)
			}
		})
	}

	t.Run("missing file", func(t *testing.T) {
		_, err := readErr(objstore.NewMem(), keyParts(cp))
		if !errors.Is(err, ErrCorrupt) || !errors.Is(err, objstore.ErrNotFound) {
			t.Fatalf("err %v, want ErrCorrupt and ErrNotFound", err)
		}
	})

	// Flipping bytes inside column chunks must give an error or some
	// result, never a panic or a hang.
	t.Run("flipped bytes", func(t *testing.T) {
		corrupted := 0
		for off := 4; off < len(body)-8; off += 97 {
			b := slices.Clone(body)
			b[off] ^= 0x5a
			s := objstore.NewMem()
			put(s, cp, b)
			if _, err := readErr(s, keyParts(cp)); err != nil {
				if !errors.Is(err, ErrCorrupt) {
					t.Fatalf("flip at %d: err %v, want ErrCorrupt", off, err)
				}
				corrupted++
			}
		}
		t.Logf("%d flips detected", corrupted)
	})
}

func TestReadIncompleteCheckpoints(t *testing.T) {
	t.Run("multi-part with a part not given", func(t *testing.T) {
		s := copyLog(t, "multi-part-checkpoint", nil)
		_, err := readErr(s, keyParts("_delta_log/00000000000000000001.checkpoint.0000000001.0000000002.parquet"))
		if !errors.Is(err, ErrCorrupt) {
			t.Fatalf("err %v, want ErrCorrupt", err)
		}
	})
	t.Run("multi-part with a part missing from the store", func(t *testing.T) {
		s := copyLog(t, "multi-part-checkpoint", func(rel string) bool { return strings.Contains(rel, ".0000000002.0000000002.") })
		_, err := readErr(s, keyParts(
			"_delta_log/00000000000000000001.checkpoint.0000000002.0000000002.parquet",
			"_delta_log/00000000000000000001.checkpoint.0000000001.0000000002.parquet",
		))
		if !errors.Is(err, ErrCorrupt) || !errors.Is(err, objstore.ErrNotFound) {
			t.Fatalf("err %v, want ErrCorrupt", err)
		}
	})
	t.Run("multi-part parts in any order", func(t *testing.T) {
		s := copyLog(t, "multi-part-checkpoint", nil)
		a := readAll(t, s, keyParts(
			"_delta_log/00000000000000000001.checkpoint.0000000002.0000000002.parquet",
			"_delta_log/00000000000000000001.checkpoint.0000000001.0000000002.parquet",
		))
		b := readAll(t, s, keyParts(
			"_delta_log/00000000000000000001.checkpoint.0000000001.0000000002.parquet",
			"_delta_log/00000000000000000001.checkpoint.0000000002.0000000002.parquet",
		))
		if len(a) != 12 || !reflect.DeepEqual(a, b) {
			t.Fatalf("parts read in different orders differ (%d, %d actions)", len(a), len(b))
		}
	})
	t.Run("v2 with a sidecar missing", func(t *testing.T) {
		s := copyLog(t, "v2-checkpoint-parquet", func(rel string) bool { return strings.Contains(rel, "33321cc1") })
		_, err := readErr(s, keyParts("_delta_log/00000000000000000002.checkpoint.e8fa2696-9728-4e9c-b285-634743fdd4fb.parquet"))
		if !errors.Is(err, ErrCorrupt) || !errors.Is(err, objstore.ErrNotFound) {
			t.Fatalf("err %v, want ErrCorrupt", err)
		}
		// Without file actions the sidecars are not needed.
		n, err := readErr(s, keyParts("_delta_log/00000000000000000002.checkpoint.e8fa2696-9728-4e9c-b285-634743fdd4fb.parquet"),
			OnlyKinds(KindProtocol, KindMetadata))
		if err != nil || n != 2 {
			t.Fatalf("protocol and metadata: %d actions, err %v", n, err)
		}
	})
	t.Run("v2 json with a bad line", func(t *testing.T) {
		key := "_delta_log/00000000000000000002.checkpoint.6374b053-df23-479b-b2cf-c9c550132b49.json"
		s := copyLog(t, "v2-checkpoint-json", nil)
		b := append(mustGet(t, s, key), []byte("{\"add\":\n")...)
		if err := s.Put(context.Background(), key, bytes.NewReader(b), objstore.PutOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := readErr(s, keyParts(key)); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("err %v, want ErrCorrupt", err)
		}
	})
}

func TestReadRejectsBadParts(t *testing.T) {
	s := objstore.NewMem()
	for name, parts := range map[string][]Part{
		"none":            nil,
		"not a name":      keyParts("_delta_log/00000000000000000001.json"),
		"two classic":     keyParts("a/00000000000000000001.checkpoint.parquet", "b/00000000000000000001.checkpoint.parquet"),
		"mixed versions":  keyParts("00000000000000000001.checkpoint.0000000001.0000000002.parquet", "00000000000000000002.checkpoint.0000000002.0000000002.parquet"),
		"classic and v2":  keyParts("00000000000000000001.checkpoint.parquet", "00000000000000000001.checkpoint.6374b053-df23-479b-b2cf-c9c550132b49.json"),
		"bad uuid":        keyParts("00000000000000000001.checkpoint.6374b053.json"),
		"short version":   keyParts("0001.checkpoint.parquet"),
		"part 3 of 2":     keyParts("00000000000000000001.checkpoint.0000000003.0000000002.parquet"),
		"unknown kind op": keyParts("00000000000000000001.checkpoint.parquet"),
	} {
		var opts []ReadOption
		if name == "unknown kind op" {
			opts = append(opts, OnlyKinds("add", "commitInfo"))
		}
		if _, err := readErr(s, parts, opts...); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// TestReadStoreErrorsAreNotCorruption: a failing store is worth a retry,
// not a fallback to an older checkpoint.
func TestReadStoreErrorsAreNotCorruption(t *testing.T) {
	inner := copyLog(t, "checkpoint", nil)
	cp := "_delta_log/00000000000000000010.checkpoint.parquet"
	for _, op := range []objstore.Op{objstore.OpHead, objstore.OpGet} {
		s := objstore.Faulty(inner, objstore.FailNth(op, 1, nil))
		_, err := readErr(s, keyParts(cp))
		if !errors.Is(err, objstore.ErrInjected) || errors.Is(err, ErrCorrupt) {
			t.Errorf("%s fails: err %v, want the store's error and not ErrCorrupt", op, err)
		}
	}
	// A large file from a store without random access is read by ranges.
	big := objstore.NewMem()
	if _, err := Write(context.Background(), big, "_delta_log", 3, synthState(20000), WithRowGroupSize(2000)); err != nil {
		t.Fatal(err)
	}
	// The second ranged read is the first piece of row groups after the
	// tail.
	s := objstore.Faulty(big, objstore.FailNth(objstore.OpGetRange, 2, nil))
	_, err := readErr(s, []Part{{Key: "_delta_log/" + ClassicName(3)}}, withWholeFileLimit(1000))
	if !errors.Is(err, objstore.ErrInjected) || errors.Is(err, ErrCorrupt) {
		t.Errorf("GetRange fails: err %v, want the store's error and not ErrCorrupt", err)
	}
}

// TestReadRemoteStore reads through a store without random access: a small
// file with one Get, a large one with one GetRange per row group after the
// footer.
func TestReadRemoteStore(t *testing.T) {
	ctx := context.Background()
	small := copyLog(t, "basic-with-checkpoint", nil)
	cs := objstore.Counting(small)
	want := readAll(t, small, keyParts("_delta_log/00000000000000000010.checkpoint.parquet"))
	got := readAll(t, cs, keyParts("_delta_log/00000000000000000010.checkpoint.parquet"))
	if !reflect.DeepEqual(got, want) {
		t.Fatal("remote read differs")
	}
	if cs.Count(objstore.OpGet) != 1 || cs.Count(objstore.OpGetRange) != 0 {
		t.Errorf("small file: %d gets and %d range gets, want one get", cs.Count(objstore.OpGet), cs.Count(objstore.OpGetRange))
	}

	big := objstore.NewMem()
	if _, err := Write(ctx, big, "_delta_log", 3, synthState(20000), WithRowGroupSize(4000)); err != nil {
		t.Fatal(err)
	}
	key := "_delta_log/" + ClassicName(3)
	info, _ := big.Head(ctx, key)
	cb := objstore.Counting(big)
	n, err := readErr(cb, []Part{{Key: key, Size: info.Size}}, WithConcurrency(2), withWholeFileLimit(info.Size/4))
	if err != nil || n != 20002 {
		t.Fatalf("read %d actions, err %v", n, err)
	}
	rowGroups := 6 // 20002 rows in groups of 4000
	if r := cb.Count(objstore.OpGetRange); r > rowGroups+3 {
		t.Errorf("%d range gets for %d row groups", r, rowGroups)
	}
}

func TestReadOptions(t *testing.T) {
	s := goldenStore(t)
	parts := keyParts("basic-with-checkpoint/delta/_delta_log/00000000000000000010.checkpoint.parquet")
	all := readAll(t, s, parts)

	noStats := readAll(t, s, parts, WithoutStats())
	if len(noStats) != len(all) {
		t.Fatalf("WithoutStats: %d actions, want %d", len(noStats), len(all))
	}
	for i, a := range noStats {
		if a.Add != nil {
			if a.Add.Stats != "" {
				t.Fatalf("WithoutStats: add has stats")
			}
			w := *all[i].Add
			w.Stats = ""
			if !reflect.DeepEqual(*a.Add, w) {
				t.Fatalf("WithoutStats changed more than stats")
			}
		}
	}

	pm := readAll(t, s, parts, OnlyKinds(KindProtocol, KindMetadata))
	if len(pm) != 2 || pm[0].Kind() == pm[1].Kind() {
		t.Fatalf("OnlyKinds(protocol, metaData): %d actions", len(pm))
	}

	// Followed sidecars are not read for non-file kinds.
	v2 := copyLog(t, "v2-checkpoints-parquet-with-sidecars", nil)
	cs := objstore.Counting(v2)
	v2parts := keyParts("_delta_log/00000000000000000006.checkpoint.f15b9025-707a-4c73-aac0-31dfcbd29aa6.parquet")
	if got := readAll(t, cs, v2parts, OnlyKinds(KindCheckpointMetadata, KindSidecar)); len(got) != 3 {
		t.Fatalf("checkpointMetadata and sidecars: %d actions", len(got))
	}
	for _, op := range []objstore.Op{objstore.OpGet, objstore.OpHead, objstore.OpGetRange} {
		for _, k := range cs.Keys(op) {
			if strings.Contains(k, "_sidecars") {
				t.Errorf("%s of sidecar %s", op, k)
			}
		}
	}
	adds := readAll(t, v2, v2parts, OnlyKinds(KindAdd))
	if len(adds) != 101 {
		t.Errorf("adds from sidecars: %d, want 101", len(adds))
	}
}

// TestReadOrderAndEarlyStop: the order of actions does not depend on the
// concurrency, and stopping early releases every buffer.
func TestReadOrderAndEarlyStop(t *testing.T) {
	ctx := context.Background()
	s := objstore.NewMem()
	if _, err := Write(ctx, s, "", 9, synthState(10000), WithRowGroupSize(500)); err != nil {
		t.Fatal(err)
	}
	parts := keyParts(ClassicName(9))
	one := readAll(t, s, parts, WithConcurrency(1))
	four := readAll(t, s, parts, WithConcurrency(4), WithBatchRows(333))
	if !reflect.DeepEqual(one, four) {
		t.Fatal("order depends on concurrency")
	}
	for _, stopAt := range []int{0, 1, 1500, 9000} {
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		i := 0
		for _, err := range Read(ctx, s, parts, WithAllocator(mem), WithConcurrency(4), WithBatchRows(100)) {
			if err != nil {
				t.Fatal(err)
			}
			if i == stopAt {
				break
			}
			i++
		}
		mem.AssertSize(t, 0)
	}
}

func TestReadCancelled(t *testing.T) {
	s := objstore.NewMem()
	if _, err := Write(context.Background(), s, "", 9, synthState(30000), WithRowGroupSize(1000)); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var err error
	n := 0
	for _, e := range Read(ctx, s, keyParts(ClassicName(9)), WithBatchRows(100)) {
		if e != nil {
			err = e
			break
		}
		n++
		if n == 5000 {
			cancel()
		}
	}
	if !errors.Is(err, context.Canceled) || errors.Is(err, ErrCorrupt) {
		t.Fatalf("after %d actions: err %v, want context.Canceled", n, err)
	}
}

// TestReadV2Forms reads the same V2 content written as JSON and as Parquet
// top-level files and checks both yield the checkpoint metadata, the
// sidecars and then the sidecars' files.
func TestReadV2Forms(t *testing.T) {
	s := goldenStore(t)
	for _, key := range []string{
		"v2-checkpoint-json/delta/_delta_log/00000000000000000002.checkpoint.6374b053-df23-479b-b2cf-c9c550132b49.json",
		"v2-checkpoint-parquet/delta/_delta_log/00000000000000000002.checkpoint.e8fa2696-9728-4e9c-b285-634743fdd4fb.parquet",
		"v2-classic-checkpoint-parquet/delta/_delta_log/00000000000000000001.checkpoint.parquet",
	} {
		got := readAll(t, s, keyParts(key))
		var kinds []string
		for _, a := range got {
			if k := a.Kind(); len(kinds) == 0 || kinds[len(kinds)-1] != k {
				kinds = append(kinds, k)
			}
		}
		// Sidecar files' actions come last.
		if kinds[len(kinds)-1] != KindAdd || !slices.Contains(kinds, KindCheckpointMetadata) || !slices.Contains(kinds, KindSidecar) {
			t.Errorf("%s: kinds in order %v", key, kinds)
		}
		var cm *actions.CheckpointMetadata
		for _, a := range got {
			if a.CheckpointMetadata != nil {
				cm = a.CheckpointMetadata
			}
		}
		if cm == nil || cm.Version < 1 {
			t.Errorf("%s: checkpointMetadata %+v", key, cm)
		}
	}
}

func TestSidecarKey(t *testing.T) {
	for _, c := range []struct{ cp, path, want string }{
		{"t/_delta_log/00000000000000000002.checkpoint.parquet", "a.parquet", "t/_delta_log/_sidecars/a.parquet"},
		{"00000000000000000002.checkpoint.parquet", "a%20b.parquet", "_sidecars/a b.parquet"},
		{"t/_delta_log/x", "s3://bucket/t/_delta_log/_sidecars/a.parquet", "t/_delta_log/_sidecars/a.parquet"},
	} {
		got, err := sidecarKey(c.cp, c.path)
		if err != nil || got != c.want {
			t.Errorf("sidecarKey(%q, %q) = %q, %v; want %q", c.cp, c.path, got, err, c.want)
		}
	}
	for _, bad := range []string{"", "../x.parquet", "a/../../x", "s3://bucket/t/other/a.parquet", "%zz"} {
		if got, err := sidecarKey("_delta_log/c", bad); err == nil {
			t.Errorf("sidecarKey(%q) = %q, want an error", bad, got)
		}
	}
}

// withWholeFileLimit lowers the size up to which files from stores without
// random access are fetched whole, so that small test files take the
// ranged path.
func withWholeFileLimit(n int64) ReadOption {
	return readOptionFunc(func(c *readConfig) { c.wholeFileLimit = n })
}

// withFetchPieceSize sets the largest ranged read of the fetcher, so
// that small test files are fetched in many pieces.
func withFetchPieceSize(n int64) ReadOption {
	return readOptionFunc(func(c *readConfig) { c.fetchPieceSize = n })
}

// FuzzRead feeds arbitrary bytes as a checkpoint file: Read must yield
// actions or an ErrCorrupt error, and never panic.
func FuzzRead(f *testing.F) {
	s := objstore.NewMem()
	if _, err := Write(context.Background(), s, "", 1, seq(sampleState()), WithRowGroupSize(3)); err != nil {
		f.Fatal(err)
	}
	b, _ := s.Get(context.Background(), ClassicName(1))
	f.Add(b)
	if g, err := os.ReadFile(filepath.Join(goldenDir, "app-txn-checkpoint/delta/_delta_log/00000000000000000001.checkpoint.parquet")); err == nil {
		f.Add(g)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		s := objstore.NewMem()
		key := ClassicName(1)
		if err := s.Put(context.Background(), key, bytes.NewReader(b), objstore.PutOptions{}); err != nil {
			t.Fatal(err)
		}
		for _, err := range Read(context.Background(), s, keyParts(key), WithConcurrency(2)) {
			if err != nil && !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error %v does not wrap ErrCorrupt", err)
			}
		}
	})
}
