package cdc

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/reader"
)

// fixtureRecords are the fixture's records as Kafka records of the
// topics pg.public.cdc_types and pg.transaction.
func fixtureRecords(t *testing.T) []*kgo.Record {
	var out []*kgo.Record
	for _, r := range readFixture(t) {
		topic := "pg.public.cdc_types"
		if r.Topic == "transaction" {
			topic = "pg.transaction"
		}
		rec := &kgo.Record{Topic: topic, Offset: r.Offset}
		if string(r.Key) != "null" {
			rec.Key = r.Key
		}
		if string(r.Value) != "null" {
			rec.Value = r.Value
		}
		out = append(out, rec)
	}
	return out
}

func newBronze(t *testing.T) *Bronze {
	store, err := objstore.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return &Bronze{Store: store, Topic: "pg.public.cdc_types", TransactionTopic: "pg.transaction",
		Decoder: NewDecoder(WithVariableNumeric(NumericMode{AsString: true})), Log: slog.New(slog.NewTextHandler(testWriter{t}, nil))}
}

// bronzeRows reads the table's rows as "op id txid" text, by offset.
func bronzeRows(t *testing.T, store objstore.Store, cols ...string) []string {
	t.Helper()
	snap, err := deltalog.Open(context.Background(), store, "")
	if err != nil {
		t.Fatal(err)
	}
	scan, err := reader.NewScan(snap, reader.WithColumns(cols...))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for rec, err := range scan.Records(context.Background()) {
		if err != nil {
			t.Fatal(err)
		}
		for i := range int(rec.NumRows()) {
			var parts []string
			for c := range int(rec.NumCols()) {
				parts = append(parts, valueText(arrowValue(rec.Column(c), i)))
			}
			out = append(out, strings.Join(parts, " "))
		}
	}
	slices.Sort(out)
	return out
}

func TestBronzeLandsEachChangeOnce(t *testing.T) {
	ctx := context.Background()
	b := newBronze(t)
	if _, err := openOrCreate(ctx, b.Store, bronzeColumns, nil); err != nil {
		t.Fatal(err)
	}
	recs := fixtureRecords(t)
	// The records in three polls, as a consumer might get them.
	for _, part := range [][]*kgo.Record{recs[:9], recs[9:30], recs[30:]} {
		if err := b.Land(ctx, part); err != nil {
			t.Fatal(err)
		}
	}
	first := bronzeRows(t, b.Store, ColTopic, ColOffset, ColOp, "id", "small", "amount")
	// Landing the same records again lands nothing (offsets).
	if err := b.Land(ctx, recs); err != nil {
		t.Fatal(err)
	}
	// Connect crashed and Debezium re-sent the streamed changes from the
	// toast update on, at new offsets: nothing lands (positions).
	var resent []*kgo.Record
	next := int64(100)
	for _, r := range recs {
		if r.Topic == "pg.public.cdc_types" && r.Offset >= 4 || r.Topic == "pg.transaction" && r.Offset >= 2 {
			cp := *r
			cp.Offset = next
			next++
			resent = append(resent, &cp)
		}
	}
	if err := b.Land(ctx, resent); err != nil {
		t.Fatal(err)
	}
	got := bronzeRows(t, b.Store, ColTopic, ColOffset, ColOp, "id", "small", "amount")
	if !slices.Equal(got, first) {
		t.Fatalf("after the re-sent events:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(first, "\n"))
	}
	want := []string{
		// smallint widened to integer, numeric(12,2) to numeric(14,3).
		`"pg.public.cdc_types" 0 "r" 1 -32768 -1234567890.120`,
		`"pg.public.cdc_types" 1 "c" 2 32767 0.010`,
		`"pg.public.cdc_types" 11 "d" 3 NULL NULL`,
		`"pg.public.cdc_types" 13 "u" 1 -32768 1.234`,
		`"pg.public.cdc_types" 14 "u" 2 32767 -98765.432`,
		`"pg.public.cdc_types" 15 "c" 7 NULL 5.500`,
		`"pg.public.cdc_types" 16 "c" 8 NULL NULL`,
		`"pg.public.cdc_types" 17 "c" 9 100000 NULL`,
		`"pg.public.cdc_types" 18 "u" 4 2 99999.990`,
		`"pg.public.cdc_types" 19 "t" NULL NULL NULL`,
		`"pg.public.cdc_types" 2 "c" 3 0 NULL`,
		`"pg.public.cdc_types" 3 "c" 4 1 99999.990`,
		`"pg.public.cdc_types" 4 "u" 4 2 99999.990`,
		`"pg.public.cdc_types" 5 "u" 1 -32768 -1234567890.120`,
		`"pg.public.cdc_types" 6 "u" 2 32767 0.010`,
		`"pg.public.cdc_types" 7 "c" 5 NULL NULL`,
		`"pg.public.cdc_types" 8 "c" 6 NULL NULL`,
		`"pg.public.cdc_types" 9 "d" 6 NULL NULL`,
	}
	var events []string
	for _, r := range got {
		if strings.HasPrefix(r, `"pg.public.cdc_types"`) {
			events = append(events, r)
		}
	}
	if !slices.Equal(events, want) {
		t.Errorf("events:\n%s\nwant\n%s", strings.Join(events, "\n"), strings.Join(want, "\n"))
	}
	// One END per transaction, with its events of the table.
	ends := bronzeRows(t, b.Store, ColOp, ColTxID, ColTxEvents, ColUnavailable)
	var endRows, toast []string
	for _, r := range ends {
		if strings.HasPrefix(r, `"END"`) {
			endRows = append(endRows, r)
		}
		if !strings.HasSuffix(r, "NULL") {
			toast = append(toast, r)
		}
	}
	if len(endRows) != 11 {
		t.Errorf("END rows:\n%s", strings.Join(endRows, "\n"))
	}
	if fmt.Sprint(toast) != `["u" 767 NULL "[\"doc\",\"nums\",\"raw\",\"tag"...(35)]` {
		t.Errorf("rows with unavailable columns: %v", toast)
	}
	// The placeholder is nowhere in the data.
	for _, r := range bronzeRows(t, b.Store, "title", "doc", "tags") {
		if strings.Contains(r, DefaultPlaceholder[:8]) {
			t.Errorf("a placeholder landed: %s", r)
		}
	}
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Helper()
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// TestBronzeResentWithoutCommitLSN: Debezium's first transactions after
// a connector starts without stored offsets have no commit LSN; sent
// again after a Connect crash they have the stored one. Bronze drops
// what it landed of them (by transaction and LSN), lands the rest, and
// lands a new transaction without a commit LSN whose changes have lower
// LSNs than those landed (transactions interleave).
func TestBronzeResentWithoutCommitLSN(t *testing.T) {
	ctx := context.Background()
	b := newBronze(t)
	var table []*kgo.Record
	for _, r := range fixtureRecords(t) {
		if r.Topic == b.Topic {
			table = append(table, r)
		}
	}
	resend := func(r *kgo.Record, offset int64, replace ...string) *kgo.Record {
		v := string(r.Value)
		for i := 0; i < len(replace); i += 2 {
			if !strings.Contains(v, replace[i]) {
				t.Fatalf("offset %d has no %s", r.Offset, replace[i])
			}
			v = strings.ReplaceAll(v, replace[i], replace[i+1])
		}
		return &kgo.Record{Topic: r.Topic, Offset: offset, Key: r.Key, Value: []byte(v)}
	}
	// The snapshot read and two of transaction 766's three changes.
	if err := b.Land(ctx, table[:3]); err != nil {
		t.Fatal(err)
	}
	// Connect crashed: 766 comes again, with a commit LSN; then a new
	// transaction without one, at an LSN below those landed.
	again := []*kgo.Record{
		resend(table[1], 100, `[null,`, `[\"22917000\",`),
		resend(table[2], 101, `[null,`, `[\"22917000\",`),
		resend(table[3], 102, `[null,`, `[\"22917000\",`),
		resend(table[1], 103, `"txId":766`, `"txId":999`, `"lsn":22917784`, `"lsn":22917700`, `22917784\"]`, `22917700\"]`),
		resend(table[4], 104),
	}
	if err := b.Land(ctx, again); err != nil {
		t.Fatal(err)
	}
	got := bronzeRows(t, b.Store, ColOp, ColLSN, ColOffset)
	want := []string{
		`"c" 22917700 103`, // the new transaction
		`"c" 22917784 1`,
		`"c" 22918064 2`,
		`"c" 22967576 102`, // 766's change that had not landed
		`"r" 22917528 0`,
		`"u" 22968016 104`,
	}
	if !slices.Equal(got, want) {
		t.Fatalf("bronze:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// Sent a third time, nothing lands.
	if err := b.Land(ctx, []*kgo.Record{resend(table[1], 105, `[null,`, `[\"22917000\",`), resend(table[3], 106, `[null,`, `[\"22917000\",`)}); err != nil {
		t.Fatal(err)
	}
	if got2 := bronzeRows(t, b.Store, ColOp, ColLSN, ColOffset); !slices.Equal(got2, want) {
		t.Fatalf("the third sending landed: %v", got2)
	}
}
