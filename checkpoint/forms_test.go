package checkpoint

import (
	"context"
	"errors"
	"iter"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/objstore"
)

func listKeys(t *testing.T, s objstore.Store) []string {
	t.Helper()
	var out []string
	for info, err := range s.List(context.Background(), "", "") {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, info.Key)
	}
	return out
}

// sortedDump renders actions one per line, sorted, to compare contents
// whose order differs.
func sortedDump(as []actions.Action) string {
	lines := strings.Split(strings.TrimSpace(dump(as)), "\n")
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}

func collect(t *testing.T, acts iter.Seq2[actions.Action, error]) []actions.Action {
	t.Helper()
	var out []actions.Action
	for a, err := range acts {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, a)
	}
	return out
}

func TestWriteMultiPart(t *testing.T) {
	ctx := context.Background()
	store := objstore.NewMem()
	want := append(sampleState(), collect(t, synthState(3000))[2:]...)
	lc, err := Write(ctx, store, "_delta_log", 8, seq(want), WithParts(3), WithRowGroupSize(500))
	if err != nil {
		t.Fatal(err)
	}
	keys := listKeys(t, store)
	wantKeys := []string{
		"_delta_log/" + MultiPartName(8, 1, 3),
		"_delta_log/" + MultiPartName(8, 2, 3),
		"_delta_log/" + MultiPartName(8, 3, 3),
	}
	if !slices.Equal(keys, wantKeys) {
		t.Fatalf("files %q", keys)
	}
	if lc.Parts == nil || *lc.Parts != 3 || lc.Size != int64(len(want)) || *lc.NumOfAddFiles != 3002 {
		t.Errorf("LastCheckpoint %+v", lc)
	}
	got := readAll(t, store, keyParts(wantKeys...))
	if sortedDump(got) != sortedDump(want) {
		t.Error("multi-part content differs from the input")
	}
	// Each part holds the actions Spark's partitioning gives it.
	for i, k := range wantKeys {
		cfg, _ := newReadConfig(nil)
		r := &reader{store: store, cfg: cfg, randomAccess: true}
		n := 0
		err := r.run(ctx, []source{{key: k}}, everyKind, func(_ source, a actions.Action) error {
			n++
			if p := sparkPartition(actionPath(&a), 3); p != i {
				t.Errorf("%s in part %d, want %d", describe(&a), i+1, p+1)
			}
			return nil
		})
		if err != nil || n == 0 {
			t.Fatalf("part %d: %d actions, %v", i+1, n, err)
		}
	}

	// A failure leaves no part behind.
	bad := objstore.NewMem()
	boom := errors.New("boom")
	failing := func(yield func(actions.Action, error) bool) {
		for i, a := range want {
			if i == 2000 {
				yield(actions.Action{}, boom)
				return
			}
			if !yield(a, nil) {
				return
			}
		}
	}
	if _, err := Write(ctx, bad, "_delta_log", 8, failing, WithParts(3), WithRowGroupSize(100)); !errors.Is(err, boom) {
		t.Fatalf("err %v", err)
	}
	assertEmpty(t, bad)
	if _, err := Write(ctx, bad, "_delta_log", 8, seq(want), WithParts(3), WithV2(0)); err == nil {
		t.Error("parts with V2 accepted")
	}
}

func TestWriteV2(t *testing.T) {
	ctx := context.Background()
	want := append(sampleState(), collect(t, synthState(1000))[2:]...)
	for _, sidecarActions := range []int{0, 300} {
		store := objstore.NewMem()
		lc, err := Write(ctx, store, "t/_delta_log", 6, seq(want), WithV2(sidecarActions), WithRowGroupSize(128))
		if err != nil {
			t.Fatal(err)
		}
		if lc.V2Checkpoint == nil {
			t.Fatalf("no v2Checkpoint in %+v", lc)
		}
		fn, ok := parseName(lc.V2Checkpoint.Path)
		if !ok || fn.kind != kindUUID || fn.version != 6 {
			t.Fatalf("V2 path %q", lc.V2Checkpoint.Path)
		}
		keys := listKeys(t, store)
		sidecars := 0
		for _, k := range keys {
			if strings.HasPrefix(k, "t/_delta_log/_sidecars/") {
				sidecars++
			}
		}
		wantSidecars := 0
		if sidecarActions > 0 {
			wantSidecars = 4 // 1004 file actions in sidecars of 300
		}
		if sidecars != wantSidecars || len(lc.V2Checkpoint.SidecarFiles) != wantSidecars {
			t.Errorf("%d sidecar files, %d in the hint, want %d: %q", sidecars, len(lc.V2Checkpoint.SidecarFiles), wantSidecars, keys)
		}
		got := readAll(t, store, keyParts("t/_delta_log/"+lc.V2Checkpoint.Path))
		var plain, meta []actions.Action
		for _, a := range got {
			if a.CheckpointMetadata != nil || a.Sidecar != nil {
				meta = append(meta, a)
				continue
			}
			plain = append(plain, a)
		}
		if sortedDump(plain) != sortedDump(want) {
			t.Errorf("sidecars %d: V2 content differs from the input", sidecarActions)
		}
		if len(meta) != 1+wantSidecars || meta[0].CheckpointMetadata == nil || meta[0].CheckpointMetadata.Version != 6 {
			t.Errorf("V2 actions %s", dump(meta))
		}
		if k := kindsOf(lc.V2Checkpoint.NonFileActions); !slices.Equal(k, []string{"protocol", "metaData", "txn", "txn", "domainMetadata", "checkpointMetadata"}) {
			t.Errorf("non-file actions in the hint: %v", k)
		}
		if lc.Size != int64(len(got)) {
			t.Errorf("size %d, read %d actions", lc.Size, len(got))
		}
		// The hint round-trips with its embedded V2 description.
		if err := WriteLast(ctx, store, "t/_delta_log", lc); err != nil {
			t.Fatal(err)
		}
		back, err := ReadLast(ctx, store, "t/_delta_log")
		if err != nil {
			t.Fatal(err)
		}
		if back.V2Checkpoint == nil || back.V2Checkpoint.Path != lc.V2Checkpoint.Path ||
			!reflect.DeepEqual(back.V2Checkpoint.SidecarFiles, lc.V2Checkpoint.SidecarFiles) ||
			dump(back.V2Checkpoint.NonFileActions) != dump(lc.V2Checkpoint.NonFileActions) {
			t.Errorf("hint V2 %+v, want %+v", back.V2Checkpoint, lc.V2Checkpoint)
		}
	}

	// A failure after some sidecars were written leaves nothing.
	store := objstore.NewMem()
	boom := errors.New("boom")
	failing := func(yield func(actions.Action, error) bool) {
		for i, a := range want {
			if i == 900 {
				yield(actions.Action{}, boom)
				return
			}
			if !yield(a, nil) {
				return
			}
		}
	}
	if _, err := Write(ctx, store, "t/_delta_log", 6, failing, WithV2(300)); !errors.Is(err, boom) {
		t.Fatalf("err %v", err)
	}
	assertEmpty(t, store)
}

func kindsOf(as []actions.Action) []string {
	out := make([]string, len(as))
	for i, a := range as {
		out[i] = a.Kind()
	}
	return out
}
