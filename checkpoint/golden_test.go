package checkpoint

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/objstore"
)

// goldenDir is the shared corpus of Delta tables written by other engines.
const goldenDir = "../../shared/testdata/delta"

// goldenStore opens the corpus as a read-only local store, or skips.
func goldenStore(t testing.TB) objstore.Store {
	t.Helper()
	if _, err := os.Stat(goldenDir); err != nil {
		t.Skipf("no golden tables under %s", goldenDir)
	}
	s, err := objstore.NewLocal(goldenDir)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// goldenCheckpoint is every checkpoint of one version in a golden table.
type goldenCheckpoint struct {
	table   string // case name
	logDir  string // store key of _delta_log
	version int64
	parts   []Part
}

func (g goldenCheckpoint) name() string {
	return g.table + "@" + baseName(g.parts[0].Key)
}

// goldenCheckpoints lists the checkpoints of the corpus, one entry per
// version and naming scheme.
func goldenCheckpoints(t testing.TB) []goldenCheckpoint {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(goldenDir, "*", "delta", "_delta_log", "*.checkpoint*"))
	if err != nil {
		t.Fatal(err)
	}
	groups := map[string]*goldenCheckpoint{}
	var order []string
	for _, f := range files {
		rel, _ := filepath.Rel(goldenDir, f)
		key := filepath.ToSlash(rel)
		fn, ok := parseName(baseName(key))
		if !ok {
			t.Fatalf("unparsed checkpoint name %s", key)
		}
		info, err := os.Stat(f)
		if err != nil {
			t.Fatal(err)
		}
		g := key
		if fn.kind == kindMultiPart {
			g = dirOf(key) + ClassicName(fn.version) + "/multi"
		}
		if groups[g] == nil {
			groups[g] = &goldenCheckpoint{
				table:   strings.SplitN(key, "/", 2)[0],
				logDir:  strings.TrimSuffix(dirOf(key), "/"),
				version: fn.version,
			}
			order = append(order, g)
		}
		groups[g].parts = append(groups[g].parts, Part{Key: key, Size: info.Size()})
	}
	out := make([]goldenCheckpoint, 0, len(order))
	for _, g := range order {
		out = append(out, *groups[g])
	}
	if len(out) < 20 {
		t.Fatalf("found only %d golden checkpoints", len(out))
	}
	return out
}

// replayState is the reconciled state of a log (PROTOCOL.md "Action
// Reconciliation"), computed from the JSON commits alone.
type replayState struct {
	protocol *actions.Protocol
	metadata *actions.Metadata
	adds     map[string]*actions.Add    // by path and DV id
	removes  map[string]*actions.Remove // by path and DV id
	txns     map[string]int64
	domains  map[string]*actions.DomainMetadata
}

func fileKey(path string, dv *actions.DeletionVector) string { return path + "\x00" + dv.UniqueID() }

// replayCommits replays commits 0..version of a golden table, or reports
// false when some commit file is missing (cleaned-up logs).
func replayCommits(t *testing.T, logDir string, version int64) (*replayState, bool) {
	t.Helper()
	st := &replayState{
		adds: map[string]*actions.Add{}, removes: map[string]*actions.Remove{},
		txns: map[string]int64{}, domains: map[string]*actions.DomainMetadata{},
	}
	for v := int64(0); v <= version; v++ {
		b, err := os.ReadFile(filepath.Join(goldenDir, logDir, commitName(v)))
		if errors.Is(err, os.ErrNotExist) {
			return nil, false
		}
		if err != nil {
			t.Fatal(err)
		}
		as, err := actions.ParseCommit(bytes.NewReader(b))
		if err != nil {
			t.Fatalf("%s v%d: %v", logDir, v, err)
		}
		for _, a := range as {
			switch {
			case a.Protocol != nil:
				st.protocol = a.Protocol
			case a.Metadata != nil:
				st.metadata = a.Metadata
			case a.Add != nil:
				k := fileKey(a.Add.Path, a.Add.DeletionVector)
				st.adds[k] = a.Add
				delete(st.removes, k)
			case a.Remove != nil:
				k := fileKey(a.Remove.Path, a.Remove.DeletionVector)
				delete(st.adds, k)
				st.removes[k] = a.Remove
			case a.Txn != nil:
				st.txns[a.Txn.AppID] = a.Txn.Version
			case a.DomainMetadata != nil:
				if a.DomainMetadata.Removed {
					delete(st.domains, a.DomainMetadata.Domain)
				} else {
					st.domains[a.DomainMetadata.Domain] = a.DomainMetadata
				}
			}
		}
	}
	return st, true
}

func commitName(v int64) string {
	return strings.TrimSuffix(ClassicName(v), ".checkpoint.parquet") + ".json"
}

// readAll collects every action Read yields, failing on an error.
func readAll(t testing.TB, s objstore.Store, parts []Part, opts ...ReadOption) []actions.Action {
	t.Helper()
	var out []actions.Action
	for a, err := range Read(context.Background(), s, parts, opts...) {
		if err != nil {
			t.Fatalf("read %v: %v", parts, err)
		}
		out = append(out, a)
	}
	return out
}

// Checkpoints that are known to lack an action the protocol requires:
// readers of the log must fail on them, but the file reads fine.
var goldenMissing = map[string]string{
	"deltalog-state-reconstruction-from-checkpoint-missing-metadata": "metaData",
	"deltalog-state-reconstruction-from-checkpoint-missing-protocol": "protocol",
}

// TestReadGolden reads every checkpoint in the corpus and compares it with
// a replay of the JSON commits up to its version: protocol, metadata, the
// live files (all fields but dataChange, which checkpoints set to false),
// transactions and domain metadata; tombstones must be removes of the
// replay.
func TestReadGolden(t *testing.T) {
	s := goldenStore(t)
	for _, g := range goldenCheckpoints(t) {
		t.Run(g.name(), func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			got := readAll(t, s, g.parts, WithAllocator(mem), WithConcurrency(3))
			checkDeferredStats(t, s, g.parts, got)
			counts := map[string]int{}
			var protocol *actions.Protocol
			var metadata *actions.Metadata
			adds := map[string]*actions.Add{}
			removes := map[string]*actions.Remove{}
			txns := map[string]int64{}
			domains := map[string]*actions.DomainMetadata{}
			for _, a := range got {
				counts[a.Kind()]++
				switch {
				case a.Protocol != nil:
					protocol = a.Protocol
				case a.Metadata != nil:
					metadata = a.Metadata
				case a.Add != nil:
					adds[fileKey(a.Add.Path, a.Add.DeletionVector)] = a.Add
				case a.Remove != nil:
					removes[fileKey(a.Remove.Path, a.Remove.DeletionVector)] = a.Remove
				case a.Txn != nil:
					txns[a.Txn.AppID] = a.Txn.Version
				case a.DomainMetadata != nil:
					domains[a.DomainMetadata.Domain] = a.DomainMetadata
				}
			}
			t.Logf("%d actions: %v", len(got), counts)
			if missing, ok := goldenMissing[g.table]; ok {
				if counts[missing] != 0 {
					t.Errorf("checkpoint known to lack %s has %d", missing, counts[missing])
				}
				return
			}
			if counts["protocol"] != 1 || counts["metaData"] != 1 {
				t.Fatalf("want one protocol and one metaData, got %v", counts)
			}
			if counts["add"] != len(adds) {
				t.Errorf("%d adds but %d distinct files", counts["add"], len(adds))
			}
			want, ok := replayCommits(t, g.logDir, g.version)
			if !ok {
				t.Logf("commits before version %d were cleaned up; compared nothing", g.version)
				return
			}
			if !reflect.DeepEqual(protocol, want.protocol) {
				t.Errorf("protocol:\n got %+v\nwant %+v", protocol, want.protocol)
			}
			if !reflect.DeepEqual(metadata, want.metadata) {
				t.Errorf("metaData:\n got %+v\nwant %+v", metadata, want.metadata)
			}
			if g, w := sortedKeys(adds), sortedKeys(want.adds); !slices.Equal(g, w) {
				t.Fatalf("live files:\n got %q\nwant %q", g, w)
			}
			for k, a := range adds {
				w := *want.adds[k]
				c := *a
				c.DataChange, w.DataChange = false, false
				if len(c.Tags) == 0 && len(w.Tags) == 0 {
					// delta-rs writes {} for the tags a commit left out.
					c.Tags, w.Tags = nil, nil
				}
				if !reflect.DeepEqual(&c, &w) {
					t.Errorf("add %s:\n got %+v\nwant %+v", a.Path, c, w)
				}
			}
			for k, r := range removes {
				w, ok := want.removes[k]
				if !ok {
					t.Errorf("tombstone %s is not a remove of the replay", r.Path)
					continue
				}
				if w.DeletionTimestamp != nil && (r.DeletionTimestamp == nil || *r.DeletionTimestamp != *w.DeletionTimestamp) {
					t.Errorf("tombstone %s: deletionTimestamp %v, want %v", r.Path, r.DeletionTimestamp, *w.DeletionTimestamp)
				}
			}
			if !maps.Equal(txns, want.txns) {
				t.Errorf("txns %v, want %v", txns, want.txns)
			}
			if g, w := sortedKeys(domains), sortedKeys(want.domains); !slices.Equal(g, w) {
				t.Errorf("domains %q, want %q", g, w)
			}
		})
	}
}

func sortedKeys[V any](m map[string]V) []string {
	out := slices.Collect(maps.Keys(m))
	sort.Strings(out)
	return out
}

// checkDeferredStats: reading the checkpoint WithoutStats yields the same
// adds as a full read, with empty stats; ReadFiles yields the adds of a
// full read as columns, in the same order, and without stats batches that
// line up with those it yields with them (what a snapshot load followed
// by Snapshot.LoadStats relies on).
func checkDeferredStats(t *testing.T, s objstore.Store, parts []Part, full []actions.Action) {
	t.Helper()
	var want []*actions.Add
	var md *actions.Metadata
	for _, a := range full {
		if a.Add != nil {
			want = append(want, a.Add)
		}
		if a.Metadata != nil {
			md = a.Metadata
		}
	}
	i := 0
	for a, err := range Read(context.Background(), s, parts, WithoutStats(), WithConcurrency(2)) {
		if err != nil {
			t.Fatal(err)
		}
		if a.Add == nil {
			continue
		}
		if i >= len(want) {
			t.Fatalf("WithoutStats yields more than the %d adds of a full read", len(want))
		}
		if a.Add.Stats != "" || a.Add.Size != want[i].Size {
			t.Fatalf("WithoutStats add %d: size %d stats %q, want size %d and no stats", i, a.Add.Size, a.Add.Stats, want[i].Size)
		}
		i++
	}
	if i != len(want) {
		t.Fatalf("WithoutStats yields %d adds, a full read %d", i, len(want))
	}
	cols, err := ReadFiles(context.Background(), s, parts, WithConcurrency(3), WithBatchRows(7))
	if err != nil && errors.Is(err, ErrCorrupt) && (md == nil || md.SchemaString == "") {
		return // no schema to lay the adds out by: the snapshot passes this checkpoint over
	}
	if err != nil {
		t.Fatal(err)
	}
	var got []*actions.Add
	for _, c := range cols.Files {
		for j := range c.Len() {
			got = append(got, c.Add(j))
		}
	}
	if len(got) != len(want) {
		t.Fatalf("ReadFiles yields %d adds, Read %d", len(got), len(want))
	}
	for j := range got {
		if d := addDifference(md, got[j], want[j]); d != "" {
			t.Fatalf("ReadFiles add %d (%s) differs from Read's: %s", j, want[j].Path, d)
		}
	}
	lazy, err := ReadFiles(context.Background(), s, parts, WithoutStats(), WithConcurrency(2), WithBatchRows(7))
	if err != nil {
		t.Fatal(err)
	}
	if len(lazy.Files) != len(cols.Files) {
		t.Fatalf("ReadFiles WithoutStats yields %d batches, with stats %d", len(lazy.Files), len(cols.Files))
	}
	for k, c := range lazy.Files {
		if c.Stats() != nil || c.Len() != cols.Files[k].Len() {
			t.Fatalf("ReadFiles WithoutStats batch %d: %d files (stats %v), with stats %d", k, c.Len(), c.Stats() != nil, cols.Files[k].Len())
		}
	}
}

// addDifference says how a differs from b, "" when they hold the same
// values: stats compared as values of the columns' types (md's schema).
func addDifference(md *actions.Metadata, a, b *actions.Add) string {
	switch {
	case a.Path != b.Path, a.Size != b.Size, a.ModificationTime != b.ModificationTime, a.DataChange != b.DataChange:
		return fmt.Sprintf("%+v vs %+v", *a, *b)
	case len(a.PartitionValues) != len(b.PartitionValues):
		return fmt.Sprintf("partition values %v vs %v", a.PartitionValues, b.PartitionValues)
	case a.DeletionVector.UniqueID() != b.DeletionVector.UniqueID():
		return "deletion vectors differ"
	case len(a.Tags) != len(b.Tags):
		return fmt.Sprintf("tags %v vs %v", a.Tags, b.Tags)
	}
	for k, v := range a.PartitionValues {
		w, ok := b.PartitionValues[k]
		if !ok || (v == nil) != (w == nil) || v != nil && *v != *w {
			return fmt.Sprintf("partition value %s differs", k)
		}
	}
	if statsMeaning(md, a.Stats) != statsMeaning(md, b.Stats) {
		return fmt.Sprintf("stats %s vs %s", a.Stats, b.Stats)
	}
	return ""
}

// statsMeaning is a stats text's values, each read as its column's type.
func statsMeaning(md *actions.Metadata, s string) string {
	st, err := actions.ParseStats(s)
	if err != nil || st == nil || md == nil {
		return s
	}
	l, err := NewFileLayout(tableOf(md))
	if err != nil {
		return s
	}
	var out []string
	var walk func(section string, m map[string]any, prefix []string)
	walk = func(section string, m map[string]any, prefix []string) {
		for k, v := range m {
			p := append(slices.Clone(prefix), k)
			switch x := v.(type) {
			case nil:
			case map[string]any:
				walk(section, x, p)
			default:
				text := fmt.Sprint(x)
				if j := l.StatsColumnIndex(p); j >= 0 && section != "nulls" {
					if tv, err := actions.ParseStatValue(l.Stats[j].Type, x); err == nil {
						text = fmt.Sprintf("%#v", tv)
					}
				}
				out = append(out, section+":"+strings.Join(p, ".")+"="+text)
			}
		}
	}
	walk("min", st.MinValues, nil)
	walk("max", st.MaxValues, nil)
	walk("nulls", st.NullCount, nil)
	slices.Sort(out)
	tight := "-"
	if st.TightBounds != nil {
		tight = fmt.Sprint(*st.TightBounds)
	}
	return fmt.Sprintf("n=%d tight=%s %s", st.NumRecords, tight, strings.Join(out, " "))
}

// tableOf is the configuration of the table whose metadata is md, laid
// out by its column mapping property (the protocol not being known).
func tableOf(md *actions.Metadata) *actions.TableConfig {
	if md.SchemaString == "" {
		m := *md
		m.SchemaString = `{"type":"struct","fields":[]}`
		md = &m
	}
	c, err := actions.NewTableConfig(nil, md)
	if err != nil {
		panic(err)
	}
	return c
}
