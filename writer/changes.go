package writer

import (
	"context"
	"fmt"
	"iter"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/deltalog"
)

// ChangeResult is what WriteChangeFiles wrote: the cdc actions to commit.
type ChangeResult struct {
	Files    []*actions.AddCDCFile
	NumRows  int64
	NumBytes int64
}

// WriteChangeFiles writes change data files, as Spark writes them for a
// table with delta.enableChangeDataFeed=true: batches hold the table's
// columns plus actions.ChangeTypeColumn (string, not null), and go to Parquet files
// under _change_data/, in the table's partition folders, without the
// partition columns (their values are in the cdc actions). Nothing is
// committed; commit the result's Files with the operation's other
// actions. opts are as for WriteFiles (schema merging and row checks do
// not apply).
func WriteChangeFiles(ctx context.Context, snap *deltalog.Snapshot, batches iter.Seq2[arrow.RecordBatch, error], opts ...Option) (*ChangeResult, error) {
	cfg, err := newConfig(opts)
	if err != nil {
		return nil, err
	}
	if err := refuseCommitOptions(cfg); err != nil {
		return nil, err
	}
	cfg.changeFiles, cfg.mergeSchema, cfg.rowCheck = true, false, nil
	table := snap.Config()
	if cfg.schemaChange != nil {
		table = cfg.schemaChange
	}
	schema := table.Schema()
	if schema.Field(actions.ChangeTypeColumn) != nil {
		return nil, fmt.Errorf("writer: the table has a column %q, which change data files reserve", actions.ChangeTypeColumn)
	}
	cs := &actions.StructType{Fields: append(slices.Clone(schema.Fields), &actions.StructField{Name: actions.ChangeTypeColumn, Type: actions.TypeString, Nullable: false})}
	text, err := actions.SchemaString(cs)
	if err != nil {
		return nil, fmt.Errorf("writer: %w", err)
	}
	md := *table.Metadata()
	md.SchemaString = text
	changes, err := actions.NewTableConfig(table.Protocol(), &md)
	if err != nil {
		return nil, fmt.Errorf("writer: %w", err)
	}
	wr, err := writeFiles(ctx, snap.Store(), snap.Root(), changes, batches, cfg)
	if err != nil {
		return nil, err
	}
	res := &ChangeResult{NumRows: wr.NumRows, NumBytes: wr.NumBytes}
	for _, a := range wr.Adds {
		res.Files = append(res.Files, &actions.AddCDCFile{Path: a.Path, PartitionValues: a.PartitionValues, Size: a.Size, DataChange: false})
	}
	return res, nil
}
