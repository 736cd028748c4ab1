package cdf

import (
	"context"
	"fmt"

	"github.com/RoaringBitmap/roaring/v2/roaring64"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/reader"
)

// loadDV is the set of rows dv deletes (empty for nil).
func loadDV(ctx context.Context, snap *deltalog.Snapshot, dv *actions.DeletionVector) (*roaring64.Bitmap, error) {
	if dv == nil {
		return roaring64.New(), nil
	}
	_ = ctx
	_ = snap
	return nil, fmt.Errorf("%w: deletionVectors: lakelog does not load deletion vectors yet", reader.ErrUnsupported)
}
