package cdc

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/objstore"
)

// beforeTruncate is silver's columns id, small, amount, code, flag and
// title once the fixture's records up to its TRUNCATE have landed.
var beforeTruncate = []string{
	`1 -32768 1.234 "A-1" false "ann"`,
	`2 32767 -98765.432 "B" true ""`,
	`4 2 99999.990 "full" true "c4ca4238a0b923820dcc509a"...(12800)`,
	`5 NULL NULL NULL NULL NULL`,
	`7 NULL 5.500 NULL NULL NULL`,
	`8 NULL NULL NULL NULL NULL`,
	`9 100000 NULL NULL NULL NULL`,
}

// silverRows reads silver's rows (columns cols) as text, sorted.
func silverRows(t *testing.T, store objstore.Store, cols ...string) []string {
	t.Helper()
	if _, err := deltalog.Open(context.Background(), store, ""); err != nil {
		t.Fatal(err)
	}
	return bronzeRows(t, store, cols...)
}

func TestSilverFollowsTheSource(t *testing.T) {
	ctx := context.Background()
	b := newBronze(t)
	st, err := objstore.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s := &Silver{Bronze: b.Store, Silver: st, Log: slog.New(slog.NewTextHandler(testWriter{t}, nil))}
	recs := fixtureRecords(t)
	upTo := func(tableOffset, txOffset int64) []*kgo.Record {
		var out []*kgo.Record
		for _, r := range recs {
			if r.Topic == "pg.public.cdc_types" && r.Offset <= tableOffset || r.Topic == "pg.transaction" && r.Offset <= txOffset {
				out = append(out, r)
			}
		}
		return out
	}
	cols := []string{"id", "small", "amount", "code", "flag", "title"}
	step := func(tableOffset, txOffset int64, want ...string) {
		t.Helper()
		if err := b.Land(ctx, upTo(tableOffset, txOffset)); err != nil {
			t.Fatal(err)
		}
		if err := s.CatchUp(ctx); err != nil {
			t.Fatal(err)
		}
		if got := silverRows(t, st, cols...); !slices.Equal(got, want) {
			t.Fatalf("after offset %d:\n%s\nwant\n%s", tableOffset, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
	// The snapshot and the first transaction, without its END: the
	// transaction waits.
	step(3, 0, `1 -32768 -1234567890.12 "A-1" true "ann"`)
	// Its END: it lands whole.
	step(3, 1,
		`1 -32768 -1234567890.12 "A-1" true "ann"`,
		`2 32767 0.01 "B" false ""`,
		`3 0 NULL NULL NULL NULL`,
		`4 1 99999.99 "big" true "c4ca4238a0b923820dcc509a"...(12800)`)
	// The TOASTed update: title is kept from silver's row.
	step(4, 3,
		`1 -32768 -1234567890.12 "A-1" true "ann"`,
		`2 32767 0.01 "B" false ""`,
		`3 0 NULL NULL NULL NULL`,
		`4 2 99999.99 "changed" true "c4ca4238a0b923820dcc509a"...(12800)`)
	// Everything but the truncate: a transaction with a delete, the
	// numeric scale change (widened, values at scale 3), a column added
	// with a default (existing rows get 7), smallint widened.
	step(18, 19, beforeTruncate...)
	if got := silverRows(t, st, "id", "seven"); strings.Join(got, ",") != "1 7,2 7,4 7,5 7,7 7,8 8,9 7" {
		t.Errorf("seven: %v", got)
	}
	// TRUNCATE empties it.
	step(19, 21)
	// Silver rebuilt from bronze's version 0 is the same.
	st2, err := objstore.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s2 := &Silver{Bronze: b.Store, Silver: st2}
	if err := s2.CatchUp(ctx); err != nil {
		t.Fatal(err)
	}
	if got := silverRows(t, st2, cols...); len(got) != 0 {
		t.Errorf("rebuilt: %v", got)
	}
}
