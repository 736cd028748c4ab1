package maintenance

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/deltalog"
)

// SetProperties sets table properties in one metadata commit: Spark's
// ALTER TABLE SET TBLPROPERTIES (AlterProperties with nothing to unset).
func SetProperties(ctx context.Context, snap *deltalog.Snapshot, props map[string]string, opts ...deltalog.CommitOption) (*deltalog.CommitResult, error) {
	return AlterProperties(ctx, snap, props, nil, opts...)
}

// UnsetProperties removes table properties in one metadata commit:
// Spark's ALTER TABLE UNSET TBLPROPERTIES (AlterProperties with nothing
// to set).
func UnsetProperties(ctx context.Context, snap *deltalog.Snapshot, keys []string, opts ...deltalog.CommitOption) (*deltalog.CommitResult, error) {
	return AlterProperties(ctx, snap, nil, keys, opts...)
}

// AlterProperties sets the properties of set and removes the keys of
// unset in one metadata commit, or commits nothing: Spark's ALTER TABLE
// SET TBLPROPERTIES and UNSET TBLPROPERTIES, both at once when both are
// given (the commit is then a SET TBLPROPERTIES whose operationParameters
// also hold unsetProperties).
//
// Keys of Delta's own properties are normalised from any case to their
// canonical spelling (actions.NormalizeTableProperties), as Spark
// normalises them. Keys and values are checked as Create checks them
// (deltalog.CheckProperties: an unknown delta.* key, a malformed
// duration, interval, boolean or mode, a property lakelog cannot honour);
// a key to unset that the table does not set is an error (Spark's,
// without IF EXISTS), as is a key both set and unset. A property that
// needs a table feature the protocol lacks (delta.appendOnly,
// delta.enableChangeDataFeed, delta.enableDeletionVectors) upgrades the
// protocol in the same commit, as Spark does; the protocol is never
// downgraded.
func AlterProperties(ctx context.Context, snap *deltalog.Snapshot, set map[string]string, unset []string, opts ...deltalog.CommitOption) (*deltalog.CommitResult, error) {
	if snap == nil {
		return nil, fmt.Errorf("maintenance: %w", deltalog.ErrNoSnapshot)
	}
	refuse := func(format string, a ...any) error {
		return fmt.Errorf("maintenance: ALTER TABLE: %s; nothing was committed", fmt.Sprintf(format, a...))
	}
	if len(set) == 0 && len(unset) == 0 {
		return nil, refuse("no property to set or unset")
	}
	set, err := actions.NormalizeTableProperties(set)
	if err != nil {
		return nil, refuse("%v", err)
	}
	// delta.feature.NAME = 'supported' adds the feature to the protocol
	// (Spark's explicit enablement); it is no property of the metadata.
	requested := set
	set, features, err := deltalog.SplitFeatureProperties(set)
	if err != nil {
		return nil, refuse("%v", err)
	}
	unset = slices.Clone(unset)
	for i, k := range unset {
		unset[i] = actions.NormalizePropertyKey(k)
	}
	for _, k := range append(slices.Sorted(maps.Keys(set)), unset...) {
		if strings.HasPrefix(k, actions.PropConstraintPrefix) {
			// As Spark: a constraint's expression is checked against the
			// rows when it is added.
			return nil, refuse("%s: CHECK constraints are added and dropped with schema.AddConstraint and schema.DropConstraint", k)
		}
	}
	if on, ok := actions.ParseBool(set[actions.PropEnableRowTracking]); ok && on && !snap.Config().RowTracking() {
		// As Spark: upgrade and backfill first, then set the property.
		if snap, err = enableRowTracking(ctx, snap, opts); err != nil {
			return nil, err
		}
	}
	conf := maps.Clone(snap.Metadata().Configuration)
	if conf == nil {
		conf = map[string]string{}
	}
	for _, k := range unset {
		if _, ok := set[k]; ok {
			return nil, refuse("%q is both set and unset", k)
		}
		if _, ok := conf[k]; !ok {
			return nil, refuse("the table does not set %q", k)
		}
		delete(conf, k)
	}
	maps.Copy(conf, set)
	op, params := "SET TBLPROPERTIES", map[string]any{}
	switch {
	case len(requested) == 0:
		op, params = "UNSET TBLPROPERTIES", map[string]any{"properties": actions.JSONText(unset), "ifExists": "false"}
	case len(unset) == 0:
		params["properties"] = actions.JSONText(requested)
	default:
		params["properties"], params["unsetProperties"] = actions.JSONText(requested), actions.JSONText(unset)
	}
	return alterProperties(ctx, snap, conf, features, op, params, opts)
}

func alterProperties(ctx context.Context, snap *deltalog.Snapshot, conf map[string]string, features []string, op string, params map[string]any, opts []deltalog.CommitOption) (*deltalog.CommitResult, error) {
	// A property change removes no rows: it is allowed where an append
	// is, and on a table with an invalid property, which it may mend
	// (CheckProperties checks the properties it leaves).
	if err := snap.Supports(deltalog.OpAppend); err != nil && !errors.Is(err, deltalog.ErrInvalidProperty) {
		return nil, fmt.Errorf("maintenance: %w", err)
	}
	md := *snap.Metadata()
	md.Configuration = conf
	if err := deltalog.CheckProperties(&md); err != nil {
		return nil, fmt.Errorf("maintenance: %s: %w", op, err)
	}
	schema := snap.Schema()
	if snap.Properties().ColumnMappingMode == actions.ColumnMappingNone && md.Properties().ColumnMappingMode != actions.ColumnMappingNone {
		// Enabling column mapping: the columns keep their names as
		// physical names (the data files use them) and get ids, as Spark
		// does. Other mode changes are refused at commit.
		mapped, maxID := actions.AssignColumnMapping(schema, snap.Properties().ColumnMappingMaxColumnID, true)
		text, err := actions.SchemaString(mapped)
		if err != nil {
			return nil, fmt.Errorf("maintenance: %s: %w", op, err)
		}
		md.SchemaString, schema = text, mapped
		md.Configuration[actions.PropColumnMappingMaxColumnID] = strconv.FormatInt(maxID, 10)
	}
	if on, _ := actions.ParseBool(conf[actions.PropSymlinkFormatManifest]); on {
		// As Spark: a manifest lists whole files, so no live file may
		// have deletion vectors when it is turned on.
		for f := range snap.Files() {
			if f.DeletionVector != nil {
				return nil, fmt.Errorf("maintenance: %s: %s=true: %s has deletion vectors, which the manifest's readers would not apply; purge them first (OPTIMIZE rewrites the files that have them)", op, actions.PropSymlinkFormatManifest, f.Path)
			}
		}
	}
	tx := snap.NewTransaction(opts...)
	if res, err := tx.Start(); err != nil || res != nil {
		return res, err
	}
	if err := tx.EnableFeatures(features...); err != nil {
		return nil, fmt.Errorf("maintenance: %s: %w", op, err)
	}
	if err := tx.Stage(&deltalog.Changes{Operation: op, Parameters: params, Metadata: &md}); err != nil {
		return nil, fmt.Errorf("maintenance: %s: %w", op, err)
	}
	res, err := tx.Commit(ctx)
	if err != nil {
		return nil, fmt.Errorf("maintenance: %s: %w", op, err)
	}
	return res, nil
}
