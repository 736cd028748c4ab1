package deletionvector_test

import (
	"context"
	"fmt"

	"github.com/RoaringBitmap/roaring/v2/roaring64"

	"github.com/lakelog/lakelog/deletionvector"
	"github.com/lakelog/lakelog/objstore"
)

// A commit's vectors: the small one stays inline in its descriptor, the
// larger one goes to a .bin file that Flush writes before the commit.
func Example() {
	ctx := context.Background()
	store := objstore.NewMem()
	w := deletionvector.NewWriter(store, "sales/")
	small, _ := w.Add(roaring64.BitmapOf(3, 4, 7))
	rows := roaring64.New()
	for r := uint64(0); r < 20000; r += 3 {
		rows.Add(r)
	}
	large, _ := w.Add(rows)
	if err := w.Flush(ctx); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(small.StorageType, small.Cardinality, *large.Offset, large.StorageType, large.Cardinality, len(w.Keys()))
	back, err := deletionvector.Load(ctx, store, "sales/", large)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(back.Equals(rows))
	// Output:
	// i 3 1 u 6667 1
	// true
}
