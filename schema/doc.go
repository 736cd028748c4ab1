// Package schema changes the shape of a Delta table without rewriting
// its data: Spark's ALTER TABLE column operations and CHECK constraints.
//
// Each function is one commit on top of a snapshot, or none:
//
//	AddColumns        ALTER TABLE ADD COLUMNS (nested too, FIRST / AFTER)
//	RenameColumn      ALTER TABLE RENAME COLUMN (needs column mapping)
//	DropColumns       ALTER TABLE DROP COLUMNS (needs column mapping)
//	ChangeColumnType  ALTER TABLE ALTER COLUMN TYPE (the typeWidening widenings)
//	DropNotNull       ALTER TABLE ALTER COLUMN DROP NOT NULL
//	SetComment        ALTER TABLE ALTER COLUMN COMMENT
//	MoveColumn        ALTER TABLE ALTER COLUMN FIRST / AFTER
//	ReplaceColumns    ALTER TABLE REPLACE COLUMNS (drops need column mapping)
//	AddConstraint     ALTER TABLE ADD CONSTRAINT name CHECK (expr)
//	DropConstraint    ALTER TABLE DROP CONSTRAINT [IF EXISTS] name
//
// A change that cannot be made is a *ChangeError (wrapping ErrRefused)
// naming the column, constraint or property in the way, and nothing is
// committed. The commit carries Spark's operation name and parameters
// (ADD COLUMNS, RENAME COLUMN, DROP COLUMNS, CHANGE COLUMN, REPLACE
// COLUMNS, ADD CONSTRAINT, DROP CONSTRAINT) and upgrades the protocol when the new
// schema or properties need a feature (timestampNtz, checkConstraints,
// invariants). Rename and drop are metadata-only: data files keep their
// physical column names, so a column-mapped table is required, as in
// Spark. Like every metadata change, the commit conflicts with every
// concurrent transaction (conflict: a winner that changed the metadata
// aborts), so a writer that read the table before a rename or drop never
// commits files laid out for the old schema.
//
// Column paths are written as in SQL: a.b is field b of struct a,
// `odd name` is backquoted, and arr.element, m.key and m.value step into
// arrays and maps.
//
// # Schema changes
//
// Schema changes (`schema`). Each function copies the snapshot's
// schema and metadata, changes the copy, and commits it as one metadata
// commit with Spark's operation name and parameters, the protocol raised
// by the one protocol rule (`Transaction.SetMetadata`). Rename and
// drop need column mapping (data files keep physical names, so no file is
// rewritten); a column a CHECK constraint or generated column reads is
// neither renamed, dropped nor retyped (Spark's
// checkDependentExpressions); a renamed partition column stays one, and
// `delta.dataSkippingStatsColumns` follows renames and drops. Type changes
// are the typeWidening feature's (`actions.CanWidenType`), only with
// `delta.enableTypeWidening=true`, recorded in `delta.typeChanges`; old
// files are read widened. Being metadata changes, they conflict with every
// concurrent transaction.
package schema
