package maintenance

import (
	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/deletionvector"
	"github.com/lakelog/lakelog/deltalog"
)

// dvKey is the store key of the file a deletion vector is stored in, or ""
// when it has none this store can reach: an inline vector (storage type
// "i"), or an absolute path ("p") outside the store, which neither RESTORE
// can check nor VACUUM delete.
func dvKey(snap *deltalog.Snapshot, dv *actions.DeletionVector) (string, error) {
	if dv == nil || dv.StorageType == deletionvector.StorageInline {
		return "", nil
	}
	k, err := deletionvector.Key(snap.Store(), snap.Root(), dv)
	if err != nil && dv.StorageType == deletionvector.StorageAbsolute {
		return "", nil
	}
	return k, err
}
