package cloud

import (
	"context"
	"fmt"
	"os"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	icebergio "github.com/apache/iceberg-go/io"
	_ "github.com/apache/iceberg-go/io/gocloud/gcs" // gs:// for iceberg-go
	_ "github.com/apache/iceberg-go/io/gocloud/s3"  // s3:// for iceberg-go
	"github.com/apache/iceberg-go/table"
	s3sdk "github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/dml"
	"github.com/lakelog/lakelog/expr"
	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/objstore/cloudtest"
	"github.com/lakelog/lakelog/objstore/gcs"
	"github.com/lakelog/lakelog/objstore/s3"
	"github.com/lakelog/lakelog/reader"
	"github.com/lakelog/lakelog/uniform"
	"github.com/lakelog/lakelog/writer"
)

// TestUniformS3: a UniForm table on MinIO, appended to and deleted from,
// converted after each commit; iceberg-go opens the s3:// metadata on
// MinIO and reads exactly lakelog's rows.
func TestUniformS3(t *testing.T) {
	endpoint := cloudtest.Require(t, "AWS_ENDPOINT_URL", "MinIO")
	ctx := t.Context()
	bucket := cloudtest.Name("lakelog-uniform-")
	st, err := s3.New(ctx, bucket, "tbl")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Client().CreateBucket(ctx, &s3sdk.CreateBucketInput{Bucket: &bucket}); err != nil {
		t.Fatal(err)
	}
	props := map[string]string{
		icebergio.S3EndpointURL: endpoint, icebergio.S3Region: os.Getenv("AWS_REGION"),
		icebergio.S3AccessKeyID: os.Getenv("AWS_ACCESS_KEY_ID"), icebergio.S3SecretAccessKey: os.Getenv("AWS_SECRET_ACCESS_KEY"),
		icebergio.S3ForceVirtualAddressing: "false",
	}
	runUniformCloud(t, st, fmt.Sprintf("s3://%s/tbl", bucket), props)
}

// TestUniformGCS: the same on fake-gcs-server, read back through
// iceberg-go's GCS IO.
func TestUniformGCS(t *testing.T) {
	host := cloudtest.Require(t, "STORAGE_EMULATOR_HOST", "fake-gcs-server")
	prefix := cloudtest.Name("uniform-")
	st, err := gcs.New(t.Context(), "lakelog", prefix)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	props := map[string]string{icebergio.GCSEndpoint: "http://" + host + "/storage/v1/", icebergio.GCSNoAuth: "true"}
	runUniformCloud(t, st, "gs://lakelog/"+prefix, props)
}

// runUniformCloud creates a UniForm table in st (at location), appends
// and deletes; each commit's post-commit hook (registered by importing
// uniform) converts it, so that uniform.Sync then has nothing to do; each
// conversion is read back with iceberg-go under props.
func runUniformCloud(t *testing.T, st objstore.Store, location string, props map[string]string) {
	ctx := t.Context()
	var err error
	schema, _ := actions.ParseDDL("id long, v double, s string, p string")
	ss, _ := actions.SchemaString(schema)
	md := &actions.Metadata{SchemaString: ss, Configuration: map[string]string{
		actions.PropColumnMappingMode: "name", actions.PropEnableIcebergCompatV2: "true", actions.PropUniversalFormatEnabledFormats: "iceberg",
	}}
	cres, err := writer.CreateTable(ctx, st, "", md, maintBatches(0, 1000))
	if err != nil {
		t.Fatal(err)
	}
	var metadata string
	step := func(what string, commit *deltalog.CommitResult) {
		t.Helper()
		if err := commit.WaitHooks(); err != nil {
			t.Fatalf("%s: post-commit hooks: %v", what, err)
		}
		res, err := uniform.Sync(ctx, st, "")
		if err != nil {
			t.Fatalf("%s: uniform.Sync: %v", what, err)
		}
		if res.MetadataLocation != "" {
			t.Fatalf("%s: uniform.Sync converted %+v; the commit's hook should have", what, res)
		}
		snap, err := deltalog.Open(ctx, st, "")
		if err != nil {
			t.Fatal(err)
		}
		metadata = fmt.Sprintf("%s/metadata/v%d.metadata.json", location, snap.Version()+1)
		got := icebergCloudRows(t, props, metadata)
		want := lakelogRows(t, snap)
		if !slices.Equal(got, want) {
			t.Fatalf("%s: iceberg-go read %d rows from %s, lakelog %d", what, len(got), metadata, len(want))
		}
	}
	step("create", cres)
	snap, _ := deltalog.Open(ctx, st, "")
	ares, err := writer.Append(ctx, snap, maintBatches(1000, 1500))
	if err != nil {
		t.Fatal(err)
	}
	step("append", ares)
	snap, _ = deltalog.Open(ctx, st, "")
	pred, _ := expr.Parse("id % 7 = 0")
	dres, err := dml.Delete(ctx, snap, pred)
	if err != nil {
		t.Fatal(err)
	}
	step("delete", dres.CommitResult)
	if want := location + "/metadata/v3.metadata.json"; metadata != want {
		t.Fatalf("metadata at %s, want %s", metadata, want)
	}
}

// icebergCloudRows reads the table with iceberg-go's IO of its scheme
// under props, rows as "id|s", sorted.
func icebergCloudRows(t *testing.T, props map[string]string, metadata string) []string {
	t.Helper()
	ctx := context.Background()
	tbl, err := table.NewFromLocation(ctx, []string{"tbl"}, metadata, icebergio.LoadFSFunc(props, metadata), nil)
	if err != nil {
		t.Fatalf("iceberg-go opens %s: %v", metadata, err)
	}
	at, err := tbl.Scan(table.WithSelectedFields("id", "s")).ToArrowTable(ctx)
	if err != nil {
		t.Fatalf("iceberg-go scans %s: %v", metadata, err)
	}
	defer at.Release()
	tr := array.NewTableReader(at, 4096)
	defer tr.Release()
	var rows []string
	for tr.Next() {
		rows = append(rows, idStrings(tr.RecordBatch())...)
	}
	slices.Sort(rows)
	return rows
}

func lakelogRows(t *testing.T, snap *deltalog.Snapshot) []string {
	t.Helper()
	sc, err := reader.NewScan(snap, reader.WithColumns("id", "s"))
	if err != nil {
		t.Fatal(err)
	}
	var rows []string
	for rec, err := range sc.Records(context.Background()) {
		if err != nil {
			t.Fatal(err)
		}
		rows = append(rows, idStrings(rec)...)
	}
	slices.Sort(rows)
	return rows
}

func idStrings(rec arrow.RecordBatch) []string {
	out := make([]string, rec.NumRows())
	for i := range out {
		out[i] = rec.Column(0).ValueStr(i) + "|" + rec.Column(1).ValueStr(i)
	}
	return out
}
