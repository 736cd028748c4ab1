package writer_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/parquet/file"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/test/tabletest"
)

// fileColumns are the top-level column names of a data file.
func fileColumns(t *testing.T, store objstore.Store, key string) []string {
	t.Helper()
	body, err := store.Get(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	pr, err := file.NewParquetReader(bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	root := pr.MetaData().Schema.Root()
	var out []string
	for i := 0; i < root.NumFields(); i++ {
		out = append(out, root.Field(i).Name())
	}
	return out
}

// With the materializePartitionColumns feature (or the
// delta.writePartitionColumnsToParquet property) the data files hold the
// partition columns too, without stats for them; readers still take
// partition values from the adds. Without either, files hold data
// columns only.
func TestMaterializePartitionColumns(t *testing.T) {
	ctx := context.Background()
	protocolFeature := func(store objstore.Store) {
		schema, _ := actions.ParseDDL("id long, p string, q long")
		s, _ := actions.SchemaString(schema)
		md := &actions.Metadata{ID: "m", SchemaString: s, PartitionColumns: []string{"p"}, Format: actions.Format{Provider: "parquet"}}
		body, err := actions.MarshalCommit([]actions.Action{
			{Protocol: &actions.Protocol{MinReaderVersion: 1, MinWriterVersion: 7, WriterFeatures: []string{"materializePartitionColumns"}}},
			{Metadata: md},
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := store.Put(ctx, tabletest.Root+"/_delta_log/00000000000000000000.json", bytes.NewReader(body), objstore.PutOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		name   string
		create func(objstore.Store)
		want   string
	}{
		{"feature", protocolFeature, "id,p,q"},
		{"property", func(s objstore.Store) {
			tabletest.Create(t, s, "id long, p string, q long", map[string]string{"delta.writePartitionColumnsToParquet": "true"}, "p")
		}, "id,p,q"},
		{"neither", func(s objstore.Store) { tabletest.Create(t, s, "id long, p string, q long", nil, "p") }, "id,q"},
	} {
		t.Run(c.name, func(t *testing.T) {
			store := objstore.NewMem()
			c.create(store)
			snap := tabletest.AppendTo(t, store, `[{"id":1,"p":"a","q":10},{"id":2,"p":"b","q":20},{"id":3,"p":null,"q":30}]`)
			n := 0
			for f := range snap.Files() {
				n++
				if got := strings.Join(fileColumns(t, store, tabletest.Root+"/"+f.Path), ","); got != c.want {
					t.Errorf("%s: columns %s, want %s", f.Path, got, c.want)
				}
				if strings.Contains(f.Stats, `"p"`) || !strings.Contains(f.Stats, `"q"`) {
					t.Errorf("%s: stats %s (want q's, none for the partition column p)", f.Path, f.Stats)
				}
			}
			if n != 3 {
				t.Errorf("%d files, want 3", n)
			}
			tabletest.DiffLines(t, "rows", tabletest.ScanLines(t, snap), tabletest.Sorted(`{"id":1,"p":"a","q":10}`, `{"id":2,"p":"b","q":20}`, `{"id":3,"p":null,"q":30}`))
		})
	}
}
