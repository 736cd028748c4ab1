package uniform_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/reader"
	"github.com/lakelog/lakelog/test/tabletest"
	"github.com/lakelog/lakelog/uniform"
)

// uniformProps are the properties of a UniForm table, as `lakelog create
// --uniform iceberg` sets them.
var uniformProps = map[string]string{
	actions.PropColumnMappingMode:             actions.ColumnMappingName,
	actions.PropEnableIcebergCompatV2:         "true",
	actions.PropUniversalFormatEnabledFormats: "iceberg",
}

const testSchema = "id long not null, name string, score double, day date, at timestamp, amount decimal(12,3), ok boolean"

// localTable creates a UniForm table in a temporary folder.
func localTable(t *testing.T, schema string, parts ...string) objstore.Store {
	t.Helper()
	store, err := objstore.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	tabletest.Create(t, store, schema, uniformProps, parts...)
	return store
}

func randomRows(r *rand.Rand, next *int64, n int) string {
	var b strings.Builder
	b.WriteString("[")
	for i := range n {
		if i > 0 {
			b.WriteString(",")
		}
		*next++
		name := `null`
		if r.IntN(5) > 0 {
			name = fmt.Sprintf("%q", fmt.Sprintf("n%d-%s", r.IntN(100), strings.Repeat("x", r.IntN(40))))
		}
		fmt.Fprintf(&b, `{"id": %d, "name": %s, "score": %g, "day": "2024-0%d-1%d", "at": "2024-03-0%dT10:%02d:00.123456Z", "amount": "%d.%03d", "ok": %t}`,
			*next, name, r.Float64()*100, 1+r.IntN(9), r.IntN(10), 1+r.IntN(9), r.IntN(60), r.IntN(100000)-5000, r.IntN(1000), r.IntN(2) == 0)
	}
	b.WriteString("]")
	return b.String()
}

// icebergLines reads the Iceberg table at metadata with iceberg-go (at
// a snapshot when id is not nil), rows in lakelog's canonical form.
func icebergLines(t *testing.T, metadata string, id *int64) ([]string, table.Metadata) {
	t.Helper()
	ctx := context.Background()
	fs := func(context.Context) (icebergio.IO, error) { return icebergio.LocalFS{}, nil }
	tbl, err := table.NewFromLocation(ctx, []string{"t"}, metadata, fs, nil)
	if err != nil {
		t.Fatalf("iceberg-go opens %s: %v", metadata, err)
	}
	var opts []table.ScanOption
	if id != nil {
		opts = append(opts, table.WithSnapshotID(*id))
	}
	at, err := tbl.Scan(opts...).ToArrowTable(ctx)
	if err != nil {
		t.Fatalf("iceberg-go scans %s: %v", metadata, err)
	}
	defer at.Release()
	tr := array.NewTableReader(at, 1024)
	defer tr.Release()
	var lines []string
	for tr.Next() {
		rows, err := reader.CanonicalRows(normalize(t, tr.RecordBatch()))
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			lines = append(lines, string(r))
		}
	}
	slices.Sort(lines)
	return lines, tbl.Metadata()
}

// normalize turns iceberg-go's column types into the table's Arrow
// types where they differ only in representation (large or view
// strings).
func normalize(t *testing.T, rec arrow.RecordBatch) arrow.RecordBatch {
	t.Helper()
	cols := make([]arrow.Array, rec.NumCols())
	fields := make([]arrow.Field, rec.NumCols())
	for i, c := range rec.Columns() {
		f := rec.Schema().Field(i)
		switch c.DataType().ID() {
		case arrow.LARGE_STRING, arrow.STRING_VIEW:
			b := array.NewStringBuilder(nil)
			for j := range c.Len() {
				if c.IsNull(j) {
					b.AppendNull()
				} else {
					b.Append(c.ValueStr(j))
				}
			}
			cols[i] = b.NewArray()
			f.Type = arrow.BinaryTypes.String
		default:
			c.Retain()
			cols[i] = c
		}
		fields[i] = f
	}
	return array.NewRecordBatch(arrow.NewSchema(fields, nil), cols, rec.NumRows())
}

func sync(t *testing.T, store objstore.Store) *uniform.Result {
	t.Helper()
	res, err := uniform.Sync(context.Background(), store, tabletest.Root)
	if err != nil {
		t.Fatalf("uniform.Sync: %v", err)
	}
	return res
}

// TestAppendsReadByIcebergGo: each append, converted, is read by
// iceberg-go with exactly lakelog's rows, at the latest snapshot and at
// every earlier one (each Delta commit is one Iceberg snapshot).
func TestAppendsReadByIcebergGo(t *testing.T) {
	store := localTable(t, testSchema)
	r := rand.New(rand.NewPCG(1, 2))
	var next int64
	res := sync(t, store)
	if res.To != 0 || res.Snapshots != 0 || !res.Full || res.MetadataLocation == "" {
		t.Fatalf("first sync of an empty table: %+v", res)
	}
	want := map[int64][]string{} // Delta version -> rows
	for v := int64(1); v <= 4; v++ {
		snap := tabletest.AppendTo(t, store, randomRows(r, &next, 1+r.IntN(50)))
		res := sync(t, store)
		if res.From != v-1 || res.To != v || res.Snapshots != 1 || res.Full || res.ManifestsWritten != 1 || res.ManifestsRead != 0 {
			t.Fatalf("sync after version %d: %+v", v, res)
		}
		want[v] = tabletest.ScanLines(t, snap)
		got, md := icebergLines(t, res.MetadataLocation, nil)
		tabletest.DiffLines(t, fmt.Sprintf("iceberg-go rows at Delta version %d", v), got, want[v])
		if p := md.Properties()[uniform.PropDeltaVersion]; p != fmt.Sprint(v) {
			t.Fatalf("delta-version = %q, want %d", p, v)
		}
	}
	// Time travel by snapshot id: the snapshot of each Delta version.
	res = sync(t, store)
	if res.Snapshots != 0 || res.MetadataLocation != "" {
		t.Fatalf("a second sync of the same version did something: %+v", res)
	}
	_, md := icebergLines(t, metadataOf(t, store), nil)
	for _, s := range md.Snapshots() {
		v := s.Summary.Properties[uniform.PropDeltaVersion]
		var dv int64
		fmt.Sscan(v, &dv)
		got, _ := icebergLines(t, metadataOf(t, store), &s.SnapshotID)
		tabletest.DiffLines(t, "iceberg-go rows of the snapshot of Delta version "+v, got, want[dv])
	}
	if len(md.Snapshots()) != 4 {
		t.Fatalf("%d snapshots, want 4", len(md.Snapshots()))
	}
}

// metadataOf is the newest metadata file's URI.
func metadataOf(t *testing.T, store objstore.Store) string {
	t.Helper()
	var last string
	for o, err := range store.List(context.Background(), tabletest.Root+"/metadata/v", "") {
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(o.Key, ".metadata.json") && (len(o.Key) > len(last) || (len(o.Key) == len(last) && o.Key > last)) {
			last = o.Key
		}
	}
	return "file://" + objstore.Location(store) + "/" + last
}

// TestSyncCatchesUp: versions committed without conversion are caught
// up commit by commit, or from the snapshot past WithMaxCommits.
func TestSyncCatchesUp(t *testing.T) {
	store := localTable(t, testSchema)
	r := rand.New(rand.NewPCG(3, 4))
	var next int64
	tabletest.AppendTo(t, store, randomRows(r, &next, 10))
	sync(t, store)
	for range 3 {
		tabletest.AppendTo(t, store, randomRows(r, &next, 10))
	}
	res := sync(t, store)
	if res.From != 1 || res.To != 4 || res.Snapshots != 3 || res.Full {
		t.Fatalf("catch-up: %+v", res)
	}
	for range 3 {
		tabletest.AppendTo(t, store, randomRows(r, &next, 10))
	}
	snap := tabletest.Open(t, store)
	res, err := uniform.Convert(context.Background(), snap, uniform.WithMaxCommits(2))
	if err != nil {
		t.Fatal(err)
	}
	if res.From != 4 || res.To != 7 || res.Snapshots != 1 || !res.Full {
		t.Fatalf("catch-up past the bound: %+v", res)
	}
	got, _ := icebergLines(t, res.MetadataLocation, nil)
	tabletest.DiffLines(t, "iceberg-go rows after a full conversion", got, tabletest.ScanLines(t, snap))
}

// TestNotEnabled: a table without UniForm is refused, and nothing is
// written.
func TestNotEnabled(t *testing.T) {
	store := objstore.NewMem()
	tabletest.Create(t, store, "id long", nil)
	if _, err := uniform.Sync(context.Background(), store, tabletest.Root); err != uniform.ErrNotEnabled {
		t.Fatalf("Sync of a plain table: %v", err)
	}
}

// TestCreateRefusesNonCompliant: the table properties that IcebergCompat
// rules out are refused at create, naming the rule.
func TestCreateRefusesNonCompliant(t *testing.T) {
	cases := []struct {
		props map[string]string
		want  string
	}{
		{map[string]string{actions.PropUniversalFormatEnabledFormats: "iceberg"}, "delta.enableIcebergCompatV2=true"},
		{map[string]string{actions.PropEnableIcebergCompatV2: "true", actions.PropUniversalFormatEnabledFormats: "iceberg"}, "needs column mapping"},
		{map[string]string{actions.PropEnableIcebergCompatV2: "true", actions.PropColumnMappingMode: "name", actions.PropEnableDeletionVectors: "true"}, "forbids deletion vectors"},
	}
	for _, c := range cases {
		md := &actions.Metadata{SchemaString: `{"type":"struct","fields":[{"name":"id","type":"long","nullable":true,"metadata":{}}]}`, Configuration: c.props}
		tx, err := deltalog.Create(objstore.NewMem(), "t", md)
		if err == nil {
			_, err = tx.Commit(context.Background())
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("create with %v: %v, want an error saying %q", c.props, err, c.want)
		}
	}
}
