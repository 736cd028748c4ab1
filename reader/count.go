package reader

import (
	"context"
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"

	"github.com/lakelog/lakelog/objstore"
)

// Count returns the number of rows the scan would yield, reading as
// little as it can: without a filter, each planned file's numRecords
// statistic (or, for a file without statistics, its Parquet footer);
// with a filter, only the columns the filter reads. The limit applies.
func (s *Scan) Count(ctx context.Context) (int64, error) {
	if s.filter != nil {
		// Read only the filter's columns.
		sub := &Scan{snap: s.snap, cfg: s.cfg, schema: s.schema, partCols: s.partCols, filter: s.filter, pruner: s.pruner}
		sub.cfg.columns, sub.cfg.columnsSet = nil, true
		for _, f := range s.readFields {
			for _, c := range s.filterColumns {
				if f.Name == c {
					sub.readFields = append(sub.readFields, f)
				}
			}
		}
		var err error
		if sub.outSchema, err = arrowSchemaOf(nil); err != nil {
			return 0, err
		}
		if sub.readSchema, err = arrowSchemaOf(sub.readFields); err != nil {
			return 0, err
		}
		var n int64
		for rec, err := range sub.Records(ctx) {
			if err != nil {
				return 0, err
			}
			n += rec.NumRows()
		}
		s.addMetrics(&sub.m)
		return n, nil
	}
	var n int64
	for f, err := range s.Files(ctx) {
		if err != nil {
			return 0, err
		}
		if f.Stats != nil {
			n += f.Stats.NumRecords
		} else {
			rows, err := s.footerRows(ctx, f)
			if err != nil {
				return 0, err
			}
			n += rows
		}
		if s.cfg.limit >= 0 && n >= s.cfg.limit {
			n = s.cfg.limit
			break
		}
	}
	s.m.rowsReturned.Add(n)
	return n, nil
}

// footerRows reads a data file's row count from its Parquet footer.
func (s *Scan) footerRows(ctx context.Context, f *ScanFile) (int64, error) {
	obj, err := objstore.OpenObject(ctx, s.snap.Store(), f.Key, f.Add.Size)
	if err != nil {
		return 0, fmt.Errorf("reader: open %s: %w", f.Key, err)
	}
	defer obj.Close()
	s.m.filesRead.Add(1)
	pf, err := file.NewParquetReader(io.NewSectionReader(obj, 0, obj.Size()), file.WithReadProps(parquet.NewReaderProperties(s.cfg.mem)))
	if err != nil {
		return 0, fmt.Errorf("reader: %s: %w", f.Key, err)
	}
	defer pf.Close()
	return pf.NumRows(), nil
}

// addMetrics folds another pass's counters into s's.
func (s *Scan) addMetrics(m *metrics) {
	s.m.considered.Add(m.considered.Load())
	s.m.prunedPartition.Add(m.prunedPartition.Load())
	s.m.skippedStats.Add(m.skippedStats.Load())
	s.m.filesRead.Add(m.filesRead.Load())
	s.m.rowsRead.Add(m.rowsRead.Load())
	s.m.rowsReturned.Add(m.rowsReturned.Load())
}
