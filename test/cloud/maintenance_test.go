package cloud

import (
	"bytes"
	"fmt"
	"iter"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	s3sdk "github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/maintenance"
	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/objstore/azure"
	"github.com/lakelog/lakelog/objstore/cloudtest"
	"github.com/lakelog/lakelog/objstore/gcs"
	"github.com/lakelog/lakelog/objstore/s3"
	"github.com/lakelog/lakelog/reader"
	"github.com/lakelog/lakelog/writer"
)

// TestMaintenanceS3, TestMaintenanceGCS and TestMaintenanceAzure run
// OPTIMIZE, Z-order, RESTORE and VACUUM on a table in the real emulator
// (MinIO, fake-gcs-server, Azurite), reading and writing through the
// object-store data path: a table of many small files in four
// partitions is compacted, Z-ordered and restored, the rows checked after
// each step; then a crashed writer's files are dropped beside it and
// VACUUM deletes exactly the files no version references, listing the
// table in ranges and deleting in batches (on S3 the proxy in front of
// MinIO sees DeleteObjects requests and no single deletes of data files).
func TestMaintenanceS3(t *testing.T) {
	upstream := cloudtest.Require(t, "AWS_ENDPOINT_URL", "MinIO")
	ctx := t.Context()
	var batchDeletes, singleDeletes atomic.Int64
	proxy := cloudtest.NewProxy(t, upstream, func(w http.ResponseWriter, r *http.Request, forward cloudtest.Forward) {
		switch {
		case r.Method == http.MethodPost && r.URL.Query().Has("delete"):
			batchDeletes.Add(1)
		case r.Method == http.MethodDelete && !strings.Contains(r.URL.Path, "_delta_log"):
			singleDeletes.Add(1)
		}
		resp, err := forward(r)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		for k, v := range resp.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(resp.StatusCode)
		var buf bytes.Buffer
		buf.ReadFrom(resp.Body)
		w.Write(buf.Bytes())
	})
	bucket := cloudtest.Name("lakelog-maint-")
	st, err := s3.New(ctx, bucket, "tbl", s3.WithEndpoint(proxy.URL))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Client().CreateBucket(ctx, &s3sdk.CreateBucketInput{Bucket: &bucket}); err != nil {
		t.Fatal(err)
	}
	runMaintenance(t, st)
	t.Logf("%d DeleteObjects requests, %d single deletes of data files", batchDeletes.Load(), singleDeletes.Load())
	if batchDeletes.Load() == 0 || singleDeletes.Load() != 0 {
		t.Fatalf("VACUUM sent %d DeleteObjects and %d single deletes of data files; want batches only", batchDeletes.Load(), singleDeletes.Load())
	}
}

func TestMaintenanceGCS(t *testing.T) {
	cloudtest.Require(t, "STORAGE_EMULATOR_HOST", "fake-gcs-server")
	st, err := gcs.New(t.Context(), "lakelog", cloudtest.Name("maint-"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	runMaintenance(t, st)
}

func TestMaintenanceAzure(t *testing.T) {
	cloudtest.Require(t, "AZURE_STORAGE_CONNECTION_STRING", "Azurite")
	ctx := t.Context()
	name := cloudtest.Name("lakelog-maint-")
	st, err := azure.New(ctx, name, "tbl")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Container().Create(ctx, nil); err != nil {
		t.Fatal(err)
	}
	runMaintenance(t, st)
}

const maintRows = 24_000

var maintSchema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "v", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "p", Type: arrow.BinaryTypes.String, Nullable: true},
}, nil)

// maintBatches yields rows [lo, hi): v and s derive from id, p is one of
// four partitions.
func maintBatches(lo, hi int64) iter.Seq2[arrow.RecordBatch, error] {
	return func(yield func(arrow.RecordBatch, error) bool) {
		for start := lo; start < hi; start += 1000 {
			b := array.NewRecordBuilder(memory.DefaultAllocator, maintSchema)
			for id := start; id < min(start+1000, hi); id++ {
				b.Field(0).(*array.Int64Builder).Append(id)
				b.Field(1).(*array.Float64Builder).Append(float64(id*7919%1000) / 10)
				b.Field(2).(*array.StringBuilder).Append(fmt.Sprintf("s%05d", id*31%maintRows))
				b.Field(3).(*array.StringBuilder).Append(fmt.Sprintf("p%d", id%4))
			}
			rec := b.NewRecordBatch()
			b.Release()
			ok := yield(rec, nil)
			rec.Release()
			if !ok {
				return
			}
		}
	}
}

// maintRowsOf scans snap and returns its rows, one string each, sorted.
func maintRowsOf(t *testing.T, snap *deltalog.Snapshot) []string {
	t.Helper()
	sc, err := reader.NewScan(snap, reader.WithColumns("id", "v", "s", "p"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for rec, err := range sc.Records(t.Context()) {
		if err != nil {
			t.Fatalf("scan: %v", err)
		}
		ids, vs := rec.Column(0).(*array.Int64), rec.Column(1).(*array.Float64)
		ss, ps := rec.Column(2).(*array.String), rec.Column(3).(*array.String)
		for i := range int(rec.NumRows()) {
			out = append(out, fmt.Sprintf("%d/%g/%s/%s", ids.Value(i), vs.Value(i), ss.Value(i), ps.Value(i)))
		}
	}
	slices.Sort(out)
	return out
}

func runMaintenance(t *testing.T, st objstore.Store) {
	ctx := t.Context()
	schema, err := actions.ParseDDL("id long, v double, s string, p string")
	if err != nil {
		t.Fatal(err)
	}
	ss, err := actions.SchemaString(schema)
	if err != nil {
		t.Fatal(err)
	}
	md := &actions.Metadata{SchemaString: ss, PartitionColumns: []string{"p"}}
	small := writer.WithTargetFileSize(16 << 10)
	res, err := writer.CreateTable(ctx, st, "", md, maintBatches(0, maintRows/2), small)
	if err != nil {
		t.Fatal(err)
	}
	snap, err := res.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	if res, err = writer.Append(ctx, snap, maintBatches(maintRows/2, maintRows), small); err != nil {
		t.Fatal(err)
	}
	appended := res.Version
	snap = openMaint(t, st)
	want := maintRowsOf(t, snap)
	if len(want) != maintRows || snap.NumFiles() < 16 {
		t.Fatalf("the table has %d rows in %d files, want %d rows in many files", len(want), snap.NumFiles(), maintRows)
	}
	before := snap.NumFiles()

	opt, err := maintenance.Optimize(ctx, snap, maintenance.TargetSize(1<<20))
	if err != nil {
		t.Fatalf("OPTIMIZE: %v", err)
	}
	snap = openMaint(t, st)
	if got := maintRowsOf(t, snap); !slices.Equal(got, want) {
		t.Fatalf("OPTIMIZE changed the rows: %d rows, want %d", len(got), len(want))
	}
	if opt.Metrics.NumRemovedFiles < int64(before/2) || snap.NumFiles() > 8 {
		t.Fatalf("OPTIMIZE removed %d of %d files, %d left", opt.Metrics.NumRemovedFiles, before, snap.NumFiles())
	}

	if _, err := maintenance.Optimize(ctx, snap, maintenance.TargetSize(1<<20), maintenance.ZOrderBy("id", "v")); err != nil {
		t.Fatalf("Z-order: %v", err)
	}
	snap = openMaint(t, st)
	if got := maintRowsOf(t, snap); !slices.Equal(got, want) {
		t.Fatal("Z-order changed the rows")
	}
	zordered := 0
	for _, f := range snap.ActiveFiles().All() {
		if f.Tags(f.Row)["lakelog.zOrderBy"] != "" {
			zordered++
		}
	}
	if zordered != snap.NumFiles() {
		t.Fatalf("%d of %d files carry the Z-order tag", zordered, snap.NumFiles())
	}

	// RESTORE to the version before the append: half the rows.
	rres, err := maintenance.Restore(ctx, snap, maintenance.ToVersion(appended-1))
	if err != nil {
		t.Fatalf("RESTORE: %v", err)
	}
	snap = openMaint(t, st)
	if got := maintRowsOf(t, snap); len(got) != maintRows/2 || rres.Metrics.NumRestoredFiles == 0 {
		t.Fatalf("RESTORE: %d rows, %d files restored; want %d rows", len(got), rres.Metrics.NumRestoredFiles, maintRows/2)
	}
	restored := maintRowsOf(t, snap)

	// A crashed writer's files, beside the live ones and at the root.
	var orphans []string
	for i := range 40 {
		k := fmt.Sprintf("p=p%d/part-crashed-%03d.parquet", i%4, i)
		if i%10 == 0 {
			k = fmt.Sprintf("part-crashed-%03d.parquet", i)
		}
		if err := st.Put(ctx, k, strings.NewReader("crashed"), objstore.PutOptions{}); err != nil {
			t.Fatal(err)
		}
		orphans = append(orphans, k)
	}
	live := map[string]bool{}
	for _, f := range snap.ActiveFiles().All() {
		live[snap.TablePath(f.Path())] = true
	}
	var expect []string
	for o, err := range st.List(ctx, "", "") {
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(o.Key, "_delta_log/") && !live[o.Key] {
			expect = append(expect, o.Key)
		}
	}
	later := func() time.Time { return time.Now().Add(time.Hour) }
	vres, err := maintenance.Vacuum(ctx, snap, maintenance.Retain(0), maintenance.Force(), maintenance.VacuumClock(later), maintenance.VacuumConcurrency(4))
	if err != nil {
		t.Fatalf("VACUUM: %v", err)
	}
	var deleted []string
	for _, f := range vres.Files {
		deleted = append(deleted, f.Key)
	}
	if !slices.Equal(deleted, expect) {
		t.Fatalf("VACUUM deleted %d files, want the %d unreferenced:\n got %q\nwant %q", len(deleted), len(expect), deleted, expect)
	}
	for _, o := range orphans {
		if !slices.Contains(deleted, o) {
			t.Fatalf("VACUUM kept the crashed writer's %s", o)
		}
	}
	var left []string
	for o, err := range st.List(ctx, "", "") {
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(o.Key, "_delta_log/") {
			left = append(left, o.Key)
		}
	}
	if len(left) != len(live) {
		t.Fatalf("after VACUUM %d data files are left, want the %d live ones", len(left), len(live))
	}
	if got := maintRowsOf(t, openMaint(t, st)); !slices.Equal(got, restored) {
		t.Fatal("VACUUM changed the rows")
	}
	t.Logf("%d small files compacted into %d; %d restored; VACUUM deleted %d files (%d of a crashed writer), %d live left",
		before, opt.Metrics.NumAddedFiles, rres.Metrics.NumRestoredFiles, len(deleted), len(orphans), len(left))
}

func openMaint(t *testing.T, st objstore.Store) *deltalog.Snapshot {
	t.Helper()
	snap, err := deltalog.Open(t.Context(), st, "", deltalog.WithStats())
	if err != nil {
		t.Fatal(err)
	}
	return snap
}
