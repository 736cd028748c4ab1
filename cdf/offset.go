package cdf

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/objstore"
)

// OffsetStore keeps a follower's offset: the last version it processed
// (Batch.Last). A consumer saves it once the batch's effects are durable;
// on restart Resume starts after it, so no version is skipped or
// processed twice, provided saving and processing are one step (the
// target table's app transaction, TxnOffset) or processing is idempotent.
type OffsetStore interface {
	// Load returns the saved offset; ok is false when none was saved.
	Load(ctx context.Context) (version int64, ok bool, err error)
	// Save records version as processed.
	Save(ctx context.Context, version int64) error
}

// Resume is the start of a follower whose offsets o keeps: after the
// saved offset, or otherwise when none was saved.
func Resume(ctx context.Context, o OffsetStore, otherwise Start) (Start, error) {
	v, ok, err := o.Load(ctx)
	if err != nil {
		return Start{}, err
	}
	if !ok {
		return otherwise, nil
	}
	return After(v), nil
}

// ObjectOffset keeps the offset in an object of store (a file on local
// disk), written whole on each Save: a reader sees the old offset or the
// new one.
func ObjectOffset(store objstore.Store, key string) OffsetStore {
	return &objectOffset{store: store, key: key}
}

type objectOffset struct {
	store objstore.Store
	key   string
}

func (o *objectOffset) Load(ctx context.Context) (int64, bool, error) {
	b, err := o.store.Get(ctx, o.key)
	if errors.Is(err, objstore.ErrNotFound) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("cdf: offset %s: %w", o.key, err)
	}
	v, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil || v < 0 {
		return 0, false, fmt.Errorf("cdf: offset %s: %q is not a version", o.key, strings.TrimSpace(string(b)))
	}
	return v, true, nil
}

func (o *objectOffset) Save(ctx context.Context, version int64) error {
	body := strconv.FormatInt(version, 10) + "\n"
	if err := o.store.Put(ctx, o.key, bytes.NewReader([]byte(body)), objstore.PutOptions{}); err != nil {
		return fmt.Errorf("cdf: offset %s: %w", o.key, err)
	}
	return nil
}

// TxnOffset reads the offset from the target table's app transaction:
// the version of txn(appID) in the table at root, which a consumer
// records in the same commit as the batch's effects
// (writer.WithCommitOptions(deltalog.WithAppTransaction(appID, batch.Last))), so that a batch lands
// once whatever point the consumer dies at. Save does nothing: the
// commit saved it. A target that does not exist yet has no offset.
func TxnOffset(store objstore.Store, root, appID string) OffsetStore {
	return &txnOffset{store: store, root: root, appID: appID}
}

type txnOffset struct {
	store       objstore.Store
	root, appID string
}

func (o *txnOffset) Load(ctx context.Context) (int64, bool, error) {
	snap, err := deltalog.Open(ctx, o.store, o.root)
	if errors.Is(err, deltalog.ErrNotTable) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("cdf: offset of %s: %w", o.appID, err)
	}
	v, ok := snap.TxnVersion(o.appID)
	return v, ok, nil
}

func (o *txnOffset) Save(context.Context, int64) error { return nil }
