package dml

import (
	"fmt"
	"maps"
	"strconv"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/writer"
)

// This file is MERGE's schema evolution (WithSchemaEvolution): the
// source's new columns added to the table in the MERGE's commit.

// evolve appends to m.table the source's top-level columns that the
// target lacks (names compared ignoring case), when a clause is UPDATE
// SET * or INSERT *, as Spark's MERGE WITH SCHEMA EVOLUTION does; the
// new metadata (a mapped table's new columns with ids and physical
// names) is written by the job's files and committed with them.
func (m *merge) evolve(clauses []Clause) error {
	star := false
	for _, c := range clauses {
		star = star || (c.All && (c.Kind == MatchedUpdate || c.Kind == NotMatchedInsert))
	}
	if !star {
		return nil
	}
	target := m.snap.Schema()
	var added []*actions.StructField
	for _, f := range m.srcSchema.Fields {
		if target.IndexFold(f.Name) >= 0 {
			continue
		}
		if f.Name == actions.ChangeTypeColumn && m.cdf {
			return fmt.Errorf("dml: MERGE: schema evolution: the source column %q is reserved by the change data feed", f.Name)
		}
		added = append(added, &actions.StructField{Name: f.Name, Type: actions.NullableType(f.Type), Nullable: true})
	}
	if len(added) == 0 {
		return nil
	}
	st := actions.CopyStruct(target)
	st.Fields = append(st.Fields, added...)
	md := *m.snap.Metadata()
	md.Configuration = maps.Clone(md.Configuration)
	if m.snap.Config().ColumnMapped() {
		props := m.snap.Properties()
		var maxID int64
		st, maxID = actions.AssignColumnMapping(st, props.ColumnMappingMaxColumnID, false)
		md.Configuration[actions.PropColumnMappingMaxColumnID] = strconv.FormatInt(maxID, 10)
	}
	text, err := actions.SchemaString(st)
	if err != nil {
		return fmt.Errorf("dml: MERGE: schema evolution: %w", err)
	}
	md.SchemaString = text
	// The commit carries the new metadata, and the protocol follows it by
	// deltalog's one rule (a new timestamp_ntz column is refused unless
	// the table has the feature), before any file is written.
	if err := m.tx.SetMetadata(&md); err != nil {
		return fmt.Errorf("dml: MERGE: schema evolution: %w", err)
	}
	s, err := m.cfg.writer.With(writer.WithSchemaChange(m.tx.Config()))
	if err != nil {
		return fmt.Errorf("dml: MERGE: %w", err)
	}
	m.cfg.writer, m.table = s, st
	return nil
}
