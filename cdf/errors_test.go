package cdf_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/cdf"
	"github.com/lakelog/lakelog/deltalog"
)

// appendOnly commits n appends to m.
func appendOnly(m *modelTable, n int) {
	for range n {
		part := "a"
		rows := m.randomRows(3)
		for i := range rows {
			rows[i].part = part
			m.changes = append(m.changes, mchange{rows[i], actions.ChangeInsert, m.version})
		}
		m.commit([]*actions.Action{{Add: m.newFile(part, rows, true)}}, "WRITE")
	}
}

// feedErr opens a feed over b and returns the first error of Open or of
// Records.
func feedErr(t *testing.T, m *modelTable, b cdf.Bounds, opts ...cdf.Option) error {
	t.Helper()
	f, err := cdf.Open(context.Background(), m.st, "", b, opts...)
	if err != nil {
		return err
	}
	for _, err := range f.Records(context.Background()) {
		if err != nil {
			return err
		}
	}
	return nil
}

func wantErr(t *testing.T, err, target error, mention ...string) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("err = %v, want %v", err, target)
	}
	for _, s := range mention {
		if !strings.Contains(err.Error(), s) {
			t.Fatalf("err = %v, does not name %q", err, s)
		}
	}
}

// TestVacuumedFile: a file the range needs that is gone fails the feed
// with ErrFileMissing naming the version and the file.
func TestVacuumedFile(t *testing.T) {
	m := newModel(t, rand.New(rand.NewPCG(1, 2)), nil)
	appendOnly(m, 3)
	gone := m.livePaths()[1]
	if err := m.st.Delete(context.Background(), gone); err != nil {
		t.Fatal(err)
	}
	wantErr(t, feedErr(t, m, cdf.Versions(0, -1)), cdf.ErrFileMissing, "version 2", gone)
	if err := feedErr(t, m, cdf.Versions(3, 3)); err != nil {
		t.Fatalf("a range without the file: %v", err)
	}
}

// TestFeedDisabledInRange: a version committed while the feed was off
// fails the range naming it; ranges around it read.
func TestFeedDisabledInRange(t *testing.T) {
	m := newModel(t, rand.New(rand.NewPCG(1, 2)), nil)
	appendOnly(m, 2)
	m.props = map[string]string{"delta.enableChangeDataFeed": "false"}
	m.commit([]*actions.Action{m.metadata()}, "SET TBLPROPERTIES") // version 3
	appendOnly(m, 1)
	m.props = nil
	m.commit([]*actions.Action{m.metadata()}, "SET TBLPROPERTIES") // version 5
	appendOnly(m, 1)
	wantErr(t, feedErr(t, m, cdf.Versions(1, -1)), cdf.ErrNotRecorded, "version 3")
	wantErr(t, feedErr(t, m, cdf.Versions(4, 6)), cdf.ErrNotRecorded, "version 4")
	for _, b := range []cdf.Bounds{cdf.Versions(0, 2), cdf.Versions(5, 6)} {
		if err := feedErr(t, m, b); err != nil {
			t.Fatal(err)
		}
	}
}

// TestSchemaChangeInRange: a range across a dropped column fails naming
// the version whose schema cannot be read under the end's; an added
// column reads (nulls before it, as TestModelHistories checks).
func TestSchemaChangeInRange(t *testing.T) {
	m := newModel(t, rand.New(rand.NewPCG(1, 2)), nil)
	appendOnly(m, 2)
	md := m.metadata()
	md.Metadata.SchemaString = `{"type":"struct","fields":[{"name":"id","type":"long","nullable":true,"metadata":{}},{"name":"part","type":"string","nullable":true,"metadata":{}}]}`
	m.commit([]*actions.Action{md}, "DROP COLUMN") // version 3
	wantErr(t, feedErr(t, m, cdf.Versions(1, 3)), cdf.ErrSchemaChange, "version 1", "column v")
	if err := feedErr(t, m, cdf.Versions(3, 3)); err != nil {
		t.Fatal(err)
	}
	// Narrowing a type is not readable either.
	m2 := newModel(t, rand.New(rand.NewPCG(1, 2)), nil)
	appendOnly(m2, 1)
	md = m2.metadata()
	md.Metadata.SchemaString = strings.Replace(md.Metadata.SchemaString, `"name":"id","type":"long"`, `"name":"id","type":"integer"`, 1)
	m2.commit([]*actions.Action{md}, "CHANGE COLUMN")
	wantErr(t, feedErr(t, m2, cdf.Versions(0, -1)), cdf.ErrSchemaChange, "column id")
}

// TestRangeBeyondLatest: a start after the latest version is
// ErrVersionNotFound, or an empty feed with EmptyBeyondLatest; an end
// after it is the latest.
func TestRangeBeyondLatest(t *testing.T) {
	m := newModel(t, rand.New(rand.NewPCG(1, 2)), nil)
	appendOnly(m, 2)
	wantErr(t, feedErr(t, m, cdf.Versions(3, -1)), deltalog.ErrVersionNotFound, "3", "latest version 2")
	f, err := cdf.Open(context.Background(), m.st, "", cdf.Versions(3, 9), cdf.EmptyBeyondLatest())
	if err != nil {
		t.Fatal(err)
	}
	for rec, err := range f.Records(context.Background()) {
		t.Fatalf("an empty feed yielded %v, %v", rec, err)
	}
	f, err = cdf.Open(context.Background(), m.st, "", cdf.Versions(1, 9))
	if err != nil {
		t.Fatal(err)
	}
	if from, to := f.Versions(); from != 1 || to != 2 {
		t.Fatalf("versions %d to %d, want 1 to 2", from, to)
	}
}

// TestTimestampRange: a time range maps to the versions committed within
// it, as Spark maps startingTimestamp and endingTimestamp, and
// _commit_timestamp is each version's in-commit timestamp.
func TestTimestampRange(t *testing.T) {
	base := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	m := newModel(t, rand.New(rand.NewPCG(1, 2)), &base) // version v at base + v s
	appendOnly(m, 6)
	at := func(v int) time.Time { return base.Add(time.Duration(v) * time.Second) }
	for _, c := range []struct {
		start, end time.Time
		from, to   int64
	}{
		{at(2), at(4), 2, 4},
		{at(2).Add(time.Millisecond), at(4).Add(-time.Millisecond), 3, 3},
		{at(2).Add(-time.Hour), time.Time{}, 0, 6},
		{at(5), at(9), 5, 6},
	} {
		f, err := cdf.Open(context.Background(), m.st, "", cdf.Timestamps(c.start, c.end))
		if err != nil {
			t.Fatal(err)
		}
		if from, to := f.Versions(); from != c.from || to != c.to {
			t.Fatalf("%v to %v: versions %d to %d, want %d to %d", c.start, c.end, from, to, c.from, c.to)
		}
		rows := 0
		for rec, err := range f.Records(context.Background()) {
			if err != nil {
				t.Fatal(err)
			}
			vs := rec.Column(rec.Schema().FieldIndices(cdf.CommitVersionColumn)[0]).(*array.Int64)
			ts := rec.Column(rec.Schema().FieldIndices(cdf.CommitTimestampColumn)[0]).(*array.Timestamp)
			unit := rec.Schema().Field(rec.Schema().FieldIndices(cdf.CommitTimestampColumn)[0]).Type
			for i := range vs.Len() {
				rows++
				got := ts.Value(i).ToTime(unit.(*arrow.TimestampType).Unit)
				if want := at(int(vs.Value(i))); !got.Equal(want) {
					t.Fatalf("version %d: _commit_timestamp %v, want %v", vs.Value(i), got, want)
				}
			}
		}
		if want := 3 * int(c.to-c.from+1); c.from == 0 {
			want -= 3 // version 0 creates the table
			if rows != want {
				t.Fatalf("%d rows, want %d", rows, want)
			}
		} else if rows != want {
			t.Fatalf("%d rows, want %d", rows, want)
		}
	}
	wantErr(t, feedErr(t, m, cdf.Timestamps(at(7), time.Time{})), deltalog.ErrVersionNotFound, "latest version 6")
	if err := feedErr(t, m, cdf.Timestamps(at(7), time.Time{}), cdf.EmptyBeyondLatest()); err != nil {
		t.Fatal(err)
	}
}

// TestStopAndCancel: a loop stopped early, or a cancelled context, ends
// the feed with every batch released (the checked allocator) and, for
// the cancel, an error wrapping context.Canceled.
func TestStopAndCancel(t *testing.T) {
	m := newModel(t, rand.New(rand.NewPCG(3, 4)), nil)
	for range 30 {
		m.step()
	}
	for _, cancelIt := range []bool{false, true} {
		for _, par := range []int{1, 4} {
			mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
			ctx, cancel := context.WithCancel(context.Background())
			f, err := cdf.Open(ctx, m.st, "", cdf.Versions(0, -1), cdf.WithAllocator(mem), cdf.WithParallelism(par), cdf.WithBatchSize(2))
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			var last error
			for _, err := range f.Records(ctx) {
				if err != nil {
					last = err
					break
				}
				n++
				if n == 3 {
					if !cancelIt {
						break
					}
					cancel()
				}
			}
			cancel()
			if cancelIt && !errors.Is(last, context.Canceled) {
				t.Fatalf("parallelism %d: after a cancel, err = %v", par, last)
			}
			if !cancelIt && last != nil {
				t.Fatal(last)
			}
			mem.AssertSize(t, 0)
		}
	}
}
