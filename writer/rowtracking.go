package writer

import (
	"fmt"
	"slices"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/deltalog"
)

// WithMaterializedRowTracking lets the input carry row tracking's
// materialized columns, named by the table's
// delta.rowTracking.materializedRowIdColumnName and
// ...RowCommitVersionColumnName (long, nullable): rewrites (DML,
// OPTIMIZE) give a row that moves to a new file its row ID there, and its
// row commit version when the row itself is unchanged, so that readers
// find them again (PROTOCOL.md "Row Tracking"); null means "the file's
// baseRowId + row index" and "the file's defaultRowCommitVersion". They
// are written under those names, after the table's columns, without
// column mapping ids. Input batches without them get nulls. A table
// without row tracking enabled refuses the option.
func WithMaterializedRowTracking() Option { return func(c *config) { c.rowTracking = true } }

// rowTrackingTable is the table's configuration with the materialized
// columns appended to its schema, for the files' layout and the
// conformer.
func rowTrackingTable(snap *deltalog.Snapshot) (*actions.TableConfig, []string, error) {
	if !snap.Config().RowTracking() {
		return nil, nil, fmt.Errorf("writer: materialized row tracking columns: the table does not have row tracking enabled (%s=true)", actions.PropEnableRowTracking)
	}
	p := snap.Properties()
	names := []string{p.MaterializedRowIDColumnName, p.MaterializedRowCommitVersionColumnName}
	schema := snap.Schema()
	for _, n := range names {
		if n == "" {
			return nil, nil, fmt.Errorf("writer: row tracking is enabled but %s or %s is not set", actions.PropMaterializedRowIDName, actions.PropMaterializedRowCommitVersionName)
		}
		if schema.FieldFold(n) != nil {
			return nil, nil, fmt.Errorf("writer: the table has a column %q, which row tracking materializes", n)
		}
	}
	fields := slices.Clone(schema.Fields)
	for _, n := range names {
		fields = append(fields, &actions.StructField{Name: n, Type: actions.TypeLong, Nullable: true})
	}
	text, err := actions.SchemaString(&actions.StructType{Fields: fields})
	if err != nil {
		return nil, nil, fmt.Errorf("writer: %w", err)
	}
	md := *snap.Metadata()
	md.SchemaString = text
	table, err := actions.NewTableConfig(snap.Protocol(), &md)
	if err != nil {
		return nil, nil, fmt.Errorf("writer: %w", err)
	}
	return table, names, nil
}
