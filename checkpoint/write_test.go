package checkpoint

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/arrow-go/v18/parquet/schema"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/objstore"
)

func ptr[T any](v T) *T { return &v }

// sampleState is a small table state using every field a checkpoint holds.
func sampleState() []actions.Action {
	region := "eu"
	return []actions.Action{
		{Protocol: &actions.Protocol{MinReaderVersion: 3, MinWriterVersion: 7,
			ReaderFeatures: []string{"deletionVectors"}, WriterFeatures: []string{"deletionVectors", "domainMetadata", "rowTracking"}}},
		{Metadata: &actions.Metadata{
			ID: "5a5afdfe-7d40-4109-bb92-29b051257e4c", Name: ptr("t"), Description: nil,
			Format:           actions.Format{Provider: "parquet", Options: map[string]string{}},
			SchemaString:     `{"type":"struct","fields":[{"name":"id","type":"long","nullable":true,"metadata":{}},{"name":"region","type":"string","nullable":true,"metadata":{}}]}`,
			PartitionColumns: []string{"region"},
			CreatedTime:      ptr(int64(1739329708855)),
			Configuration:    map[string]string{"delta.enableDeletionVectors": "true", "delta.checkpointInterval": "10"},
		}},
		{Txn: &actions.Txn{AppID: "app-1", Version: 7, LastUpdated: ptr(int64(1700000000000))}},
		{Txn: &actions.Txn{AppID: "app-2", Version: 3}},
		{DomainMetadata: &actions.DomainMetadata{Domain: "delta.rowTracking", Configuration: `{"rowIdHighWaterMark":41}`}},
		{Add: &actions.Add{
			Path: "region=eu/part-0.parquet", PartitionValues: map[string]*string{"region": &region},
			Size: 1234, ModificationTime: 1700000000001, DataChange: false,
			Stats: `{"numRecords":10,"minValues":{"id":0},"maxValues":{"id":9},"nullCount":{"id":0}}`,
			Tags:  map[string]string{"INSERTION_TIME": "1700000000000000"},
			DeletionVector: &actions.DeletionVector{StorageType: "u", PathOrInlineDv: "ab^-aqEH.-t@S}K{vb[*k^",
				Offset: ptr(int32(1)), SizeInBytes: 36, Cardinality: 2, MaxRowIndex: ptr(int64(9))},
			BaseRowID: ptr(int64(0)), DefaultRowCommitVersion: ptr(int64(1)),
		}},
		{Add: &actions.Add{
			Path: "region=__HIVE_DEFAULT_PARTITION__/part-1.parquet", PartitionValues: map[string]*string{"region": nil},
			Size: 99, ModificationTime: 1700000000002, DataChange: false,
			ClusteringProvider: ptr("liquid"),
		}},
		{Remove: &actions.Remove{
			Path: "region=eu/part-old.parquet", DeletionTimestamp: ptr(int64(1700000000003)), DataChange: true,
			ExtendedFileMetadata: ptr(true), PartitionValues: map[string]*string{"region": &region}, Size: ptr(int64(77)),
			BaseRowID: ptr(int64(10)), DefaultRowCommitVersion: ptr(int64(0)),
		}},
		{Remove: &actions.Remove{Path: "bare.parquet", DataChange: true}},
	}
}

func seq(acts []actions.Action) iter.Seq2[actions.Action, error] {
	return func(yield func(actions.Action, error) bool) {
		for _, a := range acts {
			if !yield(a, nil) {
				return
			}
		}
	}
}

// TestWriteReadRoundTrip also writes row groups of one and of three rows:
// a reader skips the columns whose chunk statistics show only nulls, and
// in such row groups most are.
func TestWriteReadRoundTrip(t *testing.T) {
	for _, c := range []Compression{Snappy, Zstd, Uncompressed} {
		for _, rows := range []int{0, 1, 3} {
			t.Run(fmt.Sprintf("%v/rowgroup=%d", c, rows), func(t *testing.T) {
				roundTrip(t, c, rows)
			})
		}
	}
}

func roundTrip(t *testing.T, c Compression, rowGroup int) {
	ctx := context.Background()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	store := objstore.NewMem()
	want := sampleState()
	// commitInfo, cdc and domain tombstones never reach a checkpoint.
	in := append(want[:len(want):len(want)],
		actions.Action{CommitInfo: &actions.CommitInfo{Operation: "WRITE"}},
		actions.Action{CDC: &actions.AddCDCFile{Path: "_change_data/x.parquet"}},
		actions.Action{DomainMetadata: &actions.DomainMetadata{Domain: "gone", Removed: true}},
	)
	opts := []WriteOption{WithCompression(c), WithAllocator(mem)}
	if rowGroup > 0 {
		opts = append(opts, WithRowGroupSize(rowGroup))
	}
	lc, err := Write(ctx, store, "t/_delta_log", 12, seq(in), opts...)
	if err != nil {
		t.Fatal(err)
	}
	info, err := store.Head(ctx, "t/_delta_log/00000000000000000012.checkpoint.parquet")
	if err != nil {
		t.Fatal(err)
	}
	if lc.Version != 12 || lc.Size != int64(len(want)) || *lc.NumOfAddFiles != 2 || *lc.SizeInBytes != info.Size {
		t.Errorf("LastCheckpoint %+v, file size %d", lc, info.Size)
	}
	got := readAll(t, store, []Part{{Key: info.Key}}, WithAllocator(mem))
	if !reflect.DeepEqual(got, want) {
		t.Errorf("round trip:\n got %s\nwant %s", dump(got), dump(want))
	}
}

func dump(as []actions.Action) string {
	b, _ := actions.MarshalCommit(as)
	return string(b)
}

func TestWriteNeedsProtocolAndMetadata(t *testing.T) {
	ctx := context.Background()
	store := objstore.NewMem()
	state := sampleState()
	for name, acts := range map[string][]actions.Action{
		"no protocol":  state[1:],
		"no metaData":  append([]actions.Action{state[0]}, state[2:]...),
		"two metaData": append(state[:len(state):len(state)], state[1]),
	} {
		if _, err := Write(ctx, store, "_delta_log", 1, seq(acts)); err == nil || !strings.Contains(err.Error(), "one protocol and one metaData") {
			t.Errorf("%s: err %v", name, err)
		}
	}
	for info, err := range store.List(ctx, "", "") {
		t.Errorf("left %s (%v)", info.Key, err)
	}
}

// TestWriteFailureLeavesNothing: a failure while streaming (from the
// actions, or from the store) leaves no object under the final name.
func TestWriteFailureLeavesNothing(t *testing.T) {
	ctx := context.Background()
	boom := errors.New("boom")
	many := func(failAt int) iter.Seq2[actions.Action, error] {
		return func(yield func(actions.Action, error) bool) {
			for _, a := range sampleState()[:2] {
				if !yield(a, nil) {
					return
				}
			}
			for i := 0; ; i++ {
				if i == failAt {
					yield(actions.Action{}, boom)
					return
				}
				if !yield(synthAdd(i), nil) {
					return
				}
			}
		}
	}
	t.Run("actions fail after several row groups", func(t *testing.T) {
		for _, newStore := range []func(t *testing.T) objstore.Store{
			func(*testing.T) objstore.Store { return objstore.NewMem() },
			func(t *testing.T) objstore.Store {
				s, err := objstore.NewLocal(t.TempDir())
				if err != nil {
					t.Fatal(err)
				}
				return s
			},
		} {
			store := newStore(t)
			_, err := Write(ctx, store, "_delta_log", 5, many(25000), WithRowGroupSize(1000))
			if !errors.Is(err, boom) {
				t.Fatalf("err %v, want boom", err)
			}
			assertEmpty(t, store)
		}
	})
	t.Run("put fails", func(t *testing.T) {
		inner := objstore.NewMem()
		store := objstore.Faulty(inner, objstore.FailNth(objstore.OpPut, 1, boom))
		_, err := Write(ctx, store, "_delta_log", 5, synthState(30000), WithRowGroupSize(1000))
		if !errors.Is(err, boom) || !errors.Is(err, objstore.ErrInjected) {
			t.Fatalf("err %v, want the injected fault", err)
		}
		assertEmpty(t, inner)
	})
	t.Run("context cancelled", func(t *testing.T) {
		store := objstore.NewMem()
		ctx, cancel := context.WithCancel(ctx)
		acts := func(yield func(actions.Action, error) bool) {
			for i, a := range sampleState() {
				if i == 3 {
					cancel()
				}
				if !yield(a, nil) {
					return
				}
			}
			for i := range 5000 {
				if !yield(synthAdd(i), nil) {
					return
				}
			}
		}
		if _, err := Write(ctx, store, "_delta_log", 5, acts, WithRowGroupSize(100)); !errors.Is(err, context.Canceled) {
			t.Fatalf("err %v, want context.Canceled", err)
		}
		assertEmpty(t, store)
	})
}

func assertEmpty(t *testing.T, s objstore.Store) {
	t.Helper()
	for info, err := range s.List(context.Background(), "", "") {
		if err != nil {
			t.Fatal(err)
		}
		t.Errorf("object %s left behind", info.Key)
	}
}

func synthAdd(i int) actions.Action {
	part := fmt.Sprintf("p%d", i%17)
	return actions.Action{Add: &actions.Add{
		Path:             fmt.Sprintf("part=%s/part-%08d-4f2a9c3e-1111-2222-3333-444455556666.snappy.parquet", part, i),
		PartitionValues:  map[string]*string{"part": &part},
		Size:             int64(1000 + i),
		ModificationTime: 1700000000000 + int64(i),
		Stats:            fmt.Sprintf(`{"numRecords":%d,"minValues":{"id":%d,"name":"a%d"},"maxValues":{"id":%d,"name":"z%d"},"nullCount":{"id":0,"name":0}}`, 100+i%50, i*100, i, i*100+99, i),
	}}
}

// peakAllocator tracks the largest amount of Arrow memory held at once.
type peakAllocator struct {
	*memory.CheckedAllocator
	mu   sync.Mutex
	peak int
}

func newPeakAllocator() *peakAllocator {
	return &peakAllocator{CheckedAllocator: memory.NewCheckedAllocator(memory.NewGoAllocator())}
}

func (p *peakAllocator) note() {
	p.mu.Lock()
	p.peak = max(p.peak, p.CurrentAlloc())
	p.mu.Unlock()
}

func (p *peakAllocator) Allocate(n int) []byte {
	b := p.CheckedAllocator.Allocate(n)
	p.note()
	return b
}

func (p *peakAllocator) Reallocate(n int, b []byte) []byte {
	b = p.CheckedAllocator.Reallocate(n, b)
	p.note()
	return b
}

func synthState(n int) iter.Seq2[actions.Action, error] {
	return func(yield func(actions.Action, error) bool) {
		for _, a := range sampleState()[:2] {
			if !yield(a, nil) {
				return
			}
		}
		for i := range n {
			if !yield(synthAdd(i), nil) {
				return
			}
		}
	}
}

// TestLargeCheckpointBoundedMemory writes and reads back checkpoints of
// 50k and 200k adds with the same row group size, and checks that the
// Arrow memory held at once does not grow with the number of actions.
func TestLargeCheckpointBoundedMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("large checkpoint")
	}
	ctx := context.Background()
	type peaks struct{ write, read int }
	var rowGroup int
	run := func(n int) peaks {
		store := objstore.NewMem()
		wmem := newPeakAllocator()
		lc, err := Write(ctx, store, "_delta_log", 100, synthState(n), WithRowGroupSize(rowGroup), WithAllocator(wmem))
		if err != nil {
			t.Fatal(err)
		}
		wmem.AssertSize(t, 0)
		if lc.Size != int64(n+2) || *lc.NumOfAddFiles != int64(n) {
			t.Fatalf("LastCheckpoint %+v", lc)
		}
		rmem := newPeakAllocator()
		i := 0
		for a, err := range Read(ctx, store, []Part{{Key: "_delta_log/" + ClassicName(100)}}, WithAllocator(rmem), WithConcurrency(2)) {
			if err != nil {
				t.Fatal(err)
			}
			if i >= 2 {
				want := synthAdd(i - 2).Add
				if a.Add == nil || a.Add.Path != want.Path || a.Add.Stats != want.Stats || *a.Add.PartitionValues["part"] != *want.PartitionValues["part"] {
					t.Fatalf("action %d: got %+v want %+v", i, a.Add, want)
				}
			}
			i++
		}
		if i != n+2 {
			t.Fatalf("read %d actions, want %d", i, n+2)
		}
		rmem.AssertSize(t, 0)
		t.Logf("%d adds: file %d bytes, peak Arrow memory write %d, read %d", n, *lc.SizeInBytes, wmem.peak, rmem.peak)
		return peaks{wmem.peak, rmem.peak}
	}
	n := 200000
	rowGroup = 5000
	if raceEnabled {
		n, rowGroup = n/8, rowGroup/8
	}
	small, large := run(n/4), run(n)
	if large.write > small.write*3/2 {
		t.Errorf("write memory grew with the table: %d for %d adds, %d for %d", small.write, n/4, large.write, n)
	}
	if large.read > small.read*3/2 {
		t.Errorf("read memory grew with the table: %d for %d adds, %d for %d", small.read, n/4, large.read, n)
	}
}

// sparkCheckpoints are Spark-written checkpoints to compare schemas with:
// Delta 3.x (parquet-mr 1.13.1) with deletion vectors and row tracking.
var sparkCheckpoints = []string{
	"checkpoint/delta/_delta_log/00000000000000000010.checkpoint.parquet",
	"basic-with-inserts-deletes-checkpoint/delta/_delta_log/00000000000000000010.checkpoint.parquet",
}

// TestWrittenSchemaMatchesSpark checks that every column Spark writes in a
// checkpoint is in ours at the same path with the same physical and
// logical type and repetition, and that ours has no other columns than
// the ones newer Spark versions write.
func TestWrittenSchemaMatchesSpark(t *testing.T) {
	gs := goldenStore(t)
	ctx := context.Background()
	store := objstore.NewMem()
	if _, err := Write(ctx, store, "", 1, seq(sampleState())); err != nil {
		t.Fatal(err)
	}
	ours := leafColumns(t, mustGet(t, store, ClassicName(1)))
	// Columns newer Spark (Delta 3.3+) writes and the corpus's older
	// Spark files lack.
	newer := map[string]bool{"add.clusteringProvider": true}
	for _, key := range sparkCheckpoints {
		spark := leafColumns(t, mustGet(t, gs, key))
		for path, desc := range spark {
			if got, ok := ours[path]; !ok {
				t.Errorf("%s: column %s (%s) missing from ours", key, path, desc)
			} else if got != desc {
				t.Errorf("%s: column %s is %s, Spark's is %s", key, path, got, desc)
			}
		}
		for path := range ours {
			if _, ok := spark[path]; !ok && !newer[strings.Join(strings.Split(path, ".")[:2], ".")] {
				t.Errorf("%s: our column %s is not in Spark's", key, path)
			}
		}
	}
}

func mustGet(t *testing.T, s objstore.Store, key string) []byte {
	t.Helper()
	b, err := s.Get(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// leafColumns describes each leaf column of a Parquet file by its dotted
// path: physical type, logical type and the repetition of every node on
// the path.
func leafColumns(t *testing.T, b []byte) map[string]string {
	t.Helper()
	r, err := file.NewParquetReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	out := map[string]string{}
	sc := r.MetaData().Schema
	for i := 0; i < sc.NumColumns(); i++ {
		c := sc.Column(i)
		var reps []string
		for n := schema.Node(c.SchemaNode()); n != nil && n.Parent() != nil; n = n.Parent() {
			reps = append([]string{n.RepetitionType().String()}, reps...)
		}
		logical := c.LogicalType().String()
		if logical == "Int(bitWidth=32, isSigned=true)" || logical == "Int(bitWidth=64, isSigned=true)" {
			// Arrow's writer annotates signed ints whose width is the
			// physical one; Spark leaves them bare. Readers take both
			// as int and long.
			logical = "None"
		}
		out[c.Path()] = fmt.Sprintf("%s %s %v", c.PhysicalType(), logical, reps)
	}
	return out
}

// TestWriteStatsAsStruct writes stats_parsed and partitionValues_parsed
// and reads them back as Arrow to check their types and values.
func TestWriteStatsAsStruct(t *testing.T) {
	ctx := context.Background()
	md := &actions.Metadata{
		ID:     "id",
		Format: actions.Format{Provider: "parquet"},
		SchemaString: `{"type":"struct","fields":[` +
			`{"name":"id","type":"long","nullable":true,"metadata":{}},` +
			`{"name":"name","type":"string","nullable":true,"metadata":{}},` +
			`{"name":"ok","type":"boolean","nullable":true,"metadata":{}},` +
			`{"name":"amount","type":"decimal(10,2)","nullable":true,"metadata":{}},` +
			`{"name":"ts","type":"timestamp","nullable":true,"metadata":{}},` +
			`{"name":"s","type":{"type":"struct","fields":[{"name":"d","type":"date","nullable":true,"metadata":{}},{"name":"tags","type":{"type":"array","elementType":"string","containsNull":true},"nullable":true,"metadata":{}}]},"nullable":true,"metadata":{}},` +
			`{"name":"day","type":"date","nullable":true,"metadata":{}},` +
			`{"name":"region","type":"string","nullable":true,"metadata":{}}]}`,
		PartitionColumns: []string{"day", "region"},
		Configuration:    map[string]string{"delta.checkpoint.writeStatsAsStruct": "true", "delta.enableDeletionVectors": "true"},
	}
	day, region := "2024-02-29", "eu"
	acts := []actions.Action{
		{Protocol: &actions.Protocol{MinReaderVersion: 1, MinWriterVersion: 2}},
		{Metadata: md},
		{Add: &actions.Add{Path: "a", PartitionValues: map[string]*string{"day": &day, "region": &region}, Size: 1,
			Stats: `{"numRecords":5,"minValues":{"id":-3,"name":"ab","amount":1.25,"ts":"2024-02-29T10:00:00.123Z","s":{"d":"2024-01-01"}},` +
				`"maxValues":{"id":9,"name":"zz","amount":99999999.99,"ts":"2024-02-29T11:00:00.000+01:00","s":{"d":"2024-12-31"}},` +
				`"nullCount":{"id":0,"name":1,"ok":2,"amount":0,"ts":0,"s":{"d":3,"tags":4}},"tightBounds":true}`}},
		{Add: &actions.Add{Path: "b", PartitionValues: map[string]*string{"day": nil, "region": nil}, Size: 2}},
		{Add: &actions.Add{Path: "c", PartitionValues: map[string]*string{"day": &day, "region": &region}, Size: 3,
			Stats: `{"numRecords":1,"minValues":{"id":"not a number"}}`}},
	}
	store := objstore.NewMem()
	if _, err := Write(ctx, store, "", 3, seq(acts), WithStatsAsStruct(tableOf(md))); err != nil {
		t.Fatal(err)
	}
	b := mustGet(t, store, ClassicName(3))
	cols := leafColumns(t, b)
	for path, want := range map[string]string{
		"add.partitionValues_parsed.day":        "INT32 Date",
		"add.partitionValues_parsed.region":     "BYTE_ARRAY String",
		"add.stats_parsed.numRecords":           "INT64",
		"add.stats_parsed.minValues.id":         "INT64",
		"add.stats_parsed.minValues.amount":     "FIXED_LEN_BYTE_ARRAY Decimal(precision=10, scale=2)",
		"add.stats_parsed.maxValues.ts":         "INT64 Timestamp(isAdjustedToUTC=true, timeUnit=microseconds",
		"add.stats_parsed.minValues.s.d":        "INT32 Date",
		"add.stats_parsed.nullCount.ok":         "INT64",
		"add.stats_parsed.nullCount.s.tags":     "INT64",
		"add.stats_parsed.tightBounds":          "BOOLEAN",
		"add.stats_parsed.nullCount.s.d":        "INT64",
		"add.stats_parsed.maxValues.name":       "BYTE_ARRAY String",
		"add.stats_parsed.minValues.ok":         "",
		"add.stats_parsed.minValues.day":        "",
		"add.stats_parsed.minValues.s.tags":     "",
		"add.partitionValues_parsed.amount":     "",
		"add.stats_parsed.nullCount.region":     "",
		"add.stats_parsed.maxValues.s.tags.foo": "",
	} {
		got, ok := cols[path]
		if want == "" {
			if ok {
				t.Errorf("unexpected column %s", path)
			}
			continue
		}
		if !ok || !strings.HasPrefix(got, want) {
			t.Errorf("column %s: %q, want prefix %q", path, got, want)
		}
	}

	// The values, through Arrow.
	rdr, err := file.NewParquetReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	defer rdr.Close()
	fr, err := pqarrow.NewFileReader(rdr, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := fr.ReadTable(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Release()
	idx := tbl.Schema().FieldIndices("add")[0]
	add := tbl.Column(idx).Data().Chunk(0).(*array.Struct)
	js, err := add.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	var rows []map[string]any
	if err := json.Unmarshal(js, &rows); err != nil {
		t.Fatal(err)
	}
	get := func(row int, path ...string) any {
		var v any = rows[row]
		for _, p := range path {
			m, _ := v.(map[string]any)
			v = m[p]
		}
		return v
	}
	for _, c := range []struct {
		row  int
		path string
		want any
	}{
		{2, "stats_parsed.numRecords", 5.0},
		{2, "stats_parsed.minValues.id", -3.0},
		{2, "stats_parsed.minValues.name", "ab"},
		{2, "stats_parsed.minValues.amount", "1.25"},
		{2, "stats_parsed.maxValues.amount", "99999999.99"},
		{2, "stats_parsed.minValues.ts", "2024-02-29T10:00:00.123Z"},
		{2, "stats_parsed.maxValues.ts", "2024-02-29T10:00:00Z"},
		{2, "stats_parsed.minValues.s.d", "2024-01-01"},
		{2, "stats_parsed.nullCount.s.tags", 4.0},
		{2, "stats_parsed.nullCount.ok", 2.0},
		{2, "stats_parsed.tightBounds", true},
		{2, "partitionValues_parsed.day", "2024-02-29"},
		{2, "partitionValues_parsed.region", "eu"},
		{3, "stats_parsed", nil},
		{3, "partitionValues_parsed.day", nil},
		{4, "stats_parsed.numRecords", 1.0},
		{4, "stats_parsed.minValues.id", nil},
		{4, "stats_parsed.maxValues", nil},
		{0, "stats_parsed", nil},
	} {
		if got := get(c.row, strings.Split(c.path, ".")...); !reflect.DeepEqual(got, c.want) {
			t.Errorf("row %d %s = %#v, want %#v", c.row, c.path, got, c.want)
		}
	}
	// Readers skip the parsed columns; the JSON stats are unchanged.
	got := readAll(t, store, []Part{{Key: ClassicName(3)}})
	if dump(got) != dump(acts) {
		t.Errorf("read back:\n%s\nwant\n%s", dump(got), dump(acts))
	}
}

// TestStatsAsStructNamedColumns: delta.dataSkippingStatsColumns, parsed
// as Spark parses it (backquoted names may hold dots and commas; paths
// match in any case), picks the stats_parsed columns; set to nothing, it
// picks none.
func TestStatsAsStructNamedColumns(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		spec     string
		has, not []string
	}{
		{"`x,y`, S.y", []string{"x,y", "s.y"}, []string{"s.x", "c", "a.b"}},
		{" `a.b` ", []string{"a.b"}, []string{"x,y", "s.y", "s.x", "c"}},
		{"s", []string{"s.x", "s.y"}, []string{"x,y", "c", "a.b"}},
		{"", nil, []string{"x,y", "s.x", "s.y", "c", "a.b"}},
	} {
		md := &actions.Metadata{
			ID:     "id",
			Format: actions.Format{Provider: "parquet"},
			SchemaString: `{"type":"struct","fields":[` +
				`{"name":"x,y","type":"long","nullable":true,"metadata":{}},` +
				`{"name":"a.b","type":"long","nullable":true,"metadata":{}},` +
				`{"name":"s","type":{"type":"struct","fields":[{"name":"x","type":"long","nullable":true,"metadata":{}},{"name":"y","type":"long","nullable":true,"metadata":{}}]},"nullable":true,"metadata":{}},` +
				`{"name":"c","type":"long","nullable":true,"metadata":{}}]}`,
			PartitionColumns: []string{},
			Configuration:    map[string]string{"delta.dataSkippingStatsColumns": c.spec},
		}
		acts := []actions.Action{
			{Protocol: &actions.Protocol{MinReaderVersion: 1, MinWriterVersion: 2}},
			{Metadata: md},
			{Add: &actions.Add{Path: "a", Size: 1, Stats: `{"numRecords":1}`}},
		}
		store := objstore.NewMem()
		if _, err := Write(ctx, store, "", 1, seq(acts), WithStatsAsStruct(tableOf(md))); err != nil {
			t.Fatal(err)
		}
		cols := leafColumns(t, mustGet(t, store, ClassicName(1)))
		for _, col := range c.has {
			if _, ok := cols["add.stats_parsed.minValues."+col]; !ok {
				t.Errorf("%q: no stats column %s", c.spec, col)
			}
		}
		for _, col := range c.not {
			if _, ok := cols["add.stats_parsed.nullCount."+col]; ok {
				t.Errorf("%q: stats column %s", c.spec, col)
			}
		}
	}
}

// TestReadStatsFromStruct: a checkpoint written without the stats column
// (writeStatsAsJson=false) reads back with stats rendered from
// stats_parsed, equal in value to the original JSON.
func TestReadStatsFromStruct(t *testing.T) {
	ctx := context.Background()
	md := &actions.Metadata{
		ID: "id", Format: actions.Format{Provider: "parquet"},
		SchemaString: `{"type":"struct","fields":[` +
			`{"name":"id","type":"long","nullable":true,"metadata":{}},` +
			`{"name":"x","type":"double","nullable":true,"metadata":{}},` +
			`{"name":"amount","type":"decimal(10,2)","nullable":true,"metadata":{}},` +
			`{"name":"ts","type":"timestamp","nullable":true,"metadata":{}},` +
			`{"name":"ntz","type":"timestamp_ntz","nullable":true,"metadata":{}},` +
			`{"name":"s","type":{"type":"struct","fields":[{"name":"d","type":"date","nullable":true,"metadata":{}}]},"nullable":true,"metadata":{}}]}`,
	}
	stats := `{"numRecords":5,"minValues":{"id":-3,"x":0.5,"amount":1.25,"ts":"2024-02-29T10:00:00.123Z","ntz":"2024-02-29T10:00:00.000","s":{"d":"2024-01-01"}},` +
		`"maxValues":{"id":9,"x":2.5,"amount":99.9,"ts":"2024-02-29T11:00:00.000001Z","ntz":"2024-03-01T00:00:00.000","s":{"d":"2024-12-31"}},` +
		`"nullCount":{"id":0,"x":1,"amount":0,"ts":0,"ntz":2,"s":{"d":3}}}`
	acts := []actions.Action{
		{Protocol: &actions.Protocol{MinReaderVersion: 1, MinWriterVersion: 2}},
		{Metadata: md},
		{Add: &actions.Add{Path: "a", Size: 1, Stats: stats}},
		{Add: &actions.Add{Path: "b", Size: 2}},
	}
	store := objstore.NewMem()
	if _, err := Write(ctx, store, "", 3, seq(acts), WithStatsAsStruct(tableOf(md)), WithoutStatsJSON()); err != nil {
		t.Fatal(err)
	}
	got := readAll(t, store, []Part{{Key: ClassicName(3)}})
	if got[3].Add.Stats != "" {
		t.Errorf("file without stats got %q", got[3].Add.Stats)
	}
	want, err := actions.ParseStats(stats)
	if err != nil {
		t.Fatal(err)
	}
	have, err := actions.ParseStats(got[2].Add.Stats)
	if err != nil {
		t.Fatalf("rendered stats %q: %v", got[2].Add.Stats, err)
	}
	schema, _ := actions.ParseSchema(md.SchemaString)
	if have.NumRecords != want.NumRecords || !reflect.DeepEqual(have.NullCount, want.NullCount) {
		t.Errorf("rendered %s, want %s", got[2].Add.Stats, stats)
	}
	for _, bound := range []struct{ have, want map[string]any }{{have.MinValues, want.MinValues}, {have.MaxValues, want.MaxValues}} {
		for _, f := range schema.Fields {
			typ, h, w := f.Type, bound.have[f.Name], bound.want[f.Name]
			if st, ok := typ.(*actions.StructType); ok {
				typ, h, w = st.Fields[0].Type, h.(map[string]any)["d"], w.(map[string]any)["d"]
			}
			hv, err1 := actions.ParseStatValue(typ, h)
			wv, err2 := actions.ParseStatValue(typ, w)
			if err1 != nil || err2 != nil || fmt.Sprint(hv) != fmt.Sprint(wv) {
				t.Errorf("%s: rendered %v (%v), want %v (%v)", f.Name, h, err1, w, err2)
			}
		}
	}
	if !strings.Contains(got[2].Add.Stats, `"ts":"2024-02-29T10:00:00.123Z"`) || !strings.Contains(got[2].Add.Stats, `"ntz":"2024-02-29T10:00:00.000"`) {
		t.Errorf("timestamps rendered as %s", got[2].Add.Stats)
	}
}

func TestTableOptions(t *testing.T) {
	md := &actions.Metadata{Configuration: map[string]string{}}
	for _, c := range []struct {
		conf             map[string]string
		statsJSON, typed bool
	}{
		{conf: nil, statsJSON: true},
		{conf: map[string]string{"delta.checkpoint.writeStatsAsStruct": "true"}, statsJSON: true, typed: true},
		{conf: map[string]string{"delta.checkpoint.writeStatsAsJson": "false", "delta.checkpoint.writeStatsAsStruct": "TRUE"}, typed: true},
		// An invalid value is the default (snapshots refuse writes to
		// such a table; a checkpoint of one keeps the protocol's default).
		{conf: map[string]string{"delta.checkpoint.writeStatsAsJson": "maybe"}, statsJSON: true},
	} {
		md.Configuration = c.conf
		opts := TableOptions(tableOf(md))
		cfg := writeConfig{statsJSON: true}
		for _, o := range opts {
			o.applyWrite(&cfg)
		}
		if cfg.statsJSON != c.statsJSON || (cfg.parsed != nil) != c.typed {
			t.Errorf("%v: statsJSON %v, typed %v", c.conf, cfg.statsJSON, cfg.parsed != nil)
		}
	}
}
