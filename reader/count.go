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
// little as it can. Without a filter it reads no data: each planned
// file's numRecords statistic less the rows its deletion vector deletes
// (the vector's cardinality, as Spark's metadata-only count does), or,
// for a file without statistics, its Parquet footer's row count less the
// same; so it counts tables whose rows Records cannot read yet. With a filter it reads only the
// filter's columns of the files planning keeps (a scan Narrowed to no
// columns). The limit applies.
func (s *Scan) Count(ctx context.Context) (int64, error) {
	if s.filter != nil {
		sub, err := s.Narrow(WithColumns())
		if err != nil {
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
		rows, err := s.liveRows(ctx, f)
		if err != nil {
			return 0, err
		}
		n += rows
		if s.cfg.limit >= 0 && n >= s.cfg.limit {
			n = s.cfg.limit
			break
		}
	}
	s.m.rowsReturned.Add(n)
	return n, nil
}

// liveRows is the number of rows of f that its deletion vector (if any)
// leaves: numRecords from its statistics, else the row count of its
// footer, less the vector's cardinality.
func (s *Scan) liveRows(ctx context.Context, f *ScanFile) (int64, error) {
	var n int64
	if f.Stats != nil && f.Stats.NumRecords >= 0 {
		n = f.Stats.NumRecords
	} else {
		rows, err := s.footerRows(ctx, f)
		if err != nil {
			return 0, err
		}
		n = rows
	}
	if dv := f.Add.DeletionVector; dv != nil {
		if dv.Cardinality < 0 || dv.Cardinality > n {
			return 0, fmt.Errorf("reader: %s: deletion vector deletes %d of %d rows", f.Add.Path, dv.Cardinality, n)
		}
		n -= dv.Cardinality
	}
	return n, nil
}

// NumRecords is the number of rows f holds, deleted ones too: numRecords
// from its stats, else the row count of its Parquet footer (read for it).
// Row tracking's backfill asks it of files written without stats.
func (s *Scan) NumRecords(ctx context.Context, f *ScanFile) (int64, error) {
	if f.Stats != nil && f.Stats.NumRecords >= 0 {
		return f.Stats.NumRecords, nil
	}
	return s.footerRows(ctx, f)
}

// footerRows reads a data file's row count from its Parquet footer.
func (s *Scan) footerRows(ctx context.Context, f *ScanFile) (int64, error) {
	obj, err := objstore.OpenObject(ctx, s.snap.FileStore(), f.Key, f.Add.Size)
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
	s.m.filesPlanned.Add(m.filesPlanned.Load())
	s.m.bytesPlanned.Add(m.bytesPlanned.Load())
	s.m.rowsPlanned.Add(m.rowsPlanned.Load())
	s.m.rowsUnknown.Add(m.rowsUnknown.Load())
	s.m.filesRead.Add(m.filesRead.Load())
	s.m.rowsRead.Add(m.rowsRead.Load())
	s.m.rowsReturned.Add(m.rowsReturned.Load())
}
