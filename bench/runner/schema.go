package main

import (
	"context"
	"fmt"
	"iter"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/cdf"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/dml"
	"github.com/lakelog/lakelog/expr"
	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/schema"
	"github.com/lakelog/lakelog/writer"
)

// schemaSuite (issue 22): on a column-mapped table of 10M rows (1M at the
// small scale), rename, drop and add a column, each one commit that
// writes no data file; an append with merge-schema (a new column) beside
// a plain append of the same rows; and the change data feed of a
// column-mapped table beside a plain one. Measured in the runner's
// process (no peer: delta-rs does not change schemas nor read the feed of
// mapped tables), median of cfg.count runs; no peak memory.
func schemaSuite(ctx context.Context, cfg *config, rep *report) error {
	const suite = "schema changes"
	rows, files := int64(1_000_000), 10
	if cfg.scale == "full" {
		rows, files = 10_000_000, 100
	}
	dir := filepath.Join(cfg.work, "schema")
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	st, err := objstore.NewLocal(dir)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	build := func(root string, mapped, feed bool) error {
		props := map[string]string{}
		if mapped {
			props[actions.PropColumnMappingMode] = "name"
		}
		if feed {
			props[actions.PropEnableChangeDataFeed] = "true"
		}
		sch, err := actions.ParseDDL("id long, g long, s string")
		if err != nil {
			return err
		}
		text, err := actions.SchemaString(sch)
		if err != nil {
			return err
		}
		tx, err := deltalog.Create(st, root, &actions.Metadata{SchemaString: text, Configuration: props})
		if err != nil {
			return err
		}
		if _, err := tx.Commit(ctx); err != nil {
			return err
		}
		per := rows / int64(files)
		for f := range files {
			snap, err := deltalog.Open(ctx, st, root)
			if err != nil {
				return err
			}
			if _, err := writer.Append(ctx, snap, schemaRows(int64(f)*per, per, false), writer.WithCommitOptions(deltalog.WithPostCommit(deltalog.PostCommitOff))); err != nil {
				return err
			}
		}
		return nil
	}
	start := time.Now()
	if err := build("mapped", true, false); err != nil {
		return err
	}
	progress("schema: built a column-mapped table of %d rows in %d files in %s", rows, files, time.Since(start).Round(time.Millisecond))
	rep.note("schema: a column-mapped table (mode name) of %d rows (id, g, s) in %d files, local disk; times measured in the runner's process, median of %d runs", rows, files, cfg.count)

	dataFiles := func() (int, error) {
		n := 0
		for o, err := range st.List(ctx, "mapped/", "") {
			if err != nil {
				return 0, err
			}
			if strings.HasSuffix(o.Key, ".parquet") && !strings.Contains(o.Key, "_delta_log/") {
				n++
			}
		}
		return n, nil
	}
	before, err := dataFiles()
	if err != nil {
		return err
	}
	timeOne := func(fn func(snap *deltalog.Snapshot, i int) error) (*Outcome, error) {
		var times []float64
		for i := range max(cfg.count, 1) {
			snap, err := deltalog.Open(ctx, st, "mapped")
			if err != nil {
				return nil, err
			}
			t0 := time.Now()
			if err := fn(snap, i); err != nil {
				return nil, err
			}
			times = append(times, time.Since(t0).Seconds())
		}
		return &Outcome{Seconds: median(times), Count: 1}, nil
	}
	for _, op := range []struct {
		name string
		fn   func(snap *deltalog.Snapshot, i int) error
	}{
		{"ADD COLUMNS (one commit)", func(snap *deltalog.Snapshot, i int) error {
			_, err := schema.AddColumns(ctx, snap, []schema.Column{{Path: "c" + strconv.Itoa(i), Type: actions.TypeLong}})
			return err
		}},
		{"RENAME COLUMN (one commit)", func(snap *deltalog.Snapshot, i int) error {
			_, err := schema.RenameColumn(ctx, snap, "c"+strconv.Itoa(i), "r"+strconv.Itoa(i))
			return err
		}},
		{"DROP COLUMNS (one commit)", func(snap *deltalog.Snapshot, i int) error {
			_, err := schema.DropColumns(ctx, snap, []string{"r" + strconv.Itoa(i)})
			return err
		}},
	} {
		o, err := timeOne(op.fn)
		if err != nil {
			return fmt.Errorf("%s: %w", op.name, err)
		}
		after, err := dataFiles()
		if err != nil {
			return err
		}
		note := fmt.Sprintf("schema package on a snapshot already open; %d data files before, %d after", before, after)
		if after != before {
			note = fmt.Sprintf("**WRONG: wrote %d data files**; ", after-before) + note
		}
		rep.add(&Row{Suite: suite, Name: op.name + fmt.Sprintf(" on %d rows", rows), Unit: "commits", Lakelog: o, LakelogNote: note})
	}

	// Appends of the same rows, plain and with merge-schema adding a column.
	// Both appends write the same four columns: the plain one to a table
	// that has e0, the merge-schema one adding e1, e2, ... .
	const appendRows = 1_000_000
	snap, err := deltalog.Open(ctx, st, "mapped")
	if err != nil {
		return err
	}
	if _, err := schema.AddColumns(ctx, snap, []schema.Column{{Path: "e0", Type: actions.TypeLong}}); err != nil {
		return err
	}
	for _, merge := range []bool{false, true} {
		i := 0
		o, err := timeOne(func(snap *deltalog.Snapshot, _ int) error {
			i++
			opts := []writer.Option{writer.WithCommitOptions(deltalog.WithPostCommit(deltalog.PostCommitOff))}
			if merge {
				opts = append(opts, writer.WithMergeSchema())
			}
			k := 0
			if merge {
				k = i
			}
			_, err := writer.Append(ctx, snap, schemaRows(rows+int64(i)*appendRows, appendRows, true, k), opts...)
			return err
		})
		if err != nil {
			return err
		}
		o.Count = appendRows
		name, note := "append 1M rows", "writer.Append (id, g, s, e0; the table has e0)"
		if merge {
			name, note = "append 1M rows with merge-schema (a new column)", "writer.Append with WithMergeSchema, the input has a column the table lacks"
		}
		rep.add(&Row{Suite: suite, Name: name, Unit: "rows", Lakelog: o, LakelogNote: note})
	}

	// The change data feed of a mapped table and of a plain one.
	feedRows := rows / 10
	for _, mapped := range []bool{false, true} {
		root := map[bool]string{false: "feed-plain", true: "feed-mapped"}[mapped]
		saved := rows
		rows = feedRows
		err := build(root, mapped, true)
		rows = saved
		if err != nil {
			return err
		}
		snap, err := deltalog.Open(ctx, st, root)
		if err != nil {
			return err
		}
		if _, err := dml.Update(ctx, snap, &expr.Compare{Op: expr.Lt, Left: expr.Col("g"), Right: expr.Lit(int64(50))}, []*expr.Assignment{{Column: expr.Col("s"), Value: expr.Lit("updated")}}); err != nil {
			return err
		}
		var got int64
		o, err := func() (*Outcome, error) {
			var times []float64
			for range max(cfg.count, 1) {
				t0 := time.Now()
				f, err := cdf.Open(ctx, st, root, cdf.Versions(0, -1))
				if err != nil {
					return nil, err
				}
				got = 0
				for rec, err := range f.Records(ctx) {
					if err != nil {
						return nil, err
					}
					got += rec.NumRows()
				}
				times = append(times, time.Since(t0).Seconds())
			}
			return &Outcome{Seconds: median(times), Count: got}, nil
		}()
		if err != nil {
			return err
		}
		name := "change data feed, plain table"
		if mapped {
			name = "change data feed, column-mapped table (name)"
		}
		rep.add(&Row{Suite: suite, Name: name + fmt.Sprintf(" (%d inserts, an UPDATE of half)", feedRows), Unit: "rows", Lakelog: o, LakelogNote: "cdf.Open + Feed.Records, every batch counted"})
	}
	return nil
}

// schemaRows yields n rows (id, g, s) from id first in batches of 64k;
// with extra, a column e<k> the table lacks.
func schemaRows(first, n int64, extra bool, k ...int) iter.Seq2[arrow.RecordBatch, error] {
	fields := []arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true}, {Name: "g", Type: arrow.PrimitiveTypes.Int64, Nullable: true}, {Name: "s", Type: arrow.BinaryTypes.String, Nullable: true}}
	if extra {
		fields = append(fields, arrow.Field{Name: fmt.Sprintf("e%d", k[0]), Type: arrow.PrimitiveTypes.Int64, Nullable: true})
	}
	sc := arrow.NewSchema(fields, nil)
	return func(yield func(arrow.RecordBatch, error) bool) {
		const batch = 1 << 16
		for off := int64(0); off < n; off += batch {
			m := min(batch, n-off)
			b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
			for i := range m {
				id := first + off + i
				b.Field(0).(*array.Int64Builder).Append(id)
				b.Field(1).(*array.Int64Builder).Append(id % 100)
				b.Field(2).(*array.StringBuilder).Append("row " + strconv.FormatInt(id%1000, 10))
				if extra {
					b.Field(3).(*array.Int64Builder).Append(id)
				}
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

// median is the middle of times (the mean of the two middle ones when
// even).
func median(times []float64) float64 {
	s := slices.Clone(times)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}
