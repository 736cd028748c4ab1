package workload

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/lakelog/lakelog/actions"
)

// CDFSpec describes a synthetic table with the change data feed on.
type CDFSpec struct {
	// Versions is the number of versions after version 0 (which creates
	// the table).
	Versions int
	// RowsPerVersion is the rows of the file each append writes.
	RowsPerVersion int64
}

// ChangeRows is the number of change rows the table's feed holds: each
// append (versions 1, 4, 7, ...) inserts RowsPerVersion rows, the UPDATE
// after it records a pre- and a post-image of each in a change data file,
// and the DELETE after that removes the file, a delete of each row.
func (s CDFSpec) ChangeRows() int64 {
	var n int64
	for v := 1; v <= s.Versions; v++ {
		if v%3 == 2 {
			n += 2 * s.RowsPerVersion
		} else {
			n += s.RowsPerVersion
		}
	}
	return n
}

// SynthesizeCDF writes the table into dir (local disk): the data-path
// schema, unpartitioned, with delta.enableChangeDataFeed; then, in turn,
// an append of rows [k·R, (k+1)·R), an UPDATE of every row of that file
// (v += 1; the file rewritten, and a _change_data file of pre- and
// post-images), and a DELETE of the rewritten file (a dataChange remove,
// no change data file, as Spark writes a DELETE of whole files).
func SynthesizeCDF(ctx context.Context, dir string, spec CDFSpec) error {
	if err := os.MkdirAll(filepath.Join(dir, "_delta_log"), 0o755); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(dir, "_change_data"), 0o755); err != nil {
		return err
	}
	md := Metadata()
	md.ID = "cdf-bench"
	md.PartitionColumns = []string{}
	md.Configuration = map[string]string{"delta.enableChangeDataFeed": "true"}
	commit := func(v int, as ...actions.Action) error {
		ts := int64(baseTime + 1000*int64(v))
		all := append([]actions.Action{{CommitInfo: &actions.CommitInfo{Timestamp: &ts, Operation: "WRITE"}}}, as...)
		b, err := actions.MarshalCommit(all)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dir, "_delta_log", actions.CommitName(int64(v))), b, 0o644)
	}
	if err := commit(0, actions.Action{Protocol: &actions.Protocol{MinReaderVersion: 1, MinWriterVersion: 4}}, actions.Action{Metadata: md}); err != nil {
		return err
	}
	var live *actions.Add
	for v := 1; v <= spec.Versions; v++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		k := int64(v-1) / 3
		from, to := k*spec.RowsPerVersion, (k+1)*spec.RowsPerVersion
		var as []actions.Action
		switch v % 3 {
		case 1: // append
			add, err := writeCDFFile(dir, fmt.Sprintf("part-%05d.parquet", v), Batch(memory.DefaultAllocator, from, to), nil)
			if err != nil {
				return err
			}
			live = add
			as = append(as, actions.Action{Add: add})
		case 2: // UPDATE every row: v += 1
			pre := Batch(memory.DefaultAllocator, from, to)
			post := bumpV(pre)
			post.Retain() // once for each file it goes into
			add, err := writeCDFFile(dir, fmt.Sprintf("part-%05d.parquet", v), post, nil)
			if err != nil {
				return err
			}
			cdc, err := writeCDFFile(dir, fmt.Sprintf("_change_data/cdc-%05d.parquet", v), pre, post)
			if err != nil {
				return err
			}
			as = append(as, actions.Action{Remove: actions.RemoveOf(live, baseTime, true)}, actions.Action{Add: add},
				actions.Action{CDC: &actions.AddCDCFile{Path: cdc.Path, PartitionValues: map[string]*string{}, Size: cdc.Size}})
			live = add
		case 0: // DELETE the file
			as = append(as, actions.Action{Remove: actions.RemoveOf(live, baseTime, true)})
			live = nil
		}
		if err := commit(v, as...); err != nil {
			return err
		}
	}
	return nil
}

// bumpV is rec with v increased by one; it releases rec's v column to
// the new batch (the caller releases both batches).
func bumpV(rec arrow.RecordBatch) arrow.RecordBatch {
	b := array.NewFloat64Builder(memory.DefaultAllocator)
	defer b.Release()
	for _, x := range rec.Column(2).(*array.Float64).Float64Values() {
		b.Append(x + 1)
	}
	v := b.NewArray()
	defer v.Release()
	return array.NewRecordBatch(rec.Schema(), []arrow.Array{rec.Column(0), rec.Column(1), v, rec.Column(3)}, rec.NumRows())
}

// writeCDFFile writes rec as a Parquet file at dir/rel; with post, a
// change data file of rec's rows as update_preimage and post's as
// update_postimage. It releases rec and post.
func writeCDFFile(dir, rel string, rec, post arrow.RecordBatch) (*actions.Add, error) {
	defer rec.Release()
	recs := []arrow.RecordBatch{rec}
	schema := rec.Schema()
	if post != nil {
		defer post.Release()
		schema = arrow.NewSchema(append(schema.Fields(), arrow.Field{Name: "_change_type", Type: arrow.BinaryTypes.String, Nullable: true}), nil)
		recs = nil
		for i, r := range []arrow.RecordBatch{rec, post} {
			b := array.NewStringBuilder(memory.DefaultAllocator)
			for range r.NumRows() {
				b.Append([]string{"update_preimage", "update_postimage"}[i])
			}
			ct := b.NewArray()
			b.Release()
			cols := append(append([]arrow.Array{}, r.Columns()...), ct)
			recs = append(recs, array.NewRecordBatch(schema, cols, r.NumRows()))
			ct.Release()
		}
		defer func() {
			for _, r := range recs {
				r.Release()
			}
		}()
	}
	path := filepath.Join(dir, rel)
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	w, err := pqarrow.NewFileWriter(schema, f, parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Snappy)), pqarrow.DefaultWriterProps())
	if err != nil {
		f.Close()
		return nil, err
	}
	for _, r := range recs {
		if err := w.Write(r); err != nil {
			w.Close()
			return nil, err
		}
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	var n int64
	for _, r := range recs {
		n += r.NumRows()
	}
	return &actions.Add{Path: rel, PartitionValues: map[string]*string{}, Size: fi.Size(), ModificationTime: baseTime, DataChange: true,
		Stats: fmt.Sprintf(`{"numRecords":%d}`, n)}, nil
}
