package checkpoint

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/objstore"
)

// TestChecksumProtocolExample is the example of PROTOCOL.md "JSON checksum".
func TestChecksumProtocolExample(t *testing.T) {
	in := `{"k0":"'v 0'", "checksum": "adsaskfljadfkjadfkj", "k1":{"k2": 2, "k3": ["v3", [1, 2], {"k4": "v4", "k5": ["v5", "v6", "v7"]}]}}`
	sum, stored, err := checksumOf([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if sum != "6a92d155a59bf2eecbd4b4ec7fd1f875" {
		t.Errorf("checksum %s", sum)
	}
	if stored == nil || *stored != "adsaskfljadfkjadfkj" {
		t.Errorf("stored checksum %v", stored)
	}
}

func TestChecksumRejectsDuplicates(t *testing.T) {
	for _, in := range []string{`{"version":1,"version":2}`, `{"a":{"b":1,"b":1}}`, `[1]`, `{"a":1} x`, `{"a":`} {
		if _, _, err := checksumOf([]byte(in)); err == nil {
			t.Errorf("%s: no error", in)
		}
	}
}

// TestReadLastGolden reads every _last_checkpoint of the corpus; those
// with a checksum (Spark's) must verify.
func TestReadLastGolden(t *testing.T) {
	s := goldenStore(t)
	files, _ := filepath.Glob(filepath.Join(goldenDir, "*", "delta", "_delta_log", LastCheckpointName))
	withSum := 0
	for _, f := range files {
		rel, _ := filepath.Rel(goldenDir, filepath.Dir(f))
		logDir := filepath.ToSlash(rel)
		raw, _ := os.ReadFile(f)
		lc, err := ReadLast(context.Background(), s, logDir)
		if strings.HasPrefix(logDir, "corrupted-last-checkpoint-kernel/") {
			if !errors.Is(err, ErrCorrupt) {
				t.Errorf("%s: err %v, want ErrCorrupt for the empty hint", logDir, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", logDir, err)
			continue
		}
		if lc.Version < 0 || lc.Size <= 0 {
			t.Errorf("%s: %+v", logDir, lc)
		}
		if lc.Checksum != "" {
			withSum++
		}
		if bytes.Contains(raw, []byte("size_in_bytes")) && lc.SizeInBytes == nil {
			t.Errorf("%s: delta-rs size_in_bytes not read", logDir)
		}
		if bytes.Contains(raw, []byte(`"v2Checkpoint"`)) && (lc.V2Checkpoint == nil || len(lc.V2Checkpoint.NonFileActions) == 0 || len(lc.V2Checkpoint.SidecarFiles) == 0) {
			t.Errorf("%s: v2Checkpoint not read: %+v", logDir, lc.V2Checkpoint)
		}
	}
	if withSum < 5 {
		t.Errorf("only %d hints with a checksum verified", withSum)
	}
}

func TestLastRoundTrip(t *testing.T) {
	ctx := context.Background()
	s := objstore.NewMem()
	if lc, err := ReadLast(ctx, s, "t/_delta_log"); lc != nil || err != nil {
		t.Fatalf("missing hint: %v, %v; want nil, nil", lc, err)
	}
	lc, err := Write(ctx, s, "t/_delta_log", 4, seq(sampleState()))
	if err != nil {
		t.Fatal(err)
	}
	lc.Tags = map[string]string{"k": "v w"}
	if err := WriteLast(ctx, s, "t/_delta_log", lc); err != nil {
		t.Fatal(err)
	}
	raw := mustGet(t, s, "t/_delta_log/_last_checkpoint")
	if !bytes.HasPrefix(raw, []byte(`{"version":4,"size":9,"sizeInBytes":`)) {
		t.Errorf("hint starts %s", raw[:min(len(raw), 60)])
	}
	got, err := ReadLast(ctx, s, "t/_delta_log/")
	if err != nil {
		t.Fatal(err)
	}
	if got.Checksum == "" || got.Version != 4 || *got.SizeInBytes != *lc.SizeInBytes || *got.NumOfAddFiles != 2 || got.Tags["k"] != "v w" {
		t.Errorf("read back %+v", got)
	}
	// The schema in the hint is the file's schema, as Spark records it.
	var sc struct {
		Type   string `json:"type"`
		Fields []struct {
			Name string `json:"name"`
		} `json:"fields"`
	}
	if err := json.Unmarshal(got.CheckpointSchema, &sc); err != nil || sc.Type != "struct" || len(sc.Fields) != 6 || sc.Fields[1].Name != "add" {
		t.Errorf("checkpointSchema %s (%v)", got.CheckpointSchema, err)
	}
	if _, err := actions.ParseSchema(string(got.CheckpointSchema)); err != nil {
		t.Errorf("checkpointSchema is not a Delta schema: %v", err)
	}

	// Any change to the content breaks the checksum.
	tampered := bytes.Replace(raw, []byte(`"version":4`), []byte(`"version":3`), 1)
	if _, err := ParseLast(tampered); !errors.Is(err, ErrCorrupt) {
		t.Errorf("tampered hint: err %v, want ErrCorrupt", err)
	}
	for _, bad := range []string{"", "  ", "{", `{"size":3}`, `{"version":-1,"size":1}`, `{"version":"1"}`, `{"version":1,"version":1}`} {
		if _, err := ParseLast([]byte(bad)); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%q: err %v, want ErrCorrupt", bad, err)
		}
	}
	// A hint without a checksum (old writers) is accepted.
	if lc, err := ParseLast([]byte(`{"version":10,"size":13}`)); err != nil || lc.Version != 10 || lc.Size != 13 {
		t.Errorf("hint without checksum: %+v, %v", lc, err)
	}
}

func TestReadLastStoreError(t *testing.T) {
	s := objstore.Faulty(objstore.NewMem(), objstore.FailNth(objstore.OpGet, 1, nil))
	_, err := ReadLast(context.Background(), s, "_delta_log")
	if !errors.Is(err, objstore.ErrInjected) || errors.Is(err, ErrCorrupt) {
		t.Errorf("err %v, want the store's error", err)
	}
}

func FuzzParseLast(f *testing.F) {
	f.Add([]byte(`{"version":10,"size":13,"checksum":"x"}`))
	f.Add([]byte(`{"k0":"'v 0'", "checksum": "a", "k1":{"k2": 2, "k3": ["v3", [1, 2]]}}`))
	f.Add([]byte(`{"version":1,"size":1,"v2Checkpoint":{"path":"p","nonFileActions":[{"protocol":{}}]}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		lc, err := ParseLast(b)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error %v does not wrap ErrCorrupt", err)
			}
			return
		}
		out, err := MarshalLast(*lc)
		if err != nil {
			return
		}
		if _, err := ParseLast(out); err != nil {
			t.Fatalf("re-encoded hint does not parse: %v\n%s", err, out)
		}
	})
}

// TestCheckpointSchemaMatchesSpark compares the checkpointSchema we record
// with the one Spark recorded for its checkpoint: every field of Spark's
// is in ours with the same type.
func TestCheckpointSchemaMatchesSpark(t *testing.T) {
	gs := goldenStore(t)
	spark, err := ReadLast(context.Background(), gs, "basic-with-inserts-deletes-checkpoint/delta/_delta_log")
	if err != nil || spark == nil || spark.CheckpointSchema == nil {
		t.Fatalf("Spark hint: %+v, %v", spark, err)
	}
	ours, err := Write(context.Background(), objstore.NewMem(), "", 1, seq(sampleState()))
	if err != nil {
		t.Fatal(err)
	}
	ss, err := actions.ParseSchema(string(spark.CheckpointSchema))
	if err != nil {
		t.Fatal(err)
	}
	our, err := actions.ParseSchema(string(ours.CheckpointSchema))
	if err != nil {
		t.Fatal(err)
	}
	var walk func(path string, s, o *actions.StructType)
	walk = func(path string, s, o *actions.StructType) {
		for _, f := range s.Fields {
			g := o.Field(f.Name)
			if g == nil {
				t.Errorf("field %s%s missing from ours", path, f.Name)
				continue
			}
			if sst, ok := f.Type.(*actions.StructType); ok {
				if gst, ok := g.Type.(*actions.StructType); ok {
					walk(path+f.Name+".", sst, gst)
					continue
				}
			}
			if f.Type.String() != g.Type.String() || f.Nullable != g.Nullable {
				t.Errorf("field %s%s: ours %s (nullable %v), Spark's %s (nullable %v)", path, f.Name, g.Type, g.Nullable, f.Type, f.Nullable)
			}
		}
	}
	walk("", ss, our)
}
