package deltalog_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/checkpoint"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/expr"
	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/reader"
)

var (
	columnarSeed = flag.Uint64("columnar.seed", 0, "seed of TestRandomColumnarSnapshot (0: from the clock)")
	columnarLong = flag.Bool("columnar.long", false, "TestRandomColumnarSnapshot: more and longer random tables")
)

// TestRandomColumnarSnapshot checks the columnar snapshot against an
// independent replay. Random tables (every primitive type, a struct and
// an array column, partition columns of every partition type, column
// mapping none, name or id, deletion vectors, tags, row tracking fields)
// get random commits (adds with stats written as writers write them and
// some that no column can hold, removes, deletion vector updates,
// re-adds) and, at random versions, checkpoints of every form (classic,
// multi-part, V2 with and without sidecars; stats as JSON, as struct, or
// both), written both from add actions and from the snapshot's columns.
// At every version, Open (with stats in one pass, and with LoadStats
// after) must give exactly the files of the reference replay, which
// reads the newest checkpoint with checkpoint.Read (one *actions.Add per
// file, the pre-columnar path) and folds the JSON commits after it in a
// map: the same files in the same order, every field equal, stats equal
// value for value. And scans of random predicates must plan exactly the
// files, and prune and skip exactly the counts, that MayMatch over the
// reference's adds gives. Replay with -columnar.seed N.
func TestRandomColumnarSnapshot(t *testing.T) {
	seed := *columnarSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (replay: go test ./deltalog -run TestRandomColumnarSnapshot -columnar.seed %d)", seed, seed)
	rounds, versions := 4, 14
	if *columnarLong {
		rounds, versions = 24, 40
	}
	for round := range rounds {
		s := seed + uint64(round)
		t.Run(fmt.Sprint("seed=", s), func(t *testing.T) { randomColumnar(t, s, versions) })
	}
}

// randomTable is a random table's shape.
type randomTable struct {
	schema   *actions.StructType
	md       *actions.Metadata
	mode     string
	parts    []string // logical partition columns
	physical map[string]string
}

var partitionTypes = []actions.DataType{
	actions.TypeString, actions.TypeLong, actions.TypeInteger, actions.TypeShort, actions.TypeByte,
	actions.TypeDouble, actions.TypeFloat, actions.TypeBoolean, actions.TypeDate, actions.TypeTimestamp,
	actions.TypeTimestampNTZ, &actions.DecimalType{Precision: 9, Scale: 2}, actions.TypeBinary,
}

var dataTypes = []actions.DataType{
	actions.TypeString, actions.TypeLong, actions.TypeInteger, actions.TypeShort, actions.TypeByte,
	actions.TypeDouble, actions.TypeFloat, actions.TypeBoolean, actions.TypeDate, actions.TypeTimestamp,
	actions.TypeTimestampNTZ, &actions.DecimalType{Precision: 12, Scale: 3}, actions.TypeBinary,
}

func newRandomTable(rng *rand.Rand) *randomTable {
	rt := &randomTable{mode: []string{"none", "name", "id"}[rng.IntN(3)], physical: map[string]string{}}
	id := 0
	field := func(name string, t actions.DataType) *actions.StructField {
		id++
		f := &actions.StructField{Name: name, Type: t, Nullable: true, Metadata: map[string]any{}}
		if rt.mode != "none" {
			f.Metadata[actions.MetaColumnMappingID] = json.Number(fmt.Sprint(id))
			f.Metadata[actions.MetaColumnMappingPhysical] = fmt.Sprintf("col-%d-%s", id, name)
		}
		return f
	}
	var fields []*actions.StructField
	for i, t := range dataTypes {
		if rng.IntN(4) != 0 {
			fields = append(fields, field(fmt.Sprintf("c%d", i), t))
		}
	}
	fields = append(fields,
		field("st", &actions.StructType{Fields: []*actions.StructField{field("x", actions.TypeLong), field("y", actions.TypeString)}}),
		field("arr", &actions.ArrayType{ElementType: actions.TypeInteger, ContainsNull: true}))
	for i := range 1 + rng.IntN(3) {
		if rng.IntN(3) == 0 {
			continue
		}
		name := fmt.Sprintf("p%d", i)
		fields = append(fields, field(name, partitionTypes[rng.IntN(len(partitionTypes))]))
		rt.parts = append(rt.parts, name)
	}
	rt.schema = &actions.StructType{Fields: fields}
	for _, f := range fields {
		rt.physical[f.Name] = f.PhysicalName(rt.mode)
	}
	s, err := actions.SchemaString(rt.schema)
	if err != nil {
		panic(err)
	}
	conf := map[string]string{"delta.enableDeletionVectors": "true"}
	if rt.mode != "none" {
		conf[actions.PropColumnMappingMode] = rt.mode
		conf[actions.PropColumnMappingMaxColumnID] = fmt.Sprint(id)
	}
	created := int64(1767225600000)
	rt.md = &actions.Metadata{ID: "cafe0000-0000-4000-8000-000000000001", SchemaString: s, PartitionColumns: rt.parts,
		Configuration: conf, Format: actions.Format{Provider: "parquet", Options: map[string]string{}}, CreatedTime: &created}
	return rt
}

// value draws a value of type t as actions.values.go holds it.
func randomValue(rng *rand.Rand, t actions.DataType) any {
	switch t := t.(type) {
	case *actions.DecimalType:
		return actions.NewDecimal(int64(rng.IntN(200001)-100000), t.Scale)
	case actions.PrimitiveType:
		switch t {
		case actions.TypeString:
			return []string{"", "a", "ab", "abc", "b", "zz", "Åland", `q"uote`, `back\slash`, "tab\t", "x/y=z", "a%20b", "日本"}[rng.IntN(13)]
		case actions.TypeBinary:
			return []byte([]string{"", "a", "ab", "\x00\x01", "zz"}[rng.IntN(5)])
		case actions.TypeLong:
			return []int64{0, 1, -1, 42, 1 << 40, math.MaxInt64, math.MinInt64, int64(rng.IntN(1000))}[rng.IntN(8)]
		case actions.TypeInteger:
			return int32(rng.IntN(2001) - 1000)
		case actions.TypeShort:
			return int16(rng.IntN(2001) - 1000)
		case actions.TypeByte:
			return int8(rng.IntN(255) - 127)
		case actions.TypeDouble:
			return []float64{0, -1.5, 2.25, 1e-4, 1e300, math.Copysign(0, -1), float64(rng.IntN(100)) / 8, math.NaN(), math.Inf(1)}[rng.IntN(9)]
		case actions.TypeFloat:
			return []float32{0, -1.5, 2.25, 0.1, 3.4e38, float32(rng.IntN(100)) / 8, float32(math.NaN())}[rng.IntN(7)]
		case actions.TypeBoolean:
			return rng.IntN(2) == 0
		case actions.TypeDate:
			return actions.Date(19000 + rng.IntN(2000))
		case actions.TypeTimestamp:
			return actions.Timestamp(1_700_000_000_000_000 + int64(rng.IntN(1000))*1_000_000_007)
		case actions.TypeTimestampNTZ:
			return actions.TimestampNTZ(1_700_000_000_000_000 + int64(rng.IntN(1000))*1_000_000_000)
		}
	}
	return nil
}

// statText is a bound as writers put it in add.stats JSON.
func statText(rng *rand.Rand, v any) any {
	switch x := v.(type) {
	case string:
		return x
	case []byte:
		return string(x)
	case int8, int16, int32, int64:
		return json.Number(fmt.Sprint(x))
	case float32:
		return floatStat(float64(x), 32)
	case float64:
		return floatStat(x, 64)
	case bool:
		return x
	case actions.Date:
		return x.String()
	case actions.Timestamp:
		s := x.Time().Format("2006-01-02T15:04:05.000Z07:00")
		if rng.IntN(3) == 0 {
			s = x.Time().In(time.FixedZone("", 3600)).Format("2006-01-02T15:04:05.000-07:00")
		}
		return s
	case actions.TimestampNTZ:
		return x.Time().Format("2006-01-02T15:04:05.000")
	case actions.Decimal:
		return json.Number(x.String())
	}
	return nil
}

func floatStat(f float64, bits int) any {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	}
	return json.Number(fmt.Sprint(strings.TrimSuffix(fmt.Sprintf("%v", f), "")))
}

// randomStats draws add.stats for the table's data columns.
func (rt *randomTable) randomStats(rng *rand.Rand) string {
	switch rng.IntN(12) {
	case 0:
		return ""
	case 1:
		return `{"numRecords":5,"minValues":{"nope":1},"maxValues":{"nope":2}}` // a column the schema lacks
	case 2:
		return `{"numRecords":` // not JSON
	case 3:
		return `{"numRecords":5,"minValues":{"` + rt.physical["st"] + `":7}}` // a struct's bound as a number
	}
	num := int64(1 + rng.IntN(100))
	mins, maxs, nulls := map[string]any{}, map[string]any{}, map[string]any{}
	for _, f := range rt.schema.Fields {
		if slices.Contains(rt.parts, f.Name) {
			continue
		}
		phys := f.PhysicalName(rt.mode)
		switch ft := f.Type.(type) {
		case *actions.StructType:
			smin, smax, snull := map[string]any{}, map[string]any{}, map[string]any{}
			for _, sf := range ft.Fields {
				a, b := randomValue(rng, sf.Type), randomValue(rng, sf.Type)
				if c, _ := actions.CompareValues(a, b); c > 0 {
					a, b = b, a
				}
				sp := sf.PhysicalName(rt.mode)
				if rng.IntN(4) != 0 {
					smin[sp], smax[sp] = statText(rng, a), statText(rng, b)
				}
				snull[sp] = rng.IntN(3)
			}
			mins[phys], maxs[phys], nulls[phys] = smin, smax, snull
		case *actions.ArrayType:
			nulls[phys] = rng.IntN(5)
		default:
			if rng.IntN(5) == 0 {
				continue // no stats for this column
			}
			a, b := randomValue(rng, f.Type), randomValue(rng, f.Type)
			if c, _ := actions.CompareValues(a, b); c > 0 {
				a, b = b, a
			}
			if rng.IntN(6) != 0 {
				mins[phys], maxs[phys] = statText(rng, a), statText(rng, b)
			}
			switch rng.IntN(4) {
			case 0:
				nulls[phys] = 0
			case 1:
				nulls[phys] = num // every row null
			case 2:
				nulls[phys] = rng.IntN(int(num))
			}
		}
	}
	st := map[string]any{"minValues": mins, "maxValues": maxs, "nullCount": nulls}
	if rng.IntN(6) != 0 {
		st["numRecords"] = num
	}
	if rng.IntN(4) == 0 {
		st["tightBounds"] = rng.IntN(2) == 0
	}
	b, err := json.Marshal(st)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func (rt *randomTable) randomPartitionValues(rng *rand.Rand) map[string]*string {
	pv := map[string]*string{}
	for _, name := range rt.parts {
		f := rt.schema.Field(name)
		var s *string
		switch rng.IntN(8) {
		case 0: // null
		case 1:
			e := ""
			s = &e
		default:
			var err error
			if s, err = actions.FormatPartitionValue(f.Type, randomValue(rng, f.Type)); err != nil {
				panic(err)
			}
		}
		pv[f.PhysicalName(rt.mode)] = s
	}
	if rng.IntN(30) == 0 {
		x := "odd"
		pv["not-a-partition"] = &x
	}
	return pv
}

func (rt *randomTable) randomAdd(rng *rand.Rand, path string, v int) *actions.Add {
	a := &actions.Add{Path: path, PartitionValues: rt.randomPartitionValues(rng), Size: int64(100 + rng.IntN(1_000_000)),
		ModificationTime: 1767225600000 + int64(v)*1000, DataChange: rng.IntN(5) != 0, Stats: rt.randomStats(rng)}
	if rng.IntN(6) == 0 {
		a.Tags = map[string]string{"INSERTION_TIME": fmt.Sprint(v), "k": "v"}
	}
	if rng.IntN(5) == 0 {
		a.BaseRowID, a.DefaultRowCommitVersion = new(int64(rng.IntN(1000))), new(int64(v))
	}
	if rng.IntN(10) == 0 {
		a.ClusteringProvider = new("liquid")
	}
	if rng.IntN(4) == 0 {
		a.DeletionVector = randomDV(rng)
	}
	return a
}

func randomDV(rng *rand.Rand) *actions.DeletionVector {
	if rng.IntN(3) == 0 {
		return &actions.DeletionVector{StorageType: "i", PathOrInlineDv: fmt.Sprintf("wi5b=000010000siXQKl0rr91%04d", rng.IntN(10000)), SizeInBytes: 40, Cardinality: int64(1 + rng.IntN(5))}
	}
	dv := &actions.DeletionVector{StorageType: "u", PathOrInlineDv: fmt.Sprintf("ab^-aqEH.-t@S}K{vb[*k%04d", rng.IntN(10000)), SizeInBytes: 36, Cardinality: int64(1 + rng.IntN(5))}
	if rng.IntN(3) != 0 {
		dv.Offset = new(int32(1 + rng.IntN(100)))
	}
	if rng.IntN(3) == 0 {
		dv.MaxRowIndex = new(int64(rng.IntN(100)))
	}
	return dv
}

type liveKey struct{ path, dv string }

func keyOf(a *actions.Add) liveKey {
	return liveKey{actions.CanonicalPath(a.Path), a.DeletionVector.UniqueID()}
}

func randomColumnar(t *testing.T, seed uint64, versions int) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(seed, seed>>3|1))
	mem := objstore.NewMem()
	rt := newRandomTable(rng)
	protocol := &actions.Protocol{MinReaderVersion: 3, MinWriterVersion: 7,
		ReaderFeatures: []string{"deletionVectors", "timestampNtz"}, WriterFeatures: []string{"deletionVectors", "timestampNtz"}}
	if rt.mode != "none" {
		protocol.ReaderFeatures = append(protocol.ReaderFeatures, "columnMapping")
		protocol.WriterFeatures = append(protocol.WriterFeatures, "columnMapping")
	}
	writeCommit(t, mem, 0, []actions.Action{{Protocol: protocol}, {Metadata: rt.md}})
	live := map[liveKey]*actions.Add{}
	checkpoints := map[int][]checkpoint.Part{}
	forms := map[string]int{}
	next := 0
	for v := 1; v <= versions; v++ {
		var acts []actions.Action
		keys := slices.SortedFunc(maps.Keys(live), func(a, b liveKey) int { return strings.Compare(a.path+a.dv, b.path+b.dv) })
		for range 1 + rng.IntN(10) {
			switch op := rng.IntN(10); {
			case op < 5 || len(keys) == 0:
				path := fmt.Sprintf("part-%05d-%d.parquet", next, rng.IntN(1000))
				if len(rt.parts) > 0 && rng.IntN(2) == 0 {
					path = fmt.Sprintf("%s=x/%s", rt.physical[rt.parts[0]], path)
				}
				if rng.IntN(15) == 0 {
					path = "dir%20with%20space/" + path // escaped: its canonical form differs
				}
				next++
				a := rt.randomAdd(rng, path, v)
				if _, dup := live[keyOf(a)]; dup {
					continue
				}
				acts = append(acts, actions.Action{Add: a})
				live[keyOf(a)] = a
			case op < 7:
				k := keys[rng.IntN(len(keys))]
				old, ok := live[k]
				if !ok {
					continue
				}
				rm := actions.RemoveOf(old, time.Now().UnixMilli(), true)
				if rng.IntN(4) == 0 {
					rm.Path = strings.ReplaceAll(rm.Path, "%20", " ") // named another way
				}
				acts = append(acts, actions.Action{Remove: rm})
				delete(live, k)
			case op < 9:
				k := keys[rng.IntN(len(keys))]
				old, ok := live[k]
				if !ok {
					continue
				}
				acts = append(acts, actions.Action{Remove: actions.RemoveOf(old, time.Now().UnixMilli(), true)})
				delete(live, k)
				a := *old
				a.DeletionVector = randomDV(rng)
				a.Stats = rt.randomStats(rng)
				acts = append(acts, actions.Action{Add: &a})
				live[keyOf(&a)] = &a
			default: // the same file added again: the later add wins
				k := keys[rng.IntN(len(keys))]
				old, ok := live[k]
				if !ok {
					continue
				}
				a := *old
				a.Size++
				a.Stats = rt.randomStats(rng)
				acts = append(acts, actions.Action{Add: &a})
				live[k] = &a
			}
		}
		writeCommit(t, mem, v, acts)
		if rng.IntN(3) == 0 {
			form, parts := writeRandomCheckpoint(t, ctx, mem, rng, rt, v)
			checkpoints[v] = parts
			forms[form]++
		}
	}
	files := 0
	for v := 1; v <= versions; v++ {
		want := referenceReplay(t, ctx, mem, checkpoints, v)
		got, err := deltalog.Open(ctx, mem, "", deltalog.AtVersion(int64(v)), deltalog.WithStats())
		if err != nil {
			t.Fatalf("seed %d: open version %d: %v", seed, v, err)
		}
		lazy, err := deltalog.Open(ctx, mem, "", deltalog.AtVersion(int64(v)))
		if err != nil {
			t.Fatalf("seed %d: open version %d: %v", seed, v, err)
		}
		if err := lazy.LoadStats(ctx); err != nil {
			t.Fatalf("seed %d: stats of version %d: %v", seed, v, err)
		}
		for _, s := range []*deltalog.Snapshot{got, lazy} {
			compareFiles(t, seed, v, rt, slices.Collect(s.Files()), want)
		}
		files += len(want)
		if v > versions-4 {
			comparePlans(t, seed, v, rt, got, want, rng)
		}
	}
	// The last version against what the test committed, unless a
	// checkpoint kept the stats only as a struct (which holds no bounds
	// of binary or boolean columns, nor stats the schema lacks).
	structOnly := false
	for f := range forms {
		structOnly = structOnly || strings.Contains(f, "struct only")
	}
	if !structOnly {
		final := slices.SortedFunc(maps.Values(live), compareAdd)
		compareFiles(t, seed, versions, rt, slices.Collect(open(t, mem, deltalog.WithStats()).Files()), final)
	}
	if files == 0 {
		t.Fatalf("seed %d: no files: the comparison proved nothing", seed)
	}
	t.Logf("seed %d: mode %s, partitions %v, %d versions, %d files compared, checkpoints %v", seed, rt.mode, rt.parts, versions, files, forms)
}

func writeCommit(t *testing.T, st objstore.Store, v int, acts []actions.Action) {
	t.Helper()
	ts := int64(1767225600000 + v*1000)
	acts = append([]actions.Action{{CommitInfo: &actions.CommitInfo{Timestamp: &ts, Operation: "WRITE"}}}, acts...)
	b, err := actions.MarshalCommit(acts)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Put(context.Background(), fmt.Sprintf("_delta_log/%020d.json", v), bytes.NewReader(b), objstore.PutOptions{IfAbsent: true}); err != nil {
		t.Fatal(err)
	}
}

// writeRandomCheckpoint writes a checkpoint of version v in a random form.
func writeRandomCheckpoint(t *testing.T, ctx context.Context, st objstore.Store, rng *rand.Rand, rt *randomTable, v int) (string, []checkpoint.Part) {
	snap := open(t, st, deltalog.AtVersion(int64(v)), deltalog.WithStats())
	var opts []checkpoint.WriteOption
	form := "classic"
	switch rng.IntN(4) {
	case 1:
		form = "multi-part"
		opts = append(opts, checkpoint.WithParts(2+rng.IntN(3)))
	case 2:
		form = "v2 with sidecars"
		opts = append(opts, checkpoint.WithV2(1+rng.IntN(7)))
	case 3:
		form = "v2"
		opts = append(opts, checkpoint.WithV2(0))
	}
	table := snap.Config()
	switch rng.IntN(3) {
	case 1:
		form += ", stats as struct too"
		opts = append(opts, checkpoint.WithStatsAsStruct(table))
	case 2:
		form += ", stats as struct only"
		opts = append(opts, checkpoint.WithStatsAsStruct(table), checkpoint.WithoutStatsJSON())
	}
	var lc checkpoint.LastCheckpoint
	var err error
	if rng.IntN(2) == 0 {
		form += ", from adds"
		lc, err = checkpoint.Write(ctx, st, "_delta_log", int64(v), deltalog.CheckpointActions(snap, time.Now()), opts...)
	} else {
		form += ", from columns"
		acts, rows := deltalog.CheckpointFiles(snap, time.Now())
		lc, err = checkpoint.WriteFiles(ctx, st, "_delta_log", int64(v), acts, rows, opts...)
	}
	if err != nil {
		t.Fatalf("%s checkpoint %d: %v", form, v, err)
	}
	if err := checkpoint.WriteLast(ctx, st, "_delta_log", lc); err != nil {
		t.Fatal(err)
	}
	var parts []checkpoint.Part
	switch {
	case lc.V2Checkpoint != nil:
		parts = []checkpoint.Part{{Key: "_delta_log/" + lc.V2Checkpoint.Path}}
	case lc.Parts != nil:
		for i := 1; i <= *lc.Parts; i++ {
			parts = append(parts, checkpoint.Part{Key: "_delta_log/" + checkpoint.MultiPartName(int64(v), i, *lc.Parts)})
		}
	default:
		parts = []checkpoint.Part{{Key: "_delta_log/" + checkpoint.ClassicName(int64(v))}}
	}
	return form, parts
}

func compareAdd(a, b *actions.Add) int {
	if c := strings.Compare(a.Path, b.Path); c != 0 {
		return c
	}
	return strings.Compare(a.DeletionVector.UniqueID(), b.DeletionVector.UniqueID())
}

// referenceReplay folds version v from the newest checkpoint at or
// before it, read action by action, and the JSON commits after it.
func referenceReplay(t *testing.T, ctx context.Context, st objstore.Store, checkpoints map[int][]checkpoint.Part, v int) []*actions.Add {
	t.Helper()
	live := map[liveKey]*actions.Add{}
	from := 0
	for c := v; c >= 1; c-- {
		if parts, ok := checkpoints[c]; ok {
			for a, err := range checkpoint.Read(ctx, st, parts) {
				if err != nil {
					t.Fatalf("reference: checkpoint %d: %v", c, err)
				}
				if a.Add != nil {
					live[keyOf(a.Add)] = a.Add
				}
			}
			from = c + 1
			break
		}
	}
	for version := from; version <= v; version++ {
		b, err := st.Get(ctx, fmt.Sprintf("_delta_log/%020d.json", version))
		if err != nil {
			t.Fatal(err)
		}
		as, err := actions.ParseCommitBytes(b)
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range as {
			switch {
			case a.Add != nil:
				live[keyOf(a.Add)] = a.Add
			case a.Remove != nil:
				delete(live, liveKey{actions.CanonicalPath(a.Remove.Path), a.Remove.DeletionVector.UniqueID()})
			}
		}
	}
	return slices.SortedFunc(maps.Values(live), compareAdd)
}

func compareFiles(t *testing.T, seed uint64, v int, rt *randomTable, got, want []*actions.Add) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("seed %d: version %d: %d files, the reference has %d", seed, v, len(got), len(want))
	}
	for i := range got {
		g, w := got[i], want[i]
		same := g.Path == w.Path && g.Size == w.Size && g.ModificationTime == w.ModificationTime && g.DataChange == w.DataChange &&
			equalPartitionValues(g.PartitionValues, w.PartitionValues) && maps.Equal(g.Tags, w.Tags) &&
			equalDV(g.DeletionVector, w.DeletionVector) && equalPtr(g.BaseRowID, w.BaseRowID) &&
			equalPtr(g.DefaultRowCommitVersion, w.DefaultRowCommitVersion) && equalPtr(g.ClusteringProvider, w.ClusteringProvider)
		if !same {
			t.Fatalf("seed %d: version %d: file %d is\n%+v\nthe reference has\n%+v", seed, v, i, *g, *w)
		}
		if gs, ws := normalStats(rt, g.Stats), normalStats(rt, w.Stats); gs != ws {
			t.Fatalf("seed %d: version %d: file %s has stats\n%s (%s)\nthe reference has\n%s (%s)", seed, v, g.Path, gs, g.Stats, ws, w.Stats)
		}
	}
}

func equalDV(a, b *actions.DeletionVector) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.StorageType == b.StorageType && a.PathOrInlineDv == b.PathOrInlineDv && equalPtr(a.Offset, b.Offset) &&
		a.SizeInBytes == b.SizeInBytes && a.Cardinality == b.Cardinality && equalPtr(a.MaxRowIndex, b.MaxRowIndex)
}

func equalPtr[T comparable](a, b *T) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// normalStats is the meaning of an add.stats text, for comparing two
// spellings: every bound read as its column's typed value, nulls and
// empty objects dropped; text that is not stats JSON stays as it is.
func normalStats(rt *randomTable, s string) string {
	st, err := actions.ParseStats(s)
	if err != nil || st == nil {
		return s
	}
	types := map[string]actions.DataType{}
	var walk func(fs []*actions.StructField, prefix string)
	walk = func(fs []*actions.StructField, prefix string) {
		for _, f := range fs {
			p := prefix + f.PhysicalName(rt.mode)
			if sub, ok := f.Type.(*actions.StructType); ok {
				walk(sub.Fields, p+".")
				continue
			}
			types[p] = f.Type
		}
	}
	walk(rt.schema.Fields, "")
	var out []string
	var norm func(section string, m map[string]any, prefix string)
	norm = func(section string, m map[string]any, prefix string) {
		for k, v := range m {
			p := prefix + k
			switch x := v.(type) {
			case nil:
			case map[string]any:
				norm(section, x, p+".")
			default:
				text := fmt.Sprint(x)
				if section != "nulls" {
					if tv, err := actions.ParseStatValue(types[p], x); err == nil {
						text = fmt.Sprintf("%#v", tv)
					}
				}
				out = append(out, section+":"+p+"="+text)
			}
		}
	}
	norm("min", st.MinValues, "")
	norm("max", st.MaxValues, "")
	norm("nulls", st.NullCount, "")
	slices.Sort(out)
	tight := "-"
	if st.TightBounds != nil {
		tight = fmt.Sprint(*st.TightBounds)
	}
	return fmt.Sprintf("n=%d tight=%s %s", st.NumRecords, tight, strings.Join(out, " "))
}

// comparePlans plans random filters over got and compares them with
// MayMatch over the reference's adds.
func comparePlans(t *testing.T, seed uint64, v int, rt *randomTable, got *deltalog.Snapshot, want []*actions.Add, rng *rand.Rand) {
	t.Helper()
	ctx := context.Background()
	for range 25 {
		src := rt.randomPredicate(rng, 2)
		e, err := expr.Parse(src)
		if err != nil {
			t.Fatalf("seed %d: %q: %v", seed, src, err)
		}
		scan, err := reader.NewScan(got, reader.WithFilter(e))
		if err != nil {
			continue // does not bind
		}
		pruner, err := expr.NewPruner(e, got.Config())
		if err != nil {
			t.Fatalf("seed %d: %s: the scan binds, the pruner does not: %v", seed, src, err)
		}
		var planned []string
		for f, err := range scan.Files(ctx) {
			if err != nil {
				t.Fatal(err)
			}
			planned = append(planned, f.Add.Path+"#"+f.Add.DeletionVector.UniqueID())
		}
		var expected []string
		var prunedPartition, skippedStats int64
		for _, a := range want {
			if !pruner.MayMatch(a.PartitionValues, nil) {
				prunedPartition++
				continue
			}
			st, err := actions.ParseStats(a.Stats)
			if err != nil {
				st = nil
			}
			if st != nil && !pruner.MayMatch(a.PartitionValues, st) {
				skippedStats++
				continue
			}
			expected = append(expected, a.Path+"#"+a.DeletionVector.UniqueID())
		}
		m := scan.Metrics()
		if !slices.Equal(planned, expected) || m.FilesPrunedByPartition != prunedPartition || m.FilesSkippedByStats != skippedStats {
			t.Fatalf("seed %d: version %d: %s plans %d files (%d pruned, %d skipped), the reference %d (%d, %d)\n got %v\nwant %v",
				seed, v, src, len(planned), m.FilesPrunedByPartition, m.FilesSkippedByStats, len(expected), prunedPartition, skippedStats, planned, expected)
		}
	}
}

// randomPredicate draws a filter over the table's columns.
func (rt *randomTable) randomPredicate(rng *rand.Rand, depth int) string {
	if depth > 0 && rng.IntN(2) == 0 {
		l, r := rt.randomPredicate(rng, depth-1), rt.randomPredicate(rng, depth-1)
		switch rng.IntN(3) {
		case 0:
			return "(" + l + ") AND (" + r + ")"
		case 1:
			return "(" + l + ") OR (" + r + ")"
		}
		return "NOT (" + l + ")"
	}
	var cols []*actions.StructField
	for _, f := range rt.schema.Fields {
		switch f.Type.(type) {
		case *actions.StructType:
			for _, sf := range f.Type.(*actions.StructType).Fields {
				cols = append(cols, &actions.StructField{Name: f.Name + "." + sf.Name, Type: sf.Type})
			}
		case *actions.ArrayType:
		default:
			cols = append(cols, f)
		}
	}
	f := cols[rng.IntN(len(cols))]
	lit := func() string { return sqlLiteral(f.Type, randomValue(rng, f.Type)) }
	switch rng.IntN(6) {
	case 0:
		return f.Name + []string{" IS NULL", " IS NOT NULL"}[rng.IntN(2)]
	case 1:
		return f.Name + []string{" IN ", " NOT IN "}[rng.IntN(2)] + "(" + lit() + ", " + lit() + ")"
	case 2:
		return lit() + " " + []string{"=", "<>", "<", "<=", ">", ">="}[rng.IntN(6)] + " " + f.Name
	}
	return f.Name + " " + []string{"=", "<>", "<", "<=", ">", ">=", "<=>"}[rng.IntN(7)] + " " + lit()
}

// sqlLiteral spells v as a literal of type t.
func sqlLiteral(t actions.DataType, v any) string {
	quote := func(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
	switch x := v.(type) {
	case string:
		return quote(x)
	case []byte:
		return fmt.Sprintf("X'%X'", x)
	case float32:
		if x != x {
			return "CAST('NaN' AS float)"
		}
		return fmt.Sprintf("CAST(%v AS float)", x)
	case float64:
		if x != x {
			return "CAST('NaN' AS double)"
		}
		if math.IsInf(x, 1) {
			return "CAST('Infinity' AS double)"
		}
		return fmt.Sprintf("CAST(%v AS double)", x)
	case int8, int16, int32:
		return fmt.Sprintf("CAST(%v AS %s)", x, t)
	case int64:
		return fmt.Sprint(x)
	case bool:
		return fmt.Sprint(x)
	case actions.Date:
		return "DATE '" + x.String() + "'"
	case actions.Timestamp:
		return "TIMESTAMP '" + x.Time().Format("2006-01-02 15:04:05.000000") + "'"
	case actions.TimestampNTZ:
		return "CAST('" + x.Time().Format("2006-01-02 15:04:05.000000") + "' AS timestamp_ntz)"
	case actions.Decimal:
		return fmt.Sprintf("CAST(%s AS %s)", x.String(), t)
	}
	return "NULL"
}
