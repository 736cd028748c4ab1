package maintenance

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/deltalog"
)

// SetProperties sets table properties in one metadata commit: Spark's
// ALTER TABLE SET TBLPROPERTIES. Keys are normalised as Spark normalises
// them (actions.NormalizeTableProperties: a Delta property in any case);
// keys and values are checked as Create checks them
// (deltalog.CheckProperties: an unknown delta.* key, a malformed
// duration, interval, boolean or mode, a property lakelog cannot
// honour), and nothing is committed when one fails. A property
// that needs a table feature the protocol lacks (delta.appendOnly,
// delta.enableChangeDataFeed, delta.enableDeletionVectors) upgrades the
// protocol in the same commit, as Spark does; the protocol is never
// downgraded.
func SetProperties(ctx context.Context, snap *deltalog.Snapshot, props map[string]string, opts ...deltalog.TxnOption) (*deltalog.CommitResult, error) {
	if len(props) == 0 {
		return nil, fmt.Errorf("maintenance: set properties: no property given")
	}
	props, err := actions.NormalizeTableProperties(props)
	if err != nil {
		return nil, fmt.Errorf("maintenance: set properties: %w", err)
	}
	conf := maps.Clone(snap.Metadata().Configuration)
	if conf == nil {
		conf = map[string]string{}
	}
	if on, ok := actions.ParseBool(props[actions.PropEnableInCommitTimestamps]); ok && on {
		if !snap.Properties().EnableInCommitTimestamps {
			return nil, fmt.Errorf("maintenance: set properties: %w: enabling delta.enableInCommitTimestamps on an existing table is not supported yet (it must record the enablement version and timestamp)", deltalog.ErrUnsupportedFeature)
		}
	}
	maps.Copy(conf, props)
	return alterProperties(ctx, snap, conf, "SET TBLPROPERTIES", map[string]any{"properties": jsonValue(props)}, opts)
}

// UnsetProperties removes table properties in one metadata commit:
// Spark's ALTER TABLE UNSET TBLPROPERTIES. Keys are normalised as
// SetProperties normalises them. A key the table does not set is an error
// (Spark's, without IF EXISTS), and nothing is committed.
func UnsetProperties(ctx context.Context, snap *deltalog.Snapshot, keys []string, opts ...deltalog.TxnOption) (*deltalog.CommitResult, error) {
	if len(keys) == 0 {
		return nil, fmt.Errorf("maintenance: unset properties: no property given")
	}
	conf := maps.Clone(snap.Metadata().Configuration)
	for _, k := range keys {
		k = actions.NormalizePropertyKey(k)
		if _, ok := conf[k]; !ok {
			return nil, fmt.Errorf("maintenance: unset properties: the table does not set %q", k)
		}
		delete(conf, k)
	}
	return alterProperties(ctx, snap, conf, "UNSET TBLPROPERTIES", map[string]any{"properties": jsonValue(keys), "ifExists": "false"}, opts)
}

func alterProperties(ctx context.Context, snap *deltalog.Snapshot, conf map[string]string, op string, params map[string]any, opts []deltalog.TxnOption) (*deltalog.CommitResult, error) {
	// A property change removes no rows: it is allowed where an append is.
	if err := snap.Supports(deltalog.OpAppend); err != nil {
		return nil, fmt.Errorf("maintenance: %w", err)
	}
	md := *snap.Metadata()
	md.Configuration = conf
	if err := deltalog.CheckProperties(&md); err != nil {
		return nil, fmt.Errorf("maintenance: %s: %w", op, err)
	}
	tx := snap.NewTransaction(opts...)
	tx.SetMetadata(&md)
	p, err := mergeProtocol(deltalog.MinimalProtocol(&md, snap.Schema()), snap.Protocol())
	if err != nil {
		return nil, fmt.Errorf("maintenance: %s: %w", op, err)
	}
	if p != snap.Protocol() {
		tx.SetProtocol(p)
	}
	tx.SetOperation(op, params, nil)
	res, err := tx.Commit(ctx)
	if err != nil {
		return nil, fmt.Errorf("maintenance: %s: %w", op, err)
	}
	return res, nil
}

// jsonValue is v as JSON text, the form Spark gives map and list
// operationParameters.
func jsonValue(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	return string(b)
}
