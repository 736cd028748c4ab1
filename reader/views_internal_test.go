package reader

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"

	"github.com/lakelog/lakelog/internal/arrowpool"
	"github.com/lakelog/lakelog/test/testseed"
)

// TestViewsRandom checks toView and filterRecord on random string arrays
// (nulls, empty, short and long values, sliced): the views hold the plain
// array's values, and filtering a batch of views and plain columns keeps
// the rows arrow-go's kernel keeps of the plain batch. Through the checked
// pool: nothing written past a buffer, nothing leaked.
func TestViewsRandom(t *testing.T) {
	seed := testseed.From(t, "VIEWS_SEED")
	r := rand.New(rand.NewPCG(seed, 7))
	pool := arrowpool.New(true)
	ctx := context.Background()
	for round := range 200 {
		n := 1 + r.IntN(300) // arrow-go's filter kernel panics on empty string arrays
		b := array.NewStringBuilder(pool)
		for range n {
			switch r.IntN(5) {
			case 0:
				b.AppendNull()
			case 1:
				b.Append("")
			case 2:
				b.Append(strings.Repeat("x", 13+r.IntN(40)))
			default:
				b.Append(fmt.Sprint(r.IntN(1e6)))
			}
		}
		full := b.NewArray()
		b.Release()
		from := r.IntN(n)
		plain := array.NewSlice(full, int64(from), int64(n))
		full.Release()
		v := toView(pool, plain, arrow.BinaryTypes.StringView)
		sv := v.(*array.StringView)
		if err := sv.ValidateFull(); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		ps := plain.(*array.String)
		for i := range ps.Len() {
			if ps.IsNull(i) != sv.IsNull(i) || ps.IsValid(i) && ps.Value(i) != sv.Value(i) {
				t.Fatalf("round %d: row %d: plain %q (null %v), view %q (null %v)", round, i, ps.Value(i), ps.IsNull(i), sv.Value(i), sv.IsNull(i))
			}
		}
		// A mask with nulls over a batch of the view and the plain column.
		mb := array.NewBooleanBuilder(pool)
		for range ps.Len() {
			if r.IntN(6) == 0 {
				mb.AppendNull()
			} else {
				mb.Append(r.IntN(2) == 0)
			}
		}
		mask := mb.NewArray()
		mb.Release()
		sc := arrow.NewSchema([]arrow.Field{{Name: "v", Type: arrow.BinaryTypes.StringView, Nullable: true},
			{Name: "p", Type: arrow.BinaryTypes.String, Nullable: true}}, nil)
		rec := array.NewRecordBatch(sc, []arrow.Array{v, plain}, int64(ps.Len()))
		got, err := filterRecord(ctx, rec, mask, pool)
		if err != nil {
			t.Fatal(err)
		}
		want, err := compute.FilterArray(compute.WithAllocator(ctx, pool), plain, mask, *compute.DefaultFilterOptions())
		if err != nil {
			t.Fatal(err)
		}
		gv, gp, w := got.Column(0).(*array.StringView), got.Column(1).(*array.String), want.(*array.String)
		if err := gv.ValidateFull(); err != nil {
			t.Fatalf("round %d: filtered views: %v", round, err)
		}
		if gv.Len() != w.Len() || gp.Len() != w.Len() {
			t.Fatalf("round %d: %d and %d rows kept, want %d", round, gv.Len(), gp.Len(), w.Len())
		}
		for i := range w.Len() {
			if gv.IsNull(i) != w.IsNull(i) || w.IsValid(i) && (gv.Value(i) != w.Value(i) || gp.Value(i) != w.Value(i)) {
				t.Fatalf("round %d: kept row %d: view %q, plain %q, want %q", round, i, gv.Value(i), gp.Value(i), w.Value(i))
			}
		}
		for _, a := range []interface{ Release() }{got, want, rec, mask, v, plain} {
			a.Release()
		}
	}
	if err := pool.Check(); err != nil {
		t.Fatal(err)
	}
}
