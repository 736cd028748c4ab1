package writer

import (
	"fmt"
	"iter"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/deltalog"
)

// overwriteSchema is WithOverwriteSchema's request: the table's schema
// becomes the input's, partitioned by partitionBy.
type overwriteSchema struct {
	partitionBy []string
}

// refuseOverwriteSchema refuses WithOverwriteSchema on a write that does
// not replace the whole table (Spark ignores the option there; lakelog
// says so instead of silently keeping the schema).
func refuseOverwriteSchema(cfg *config, op string) error {
	if cfg.overwrite == nil {
		return nil
	}
	return &SchemaError{Reason: op + " cannot overwrite the schema: overwrite-schema replaces the schema only when the whole table is overwritten (writer.Overwrite, lakelog append --mode overwrite)"}
}

// peekSchema returns the schema of the first batch of batches and a
// sequence that yields every batch, the first included; the schema is nil
// when the input is empty or fails first (the sequence then yields that
// error).
func peekSchema(batches iter.Seq2[arrow.RecordBatch, error]) (*arrow.Schema, iter.Seq2[arrow.RecordBatch, error], func()) {
	next, stop := iter.Pull2(batches)
	first, ferr, ok := next()
	var sc *arrow.Schema
	if ok && ferr == nil && first != nil {
		sc = first.Schema()
	}
	seq := func(yield func(arrow.RecordBatch, error) bool) {
		if !ok {
			return
		}
		if !yield(first, ferr) || ferr != nil {
			return
		}
		for {
			rec, err, more := next()
			if !more || !yield(rec, err) || err != nil {
				return
			}
		}
	}
	return sc, seq, stop
}

// overwriteMetadata is the table's metadata with the schema replaced by
// in's (every column nullable, as Spark writes a DataFrame's schema) and
// the partition columns by o.partitionBy. A column-mapped table's columns
// all get new ids and physical names above its maxColumnId (the old
// files go, so nothing reads the old names). It reports false, and
// returns the old metadata, when the columns, their types and the
// partitioning are those the table has.
func (o *overwriteSchema) metadata(snap *deltalog.Snapshot, in *arrow.Schema) (*actions.Metadata, bool, error) {
	st, err := actions.FromArrowSchema(in)
	if err != nil {
		return nil, false, &SchemaError{Reason: fmt.Sprintf("overwrite-schema: %v", err)}
	}
	st = actions.NullableType(st).(*actions.StructType)
	seen := map[string]string{}
	for _, f := range st.Fields {
		k := strings.ToLower(f.Name)
		if prev, dup := seen[k]; dup {
			return nil, false, &SchemaError{Column: f.Name, Reason: fmt.Sprintf("overwrite-schema: the input has the column twice (%q and %q)", prev, f.Name)}
		}
		seen[k] = f.Name
	}
	parts := make([]string, 0, len(o.partitionBy))
	for _, p := range o.partitionBy {
		f := st.FieldFold(p)
		if f == nil {
			return nil, false, &SchemaError{Column: p, Reason: "overwrite-schema: partition column is not in the input (columns: " + strings.Join(st.Names(), ", ") + ")"}
		}
		if slices.Contains(parts, f.Name) {
			return nil, false, &SchemaError{Column: f.Name, Reason: "overwrite-schema: partition column given twice"}
		}
		switch f.Type.(type) {
		case *actions.StructType, *actions.ArrayType, *actions.MapType:
			return nil, false, &SchemaError{Column: f.Name, Reason: fmt.Sprintf("overwrite-schema: a column of type %s cannot partition a table", f.Type)}
		}
		parts = append(parts, f.Name)
	}
	if len(parts) == len(st.Fields) && len(parts) > 0 {
		return nil, false, &SchemaError{Reason: "overwrite-schema: a table needs at least one column that is not a partition column"}
	}
	old := snap.Metadata()
	if sameColumns(snap.Schema(), st) && slices.Equal(old.PartitionColumns, parts) {
		return old, false, nil
	}
	md := *old
	md.PartitionColumns = parts
	md.Configuration = maps.Clone(old.Configuration)
	props := snap.Properties()
	if snap.Config().ColumnMapped() {
		var maxID int64
		st, maxID = actions.AssignColumnMapping(st, props.ColumnMappingMaxColumnID, false)
		md.Configuration[actions.PropColumnMappingMaxColumnID] = strconv.FormatInt(maxID, 10)
	}
	text, err := actions.SchemaString(st)
	if err != nil {
		return nil, false, fmt.Errorf("writer: overwrite-schema: %w", err)
	}
	md.SchemaString = text
	return &md, true, nil
}

// sameColumns reports whether b has a's columns, names and types, in
// a's order (nullability and field metadata aside).
func sameColumns(a, b *actions.StructType) bool {
	return slices.EqualFunc(a.Fields, b.Fields, func(x, y *actions.StructField) bool {
		return x.Name == y.Name && x.Type.String() == y.Type.String()
	})
}
