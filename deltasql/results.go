package deltasql

import (
	"errors"
	"fmt"
	"iter"
	"maps"
	"slices"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lakelog/lakelog/deltalog"
)

// Result is what a statement returns: rows (a SELECT's, or the row Spark
// returns for DELETE, MERGE, RESTORE, DESCRIBE HISTORY, ...) and, for a
// statement that committed, the version.
type Result struct {
	// Kind is the statement: SELECT, DELETE, MERGE, DESCRIBE HISTORY, ...
	Kind string
	// Schema is the rows' columns; nil when the statement returns none
	// (CREATE TABLE, ALTER TABLE).
	Schema *arrow.Schema
	// Version is the version the statement committed (the last, for an
	// OPTIMIZE of several commits); nil when it committed none.
	Version *int64
	// Summary is one line for people: "MERGE: version 4".
	Summary string
	// Command is set for a statement that changes a table (INSERT,
	// DELETE, CREATE, ALTER, OPTIMIZE, VACUUM, CONVERT, ...), whether or
	// not it committed: what a script wants from it is Version and
	// Metrics, beside the row Spark returns for it (Schema) if any.
	Command bool
	// Operation and Metrics are the operation and operationMetrics of the
	// commitInfo of the statement's last commit ("" and nil when it
	// committed none); metrics are as the log holds them (counts as
	// strings).
	Operation string
	Metrics   map[string]any

	rows    iter.Seq2[arrow.RecordBatch, error]
	commits []*deltalog.CommitResult
}

// Rows streams the result's rows; read them once. Each batch is released
// when the loop body returns (Retain it to keep it); an error ends the
// sequence.
func (r *Result) Rows() iter.Seq2[arrow.RecordBatch, error] {
	if r.rows == nil {
		return func(func(arrow.RecordBatch, error) bool) {}
	}
	return r.rows
}

// WaitHooks waits for the post-commit hooks the statement's commits
// started (deltalog.CommitResult.WaitHooks) and returns their failures
// joined; they do not undo the commits.
func (r *Result) WaitHooks() error {
	var errs []error
	for _, c := range r.commits {
		if err := c.WaitHooks(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// committed records a commit of the statement.
func (r *Result) committed(c *deltalog.CommitResult) {
	if c == nil {
		return
	}
	r.commits = append(r.commits, c)
	v := c.Version
	r.Version = &v
	if ci := c.CommitInfo(); ci != nil {
		r.Operation, r.Metrics = ci.Operation, ci.OperationMetrics
	}
}

// rowTable builds a small result of fixed columns from Go values.
type rowTable struct {
	schema *arrow.Schema
	b      *array.RecordBuilder
}

var (
	mapOfStrings  = arrow.MapOf(arrow.BinaryTypes.String, arrow.BinaryTypes.String)
	listOfStrings = arrow.ListOf(arrow.BinaryTypes.String)
	timestampUTC  = &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}
)

func newRowTable(fields ...arrow.Field) *rowTable {
	s := arrow.NewSchema(fields, nil)
	return &rowTable{schema: s, b: array.NewRecordBuilder(memory.DefaultAllocator, s)}
}

func col(name string, t arrow.DataType) arrow.Field {
	return arrow.Field{Name: name, Type: t, Nullable: true}
}

// add appends one row: a value per column (nil for NULL): string, int64,
// float64, bool, time.Time, map[string]string, []string, or for a struct
// column []any holding its fields' values in order.
func (t *rowTable) add(vals ...any) {
	for i, v := range vals {
		appendValue(t.b.Field(i), v)
	}
}

func appendValue(fb array.Builder, v any) {
	if v == nil {
		fb.AppendNull()
		return
	}
	switch b := fb.(type) {
	case *array.StringBuilder:
		b.Append(v.(string))
	case *array.Int64Builder:
		b.Append(v.(int64))
	case *array.Float64Builder:
		b.Append(v.(float64))
	case *array.BooleanBuilder:
		b.Append(v.(bool))
	case *array.TimestampBuilder:
		b.Append(arrow.Timestamp(v.(time.Time).UnixMicro()))
	case *array.MapBuilder:
		m := v.(map[string]string)
		b.Append(true)
		kb, vb := b.KeyBuilder().(*array.StringBuilder), b.ItemBuilder().(*array.StringBuilder)
		for _, k := range slices.Sorted(maps.Keys(m)) {
			kb.Append(k)
			vb.Append(m[k])
		}
	case *array.ListBuilder:
		l := v.([]string)
		b.Append(true)
		eb := b.ValueBuilder().(*array.StringBuilder)
		for _, s := range l {
			eb.Append(s)
		}
	case *array.StructBuilder:
		fields := v.([]any)
		b.Append(true)
		for i, f := range fields {
			appendValue(b.FieldBuilder(i), f)
		}
	default:
		panic(fmt.Sprintf("deltasql: no result column of type %s", fb.Type()))
	}
}

// rows ends the table: its one batch.
func (t *rowTable) rows() iter.Seq2[arrow.RecordBatch, error] {
	rec := t.b.NewRecordBatch()
	t.b.Release()
	return func(yield func(arrow.RecordBatch, error) bool) {
		defer rec.Release()
		yield(rec, nil)
	}
}

// set makes r return the table's rows.
func (r *Result) set(t *rowTable) {
	r.Schema = t.schema
	r.rows = t.rows()
}
