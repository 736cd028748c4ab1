package dml_test

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/expr"
	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/test/tabletest"
)

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

// changeLines reads the change data files version v committed, with
// pqarrow directly (not through lakelog's reader), adding partition values
// from the cdc actions: canonical rows with _change_type last, sorted.
func changeLines(t *testing.T, store objstore.Store, v int64) []string {
	t.Helper()
	ctx := context.Background()
	snap := tabletest.Open(t, store)
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
