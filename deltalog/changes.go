package deltalog

import (
	"fmt"
	"maps"

	"github.com/lakelog/lakelog/actions"
)

// Changes are what one operation commits: the data files it wrote and
// removed, the files whose deletion vector it changed, its change data
// files, a metadata change, and commitInfo's operation, parameters and
// metrics as Spark writes them for it. Every operation that writes (the
// writer's append and overwrite, dml's replaceWhere, DELETE, UPDATE and
// MERGE, schema changes, OPTIMIZE, RESTORE, property changes, CONVERT)
// hands its changes to Transaction.Stage, the one place where they
// become the commit's actions: the protocol follows a metadata change by
// the one rule (SetMetadata), identity high-water marks are carried into
// the metadata, and the commit options' parameters are merged.
type Changes struct {
	// Operation, Parameters and Metrics are commitInfo's operation,
	// operationParameters and operationMetrics (values as Spark writes
	// them).
	Operation  string
	Parameters map[string]any
	Metrics    map[string]any
	// Adds are the data files written.
	Adds []*actions.Add
	// Removes are live files removed whole; Rearranged says that removing
	// them changes no data (OPTIMIZE: dataChange=false).
	Removes    []*actions.Add
	Rearranged bool
	// Vectors are files re-added with a new deletion vector: each is
	// removed as it was (Old) and added with its new vector (New), as
	// Spark commits them.
	Vectors []VectorChange
	// ChangeData are the change data files (cdc actions).
	ChangeData []*actions.AddCDCFile
	// Metadata is the table's new metadata, when the operation changes
	// the schema or the properties; nil for none.
	Metadata *actions.Metadata
	// IdentityMarks are the identity columns' high-water marks after the
	// values the operation generated, by column name: they are carried
	// into the commit's metadata, and a commit whose only metadata change
	// they are is tagged as Spark tags it, so that concurrent transactions
	// that change no metadata rebase over it.
	IdentityMarks map[string]int64
	// Tags are commitInfo tags (actions.Tag*).
	Tags map[string]string
}

// VectorChange is one file whose deletion vector a commit changes.
type VectorChange struct{ Old, New *actions.Add }

// Stage adds an operation's changes to the transaction. A metadata change
// is refused here, before the commit, when the protocol rule refuses it
// (SetMetadata).
func (tx *Transaction) Stage(c *Changes) error {
	if c.Metadata != nil {
		if err := tx.SetMetadata(c.Metadata); err != nil {
			return err
		}
	}
	if err := tx.advanceIdentity(c.IdentityMarks); err != nil {
		return err
	}
	for _, a := range c.Removes {
		tx.RemoveFile(a, !c.Rearranged)
	}
	for _, v := range c.Vectors {
		tx.RemoveFile(v.Old, true)
		tx.acts = append(tx.acts, actions.Action{Add: v.New})
	}
	for _, a := range c.Adds {
		tx.acts = append(tx.acts, actions.Action{Add: a})
	}
	for _, cdc := range c.ChangeData {
		tx.acts = append(tx.acts, actions.Action{CDC: cdc})
	}
	for k, v := range c.Tags {
		tx.SetTag(k, v)
	}
	if c.Operation != "" {
		tx.SetOperation(c.Operation, c.Parameters, c.Metrics)
	}
	return nil
}

// advanceIdentity carries identity high-water marks into the metadata
// the commit leaves: on top of the metadata the commit already sets (a
// widened schema) or the snapshot's.
func (tx *Transaction) advanceIdentity(marks map[string]int64) error {
	if len(marks) == 0 {
		return nil
	}
	onlyMarks := !tx.SetsMetadata()
	md := tx.Metadata()
	schema, err := md.Schema()
	if err != nil {
		return fmt.Errorf("deltalog: %w", err)
	}
	adv := make(map[string]int64, len(marks))
	for name, m := range marks {
		i := schema.IndexFold(name)
		if i < 0 {
			return fmt.Errorf("deltalog: identity column %q is not in the schema", name)
		}
		def, ok, err := actions.IdentityOf(schema.Fields[i])
		if err != nil || !ok {
			return fmt.Errorf("deltalog: identity column %q: %v", name, err)
		}
		adv[schema.Fields[i].Name] = def.Advance(m)
	}
	s, err := actions.SchemaString(actions.WithIdentityHighWaterMarks(schema, adv))
	if err != nil {
		return fmt.Errorf("deltalog: %w", err)
	}
	nmd := *md
	nmd.SchemaString = s
	nmd.Configuration = maps.Clone(md.Configuration)
	if err := tx.SetMetadata(&nmd); err != nil {
		return err
	}
	if onlyMarks {
		tx.SetTag(actions.TagIdentitySchemaUpdate, "true")
	}
	return nil
}
