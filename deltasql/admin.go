package deltasql

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/expr"
	"github.com/lakelog/lakelog/maintenance"
	"github.com/lakelog/lakelog/schema"
)

// describe is DESCRIBE HISTORY (deltalog.History, as `lakelog
// history`), DESCRIBE DETAIL and DESCRIBE TABLE (the snapshot, as
// `lakelog describe`), with Spark's columns.
func (x *run) describe(ctx context.Context, n *describe) error {
	switch n.what {
	case "HISTORY":
		st, _, err := x.store(ctx, n.table)
		if err != nil {
			return err
		}
		limit := -1
		if n.limit != nil {
			limit = int(*n.limit)
		}
		hist, err := deltalog.History(ctx, st, "", limit)
		if err != nil {
			return x.errAt(n.table.pos, fmt.Errorf("%s: %w", n.table.display(), err))
		}
		str := arrow.BinaryTypes.String
		i64 := arrow.PrimitiveTypes.Int64
		t := newRowTable(col("version", i64), col("timestamp", timestampUTC), col("userId", str), col("userName", str),
			col("operation", str), col("operationParameters", mapOfStrings), col("job", mapOfStrings), col("notebook", mapOfStrings),
			col("clusterId", str), col("readVersion", i64), col("isolationLevel", str), col("isBlindAppend", arrow.FixedWidthTypes.Boolean),
			col("operationMetrics", mapOfStrings), col("userMetadata", str), col("engineInfo", str))
		for _, h := range hist {
			if h.Missing {
				return x.errorf(n.table.pos, "%s: %v: the commit file of version %d is missing", n.table.display(), deltalog.ErrLogCorrupt, h.Version)
			}
			ci := h.Info
			if ci == nil {
				ci = &actions.CommitInfo{}
			}
			var readVersion, blind any
			if ci.ReadVersion != nil {
				readVersion = *ci.ReadVersion
			}
			if ci.IsBlindAppend != nil {
				blind = *ci.IsBlindAppend
			}
			t.add(h.Version, h.Timestamp, extraString(ci, "userId"), extraString(ci, "userName"), ci.Operation,
				textMap(ci.OperationParameters), nil, nil, extraString(ci, "clusterId"), readVersion, orNil(ci.IsolationLevel), blind,
				textMap(ci.OperationMetrics), orNil(ci.UserMetadata), orNil(ci.EngineInfo))
		}
		x.r.set(t)
		return nil
	}
	snap, err := x.snapshot(ctx, n.table)
	if err != nil {
		return err
	}
	if n.what == "TABLE" {
		str := arrow.BinaryTypes.String
		t := newRowTable(col("col_name", str), col("data_type", str), col("comment", str))
		for _, f := range snap.Schema().Fields {
			var comment any
			if c, ok := f.Metadata["comment"].(string); ok {
				comment = c
			}
			t.add(f.Name, f.Type.String(), comment)
		}
		x.describeTable(t, snap, n)
		x.r.set(t)
		return nil
	}
	md, p := snap.Metadata(), snap.Protocol()
	loc, _ := x.location(n.table)
	str := arrow.BinaryTypes.String
	i64 := arrow.PrimitiveTypes.Int64
	t := newRowTable(col("format", str), col("id", str), col("name", str), col("description", str), col("location", str),
		col("createdAt", timestampUTC), col("lastModified", timestampUTC), col("partitionColumns", listOfStrings),
		col("clusteringColumns", listOfStrings), col("numFiles", i64), col("sizeInBytes", i64), col("properties", mapOfStrings),
		col("minReaderVersion", i64), col("minWriterVersion", i64), col("tableFeatures", listOfStrings))
	var created any
	if md.CreatedTime != nil {
		created = time.UnixMilli(*md.CreatedTime)
	}
	var name, desc any
	if n.table.name != "" {
		name = n.table.name
	}
	if md.Description != nil {
		desc = *md.Description
	}
	features := slices.Clone(p.WriterFeatures)
	for _, f := range p.ReaderFeatures {
		if !slices.Contains(features, f) {
			features = append(features, f)
		}
	}
	slices.Sort(features)
	props := md.Configuration
	if props == nil {
		props = map[string]string{}
	}
	t.add("delta", md.ID, name, desc, loc, created, snap.Timestamp(), append([]string{}, md.PartitionColumns...), []string{},
		int64(snap.NumFiles()), snap.SizeInBytes(), props, int64(p.MinReaderVersion), int64(p.MinWriterVersion), features)
	x.r.set(t)
	return nil
}

func orNil(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// extraString is a commitInfo field lakelog does not model (userId,
// clusterId) as text.
func extraString(ci *actions.CommitInfo, key string) any {
	raw, ok := ci.Extra[key]
	if !ok {
		return nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}

// textMap is a map of JSON values as strings (Spark's map<string,string>
// of operationParameters and operationMetrics).
func textMap(m map[string]any) any {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		switch x := v.(type) {
		case string:
			out[k] = x
		case nil:
			out[k] = "null"
		default:
			b, _ := json.Marshal(x)
			out[k] = string(b)
		}
	}
	return out
}

// restore is RESTORE: maintenance.Restore, as `lakelog restore`, with
// Spark's row.
func (x *run) restore(ctx context.Context, n *restore) error {
	latest := n.table
	latest.version, latest.timestamp = nil, ""
	snap, err := x.snapshot(ctx, latest)
	if err != nil {
		return err
	}
	to := maintenance.ToVersion(0)
	if n.version != nil {
		to = maintenance.ToVersion(*n.version)
	} else {
		ts, err := deltalog.ParseTime(n.timestamp)
		if err != nil {
			return x.errorf(n.table.pos, "TIMESTAMP AS OF '%s': %v", n.timestamp, err)
		}
		to = maintenance.ToTimestamp(ts)
	}
	res, err := maintenance.Restore(ctx, snap, to)
	if err != nil {
		return x.errAt(n.table.pos, err)
	}
	x.r.committed(res.Commit)
	m := res.Metrics
	i64 := arrow.PrimitiveTypes.Int64
	t := newRowTable(col("table_size_after_restore", i64), col("num_of_files_after_restore", i64), col("num_removed_files", i64),
		col("num_restored_files", i64), col("removed_files_size", i64), col("restored_files_size", i64))
	t.add(m.TableSizeAfterRestore, m.NumOfFilesAfterRestore, m.NumRemovedFiles, m.NumRestoredFiles, m.RemovedFilesSize, m.RestoredFilesSize)
	x.r.set(t)
	x.r.Summary = fmt.Sprintf("RESTORE: version %d restored as version %d", res.RestoredVersion, res.Commit.Version)
	return nil
}

// vacuum is VACUUM: maintenance.Vacuum, as `lakelog vacuum`. Spark's row:
// the files a DRY RUN would delete, else the table's path.
func (x *run) vacuum(ctx context.Context, n *vacuum) error {
	snap, err := x.snapshot(ctx, n.table)
	if err != nil {
		return err
	}
	loc, _ := x.location(n.table)
	var opts []maintenance.VacuumOption
	if n.retain != nil {
		opts = append(opts, maintenance.Retain(time.Duration(*n.retain*float64(time.Hour))))
	}
	if n.dryRun {
		opts = append(opts, maintenance.DryRun())
	}
	if !x.s.retentionCheck {
		opts = append(opts, maintenance.Force())
	}
	if x.s.progress != nil {
		opts = append(opts, maintenance.VacuumProgress(func(done, total int) { x.s.progress("vacuum: files deleted", done, total) }))
	}
	res, err := maintenance.Vacuum(ctx, snap, opts...)
	if err != nil {
		if strings.Contains(err.Error(), "retention") {
			err = fmt.Errorf("%w (SET spark.databricks.delta.retentionDurationCheck.enabled = false allows it)", err)
		}
		return x.errAt(n.table.pos, err)
	}
	x.r.committed(res.StartCommit)
	x.r.committed(res.EndCommit)
	t := newRowTable(col("path", arrow.BinaryTypes.String))
	if res.DryRun {
		for _, f := range res.Files {
			t.add(strings.TrimSuffix(loc, "/") + "/" + strings.TrimPrefix(strings.TrimPrefix(f.Key, snap.Root()), "/"))
		}
		x.r.Summary = fmt.Sprintf("VACUUM DRY RUN: %d files (%d bytes) would be deleted", len(res.Files), res.Bytes)
	} else {
		t.add(loc)
		x.r.Summary = fmt.Sprintf("VACUUM: %d files (%d bytes) deleted; versions %d and %d record it", len(res.Files), res.Bytes, res.StartVersion, res.EndVersion)
	}
	x.r.set(t)
	return nil
}

// optimize is OPTIMIZE: maintenance.Optimize, as `lakelog optimize`.
// The row is Spark's: the table's path and the metrics struct of Delta's
// OptimizeMetrics, its fields filled from what lakelog did (the files
// its commits added and removed, read back from the log).
func (x *run) optimize(ctx context.Context, n *optimize) error {
	snap, err := x.snapshot(ctx, n.table)
	if err != nil {
		return err
	}
	loc, _ := x.location(n.table)
	var opts []maintenance.OptimizeOption
	if n.where != nil {
		opts = append(opts, maintenance.Where(predicate(n.where, snap.Schema(), n.table)))
	}
	if len(n.zorder) > 0 {
		opts = append(opts, maintenance.ZOrderBy(n.zorder...))
	}
	if x.s.progress != nil {
		opts = append(opts, maintenance.OptimizeProgress(func(done, total int) { x.s.progress("optimize: rows rewritten", done, total) }))
	}
	start := time.Now()
	res, err := maintenance.Optimize(ctx, snap, opts...)
	if err != nil {
		return x.errAt(wherePos(n.where, n.table), err)
	}
	end := time.Now()
	for _, c := range res.Commits {
		x.r.committed(c)
	}
	metrics, err := x.optimizeMetrics(ctx, snap, n, res, start, end)
	if err != nil {
		return x.errAt(n.table.pos, err)
	}
	t := newRowTable(col("path", arrow.BinaryTypes.String), col("metrics", optimizeMetricsType))
	t.add(loc, metrics)
	x.r.set(t)
	x.r.Summary = fmt.Sprintf("OPTIMIZE: nothing to compact (%d files considered)", res.Metrics.TotalConsideredFiles)
	if len(res.Commits) > 0 {
		vs := make([]string, len(res.Commits))
		for i, c := range res.Commits {
			vs[i] = strconv.FormatInt(c.Version, 10)
		}
		x.r.Summary = fmt.Sprintf("OPTIMIZE: %d files rewritten as %d in version %s", res.Metrics.NumRemovedFiles, res.Metrics.NumAddedFiles, strings.Join(vs, ", "))
	}
	return nil
}

// The struct types of Delta's OptimizeMetrics, field for field.
var (
	i64Field            = func(name string) arrow.Field { return col(name, arrow.PrimitiveTypes.Int64) }
	fileSizeMetrics     = arrow.StructOf(i64Field("min"), i64Field("max"), col("avg", arrow.PrimitiveTypes.Float64), i64Field("totalFiles"), i64Field("totalSize"))
	zOrderFileStats     = arrow.StructOf(i64Field("num"), i64Field("size"))
	clusterFileStats    = arrow.StructOf(i64Field("numFiles"), i64Field("size"))
	optimizeMetricsType = arrow.StructOf(
		i64Field("numFilesAdded"), i64Field("numFilesRemoved"),
		col("filesAdded", fileSizeMetrics), col("filesRemoved", fileSizeMetrics),
		i64Field("partitionsOptimized"),
		col("zOrderStats", arrow.StructOf(col("strategyName", arrow.BinaryTypes.String), col("inputCubeFiles", zOrderFileStats),
			col("inputOtherFiles", zOrderFileStats), i64Field("inputNumCubes"), col("mergedFiles", zOrderFileStats),
			i64Field("numOutputCubes"), i64Field("mergedNumCubes"))),
		col("clusteringStats", arrow.StructOf(col("inputZCubeFiles", clusterFileStats), col("inputOtherFiles", clusterFileStats),
			i64Field("inputNumZCubes"), col("mergedFiles", clusterFileStats), i64Field("numOutputZCubes"))),
		i64Field("numBins"), i64Field("numBatches"), i64Field("totalConsideredFiles"), i64Field("totalFilesSkipped"),
		col("preserveInsertionOrder", arrow.FixedWidthTypes.Boolean),
		i64Field("numFilesSkippedToReduceWriteAmplification"), i64Field("numBytesSkippedToReduceWriteAmplification"),
		i64Field("startTimeMs"), i64Field("endTimeMs"), i64Field("totalClusterParallelism"), i64Field("totalScheduledTasks"),
		col("autoCompactParallelismStats", arrow.StructOf(i64Field("maxClusterActiveParallelism"), i64Field("minClusterActiveParallelism"),
			i64Field("maxSessionActiveParallelism"), i64Field("minSessionActiveParallelism"))),
		col("deletionVectorStats", arrow.StructOf(i64Field("numDeletionVectorsRemoved"), i64Field("numDeletionVectorRowsRemoved"))),
		i64Field("numTableColumns"), i64Field("numTableColumnsWithStats"),
	)
)

// sizeStats are the file size metrics of some files.
type sizeStats struct{ n, total, min, max int64 }

func (s *sizeStats) add(size int64) {
	if s.n == 0 || size < s.min {
		s.min = size
	}
	s.max = max(s.max, size)
	s.n++
	s.total += size
}

// value is the FileSizeMetrics struct: min and max null without files.
func (s sizeStats) value() []any {
	if s.n == 0 {
		return []any{nil, nil, 0.0, int64(0), int64(0)}
	}
	return []any{s.min, s.max, float64(s.total) / float64(s.n), s.n, s.total}
}

// optimizeMetrics is the metrics struct of an OPTIMIZE: the files its
// commits added and removed (read back from the log), the partitions
// they were in, the bins and commits, and the times.
func (x *run) optimizeMetrics(ctx context.Context, snap *deltalog.Snapshot, n *optimize, res *maintenance.OptimizeResult, start, end time.Time) ([]any, error) {
	var added, removed sizeStats
	var dvRows int64
	partitions := map[string]bool{}
	for _, c := range res.Commits {
		for vc, err := range deltalog.Commits(ctx, snap.Store(), snap.Root(), c.Version, c.Version) {
			if err != nil {
				return nil, err
			}
			for _, a := range vc.Actions {
				switch {
				case a.Add != nil:
					added.add(a.Add.Size)
				case a.Remove != nil:
					if a.Remove.Size != nil {
						removed.add(*a.Remove.Size)
					} else {
						removed.add(0)
					}
					if dv := a.Remove.DeletionVector; dv != nil {
						dvRows += dv.Cardinality
					}
					key, _ := json.Marshal(a.Remove.PartitionValues)
					partitions[string(key)] = true
				}
			}
		}
	}
	m := res.Metrics
	var zorder any
	if len(n.zorder) > 0 {
		zorder = []any{"all", []any{int64(0), int64(0)}, []any{removed.n, removed.total}, int64(0), []any{removed.n, removed.total}, m.NumBatches, nil}
	}
	cols := int64(len(snap.Schema().Fields))
	withStats := cols
	if v, ok := snap.Metadata().Configuration["delta.dataSkippingNumIndexedCols"]; ok {
		if k, err := strconv.ParseInt(v, 10, 64); err == nil && k >= 0 {
			withStats = min(cols, k)
		}
	} else {
		withStats = min(cols, 32)
	}
	if v, ok := snap.Metadata().Configuration["delta.dataSkippingStatsColumns"]; ok {
		withStats = int64(len(strings.Split(v, ",")))
	}
	// Spark reports deletion vector stats on a table that may have
	// deletion vectors, null on others.
	var dvStats any
	if m.NumDeletionVectorsRemoved > 0 || strings.EqualFold(snap.Metadata().Configuration["delta.enableDeletionVectors"], "true") {
		dvStats = []any{m.NumDeletionVectorsRemoved, dvRows}
	}
	return []any{
		added.n, removed.n, added.value(), removed.value(), int64(len(partitions)), zorder, nil,
		m.NumBatches, int64(len(res.Commits)), m.TotalConsideredFiles, m.TotalConsideredFiles - removed.n, false,
		int64(0), int64(0), start.UnixMilli(), end.UnixMilli(), int64(runtime.GOMAXPROCS(0)), m.NumBatches,
		nil, dvStats, cols, withStats,
	}, nil
}

// alter is ALTER TABLE SET/UNSET TBLPROPERTIES:
// maintenance.AlterProperties, as `lakelog alter`.
func (x *run) alter(ctx context.Context, n *alterProperties) error {
	snap, err := x.snapshot(ctx, n.table)
	if err != nil {
		return err
	}
	unset := n.unset
	if n.ifExists {
		unset = nil
		for _, k := range n.unset {
			if _, ok := snap.Metadata().Configuration[k]; ok {
				unset = append(unset, k)
			}
		}
		if len(unset) == 0 && len(n.set) == 0 {
			x.r.Summary = "ALTER TABLE: no property to unset; nothing was committed"
			return nil
		}
	}
	res, err := maintenance.AlterProperties(ctx, snap, n.set, unset)
	if err != nil {
		return x.errAt(n.table.pos, err)
	}
	x.r.committed(res)
	x.r.Summary = fmt.Sprintf("ALTER TABLE: version %d", res.Version)
	return nil
}

// alterColumns is ALTER TABLE's column and constraint forms: the schema
// package function `lakelog alter` calls for each, one commit or none.
// Spark returns no rows; the summary says what was committed.
func (x *run) alterColumns(ctx context.Context, n *alterColumns) error {
	snap, err := x.snapshot(ctx, n.table)
	if err != nil {
		return err
	}
	var res *deltalog.CommitResult
	var done string
	pos := n.pos
	switch n.op {
	case "ADD COLUMNS", "REPLACE COLUMNS":
		var cols []schema.Column
		for i, def := range n.defs {
			c, err := schema.ParseColumn(def)
			if err != nil {
				return x.errAt(n.defsPos[i], err)
			}
			cols = append(cols, c)
		}
		if n.op == "ADD COLUMNS" {
			res, err = schema.AddColumns(ctx, snap, cols)
			done = fmt.Sprintf("added %d columns", len(cols))
		} else {
			res, err = schema.ReplaceColumns(ctx, snap, cols)
			done = fmt.Sprintf("the table has %d columns", len(cols))
		}
		var ce *schema.ChangeError
		if errors.As(err, &ce) { // point at the column's definition
			for i, c := range cols {
				if strings.EqualFold(c.Path, ce.Column) {
					pos = n.defsPos[i]
				}
			}
		}
	case "RENAME COLUMN":
		res, err = schema.RenameColumn(ctx, snap, n.column, n.newName)
		done = fmt.Sprintf("renamed %s to %s", n.column, n.newName)
	case "DROP COLUMNS":
		cols := n.columns
		if n.ifExists {
			cols = nil
			for _, c := range n.columns {
				if columnExists(snap.Schema(), c) {
					cols = append(cols, c)
				}
			}
			if len(cols) == 0 {
				x.r.Summary = "ALTER TABLE DROP COLUMNS: no such column; nothing was committed"
				return nil
			}
		}
		res, err = schema.DropColumns(ctx, snap, cols)
		done = "dropped " + strings.Join(cols, ", ")
	case "CHANGE COLUMN":
		switch n.action {
		case "TYPE":
			st, perr := actions.ParseDDL("x " + n.typ)
			if perr != nil || len(st.Fields) != 1 {
				if perr == nil {
					perr = fmt.Errorf("not one type")
				}
				return x.errorf(n.typePos, "TYPE %s: %v", n.typ, perr)
			}
			res, err = schema.ChangeColumnType(ctx, snap, n.column, st.Fields[0].Type)
			done = fmt.Sprintf("%s is now %s", n.column, st.Fields[0].Type)
		case "DROP NOT NULL":
			res, err = schema.DropNotNull(ctx, snap, n.column)
			done = n.column + " is nullable"
		case "COMMENT":
			res, err = schema.SetComment(ctx, snap, n.column, n.comment)
			done = "set the comment of " + n.column
		case "FIRST":
			res, err = schema.MoveColumn(ctx, snap, n.column, "", true)
			done = "moved " + n.column + " first"
		case "AFTER":
			res, err = schema.MoveColumn(ctx, snap, n.column, n.newName, false)
			done = "moved " + n.column + " after " + n.newName
		}
	case "ADD CONSTRAINT":
		res, err = schema.AddConstraint(ctx, snap, n.constraint, n.check)
		done = "added CHECK constraint " + n.constraint
	case "DROP CONSTRAINT":
		var opts []schema.Option
		if n.ifExists {
			opts = append(opts, schema.IfExists())
		}
		res, err = schema.DropConstraint(ctx, snap, n.constraint, opts...)
		done = "dropped CHECK constraint " + n.constraint
	}
	if err != nil {
		return x.errAt(pos, err)
	}
	if res == nil { // DROP CONSTRAINT IF EXISTS of a constraint the table lacks
		x.r.Summary = fmt.Sprintf("ALTER TABLE %s: the table has no CHECK constraint %s; nothing was committed", n.op, n.constraint)
		return nil
	}
	x.r.committed(res)
	x.r.Summary = fmt.Sprintf("ALTER TABLE %s: version %d: %s", n.op, res.Version, done)
	return nil
}

// columnExists reports whether the SQL column path names a column or
// nested field of s (names compared without case, as Spark).
func columnExists(s *actions.StructType, path string) bool {
	names, err := schema.ParseColumnPath(path)
	if err != nil {
		return false
	}
	var t actions.DataType = s
	for _, name := range names {
		switch x := t.(type) {
		case *actions.StructType:
			f := x.FieldFold(name)
			if f == nil {
				return false
			}
			t = f.Type
		case *actions.ArrayType:
			if !strings.EqualFold(name, "element") {
				return false
			}
			t = x.ElementType
		case *actions.MapType:
			switch {
			case strings.EqualFold(name, "key"):
				t = x.KeyType
			case strings.EqualFold(name, "value"):
				t = x.ValueType
			default:
				return false
			}
		default:
			return false
		}
	}
	return true
}

// describeTable adds what Spark's DESCRIBE TABLE shows after the
// columns: the partition columns under "# Partition Information", and
// with EXTENDED the table's details under "# Detailed Table
// Information" (name, location, provider, properties with the protocol
// versions, as Spark lists them).
func (x *run) describeTable(t *rowTable, snap *deltalog.Snapshot, n *describe) {
	if parts := snap.PartitionColumns(); len(parts) > 0 {
		t.add("# Partition Information", "", "")
		t.add("# col_name", "data_type", "comment")
		for _, p := range parts {
			f := snap.Schema().FieldFold(p)
			if f == nil {
				continue
			}
			var comment any
			if c, ok := f.Metadata["comment"].(string); ok {
				comment = c
			}
			t.add(f.Name, f.Type.String(), comment)
		}
	}
	if !n.extended {
		return
	}
	md, p := snap.Metadata(), snap.Protocol()
	loc, _ := x.location(n.table)
	name := n.table.display()
	props := maps.Clone(md.Configuration)
	if props == nil {
		props = map[string]string{}
	}
	props["delta.minReaderVersion"] = strconv.Itoa(p.MinReaderVersion)
	props["delta.minWriterVersion"] = strconv.Itoa(p.MinWriterVersion)
	var kv []string
	for _, k := range slices.Sorted(maps.Keys(props)) {
		kv = append(kv, k+"="+props[k])
	}
	t.add("", "", "")
	t.add("# Detailed Table Information", "", "")
	t.add("Name", name, "")
	if md.Description != nil {
		t.add("Comment", *md.Description, "")
	}
	t.add("Location", loc, "")
	t.add("Provider", "delta", "")
	t.add("Table Properties", "["+strings.Join(kv, ",")+"]", "")
}

// setting is SET's result, Spark's: a row of the key and its value.
func (x *run) setting(key, value string) {
	t := newRowTable(col("key", arrow.BinaryTypes.String), col("value", arrow.BinaryTypes.String))
	t.add(key, value)
	x.r.set(t)
}

// setConf is SET key = value, for the Spark settings lakelog honours.
func (x *run) setConf(n *setConf) error {
	switch strings.ToLower(n.key) {
	case "spark.databricks.delta.retentiondurationcheck.enabled":
		b, err := strconv.ParseBool(n.value)
		if err != nil {
			return x.errorf(n.pos, "%s = %s: want true or false", n.key, n.value)
		}
		x.s.retentionCheck = b
		x.setting(n.key, strconv.FormatBool(b))
		return nil
	case "spark.databricks.delta.schema.automerge.enabled":
		b, err := strconv.ParseBool(n.value)
		if err != nil {
			return x.errorf(n.pos, "%s = %s: want true or false", n.key, n.value)
		}
		x.s.autoMerge = b
		x.setting(n.key, strconv.FormatBool(b))
		return nil
	case "spark.sql.session.timezone":
		tz := n.value
		if strings.EqualFold(tz, "LOCAL") {
			tz = time.Local.String()
		}
		if _, err := expr.LoadTimeZone(tz); err != nil {
			return x.errorf(n.pos, "%s = %s: unknown time zone (want a region such as America/Los_Angeles or an offset such as +08:00)", n.key, n.value)
		}
		x.s.timeZone = tz
		x.setting(n.key, tz)
		return nil
	case "spark.sql.ansi.enabled":
		if b, err := strconv.ParseBool(n.value); err == nil && b {
			x.setting(n.key, "true")
			return nil
		}
		return x.errorf(n.pos, "SET %s = %s: lakelog evaluates in ANSI mode only (Spark's default): a value that does not fit is an error; try_cast, try_element_at and the like give NULL instead", n.key, n.value)
	}
	return x.errorf(n.pos, "SET %s: lakelog honours spark.databricks.delta.retentionDurationCheck.enabled, spark.databricks.delta.schema.autoMerge.enabled and spark.sql.session.timeZone", n.key)
}
