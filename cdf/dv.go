package cdf

import (
	"context"

	"github.com/RoaringBitmap/roaring/v2/roaring64"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/deletionvector"
	"github.com/lakelog/lakelog/deltalog"
)

// loadDV is the set of rows dv deletes (empty for nil).
func loadDV(ctx context.Context, snap *deltalog.Snapshot, dv *actions.DeletionVector) (*roaring64.Bitmap, error) {
	if dv == nil {
		return roaring64.New(), nil
	}
	return deletionvector.Load(ctx, snap.FileStore(), snap.Root(), dv)
}
