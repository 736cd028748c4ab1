package dml_test

import (
	"context"
	"fmt"
	"io"
	"iter"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/expr"
	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/reader"
	"github.com/lakelog/lakelog/writer"
)

// createTable creates an empty table "tbl" in store and returns its
// snapshot.
func createTable(t *testing.T, store objstore.Store, ddl string, props map[string]string, parts ...string) *deltalog.Snapshot {
	t.Helper()
	schema, err := actions.ParseDDL(ddl)
	if err != nil {
		t.Fatal(err)
	}
	s, err := actions.SchemaString(schema)
	if err != nil {
		t.Fatal(err)
	}
	tx, err := deltalog.Create(store, "tbl", &actions.Metadata{SchemaString: s, PartitionColumns: parts, Configuration: props})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Commit(context.Background()); err != nil {
		t.Fatal(err)
	}
	return openTable(t, store)
}

func openTable(t *testing.T, store objstore.Store) *deltalog.Snapshot {
	t.Helper()
	snap, err := deltalog.Open(context.Background(), store, "tbl")
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

// rowsOf is a batch of the Arrow schema sc from a JSON array of objects.
func rowsOf(t *testing.T, sc *arrow.Schema, rows string) arrow.RecordBatch {
	t.Helper()
	rec, _, err := array.RecordFromJSON(memory.DefaultAllocator, sc, strings.NewReader(rows))
	if err != nil {
		t.Fatalf("record from JSON: %v", err)
	}
	return rec
}

// tableRows is a batch of the table's schema from a JSON array of objects.
func tableRows(t *testing.T, snap *deltalog.Snapshot, rows string) arrow.RecordBatch {
	t.Helper()
	sc, err := actions.ToArrowSchema(snap.Schema(), false, "")
	if err != nil {
		t.Fatal(err)
	}
	return rowsOf(t, sc, rows)
}

// one yields rec once and releases it when the test ends.
func one(t *testing.T, rec arrow.RecordBatch) iter.Seq2[arrow.RecordBatch, error] {
	t.Cleanup(rec.Release)
	return func(yield func(arrow.RecordBatch, error) bool) { yield(rec, nil) }
}

func appendRows(t *testing.T, store objstore.Store, rows string, opts ...writer.Option) *deltalog.Snapshot {
	t.Helper()
	snap := openTable(t, store)
	if _, err := writer.Append(context.Background(), snap, one(t, tableRows(t, snap, rows)), opts...); err != nil {
		t.Fatal(err)
	}
	return openTable(t, store)
}

func mustParse(t *testing.T, s string) expr.Expr {
	t.Helper()
	e, err := expr.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func mustSet(t *testing.T, ss ...string) []*expr.Assignment {
	t.Helper()
	var out []*expr.Assignment
	for _, s := range ss {
		a, err := expr.ParseAssignment(s)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, a)
	}
	return out
}

// scanLines is the table's canonical rows, sorted.
func scanLines(t *testing.T, snap *deltalog.Snapshot) []string {
	t.Helper()
	sc, err := reader.NewScan(snap)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for rec, err := range sc.Records(context.Background()) {
		if err != nil {
			t.Fatal(err)
		}
		rows, err := reader.CanonicalRows(rec)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			lines = append(lines, string(r))
		}
	}
	slices.Sort(lines)
	return lines
}

// changeLines reads the change data files version v committed, with
// pqarrow directly (not through lakelog's reader), adding partition values
// from the cdc actions: canonical rows with _change_type last, sorted.
func changeLines(t *testing.T, store objstore.Store, v int64) []string {
	t.Helper()
	ctx := context.Background()
	snap := openTable(t, store)
	var cdcs []*actions.AddCDCFile
	for c, err := range deltalog.Commits(ctx, store, "tbl/", v, v) {
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range c.Actions {
			if a.CDC != nil {
				cdcs = append(cdcs, a.CDC)
			}
		}
	}
	var lines []string
	for _, c := range cdcs {
		key := snap.TablePath(c.Path)
		obj, err := objstore.OpenObject(ctx, store, key, c.Size)
		if err != nil {
			t.Fatal(err)
		}
		pf, err := file.NewParquetReader(io.NewSectionReader(obj, 0, obj.Size()))
		if err != nil {
			t.Fatal(err)
		}
		fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: 1 << 16}, memory.DefaultAllocator)
		if err != nil {
			t.Fatal(err)
		}
		tbl, err := fr.ReadTable(ctx)
		if err != nil {
			t.Fatal(err)
		}
		tr := array.NewTableReader(tbl, 1<<16)
		for tr.Next() {
			rec := tr.RecordBatch()
			for i := 0; i < int(rec.NumRows()); i++ {
				// Rebuild the row in the table's column order, with the
				// partition values of the cdc action.
				var b strings.Builder
				b.WriteString("{")
				for k, f := range snap.Schema().Fields {
					if k > 0 {
						b.WriteString(",")
					}
					b.WriteString(`"` + f.Name + `":`)
					if pv, ok := c.PartitionValues[f.Name]; ok {
						if pv == nil {
							b.WriteString("null")
						} else {
							b.WriteString(`"` + *pv + `"`)
						}
						continue
					}
					idx := rec.Schema().FieldIndices(f.Name)
					if len(idx) != 1 {
						t.Fatalf("%s: no column %s", c.Path, f.Name)
					}
					v, ok := actions.ArrowValue(rec.Column(idx[0]), i)
					switch {
					case !ok || v == nil:
						b.WriteString("null")
					default:
						if s, isStr := v.(string); isStr {
							b.WriteString(`"` + s + `"`)
						} else {
							b.WriteString(fmt.Sprint(v))
						}
					}
				}
				ct := rec.Column(rec.Schema().FieldIndices("_change_type")[0]).(*array.String).Value(i)
				b.WriteString(`,"_change_type":"` + ct + `"}`)
				lines = append(lines, b.String())
			}
		}
		tr.Release()
		tbl.Release()
		pf.Close()
		obj.Close()
	}
	slices.Sort(lines)
	return lines
}

func diffLines(t *testing.T, what string, got, want []string) {
	t.Helper()
	if slices.Equal(got, want) {
		return
	}
	count := map[string]int{}
	for _, g := range got {
		count[g]++
	}
	for _, w := range want {
		count[w]--
	}
	var extra, missing []string
	for k, n := range count {
		for ; n > 0; n-- {
			extra = append(extra, k)
		}
		for ; n < 0; n++ {
			missing = append(missing, k)
		}
	}
	slices.Sort(extra)
	slices.Sort(missing)
	t.Errorf("%s: got %d rows, want %d\n unexpected: %s\n    missing: %s", what, len(got), len(want), strings.Join(extra, "\n             "), strings.Join(missing, "\n             "))
}

func sortedLines(s ...string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return out
}

// scanLinesOf is the canonical form of a JSON array of rows whose keys
// are in the table's column order.
func scanLinesOf(t *testing.T, rows string) []string {
	t.Helper()
	rows = strings.TrimSpace(rows)
	rows = strings.TrimSuffix(strings.TrimPrefix(rows, "["), "]")
	var out []string
	for _, r := range strings.Split(rows, "},") {
		r = strings.TrimSpace(r)
		if !strings.HasSuffix(r, "}") {
			r += "}"
		}
		out = append(out, r)
	}
	return out
}
