package cdf_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/lakelog/lakelog/cdf"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/reader"
	"github.com/lakelog/lakelog/test/golden"
)

// cdfExpectation is a case's "cdf" entry of expected.json.
type cdfExpectation struct {
	StartVersion int64             `json:"start_version"`
	EndVersion   int64             `json:"end_version"`
	Columns      []string          `json:"columns"`
	NumRows      int               `json:"num_rows"`
	RowsSHA256   string            `json:"rows_sha256"`
	Rows         []json.RawMessage `json:"rows"`
}

// feedLines reads a feed and returns its rows in the canonical row
// encoding, without the columns drop names, sorted.
func feedLines(t *testing.T, f *cdf.Feed, drop ...string) []string {
	t.Helper()
	var out []string
	for rec, err := range f.Records(context.Background()) {
		if err != nil {
			t.Fatalf("records: %v", err)
		}
		var fields []arrow.Field
		var cols []arrow.Array
		for i, fl := range rec.Schema().Fields() {
			if !slices.Contains(drop, fl.Name) {
				fields = append(fields, fl)
				cols = append(cols, rec.Column(i))
			}
		}
		sub := array.NewRecordBatch(arrow.NewSchema(fields, nil), cols, rec.NumRows())
		rows, err := reader.CanonicalRows(sub)
		sub.Release()
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			out = append(out, string(r))
		}
	}
	slices.Sort(out)
	return out
}

func sha(lines []string) string {
	h := sha256.New()
	for _, l := range lines {
		h.Write([]byte(l + "\n"))
	}
	return hex.EncodeToString(h.Sum(nil))
}

func openCase(t *testing.T, name string) (*golden.Case, objstore.Store) {
	t.Helper()
	c, err := golden.Find(name)
	if err != nil {
		t.Fatal(err)
	}
	st, err := objstore.NewLocal(c.Dir)
	if err != nil {
		t.Fatal(err)
	}
	return c, st
}

// knownUnsupported are the cases the feed cannot read yet, and why: they
// must fail with ErrUnsupported, never give wrong rows.
var knownUnsupported = map[string]string{}

// TestGoldenChangeFeeds: the corpus cases that state a change feed give
// exactly its rows.
func TestGoldenChangeFeeds(t *testing.T) {
	for _, name := range []string{"cdf-table", "cdf-table-with-dv"} {
		t.Run(name, func(t *testing.T) {
			c, st := openCase(t, name)
			var want cdfExpectation
			if err := json.Unmarshal(c.CDF, &want); err != nil {
				t.Fatal(err)
			}
			f, err := cdf.Open(context.Background(), st, "", cdf.Versions(want.StartVersion, want.EndVersion))
			if err != nil {
				t.Fatal(err)
			}
			if why, ok := knownUnsupported[name]; ok {
				for _, err := range f.Records(context.Background()) {
					if err != nil {
						if !errors.Is(err, reader.ErrUnsupported) {
							t.Fatalf("want ErrUnsupported (%s), got %v", why, err)
						}
						return
					}
				}
				t.Fatalf("the feed reads without an error: remove %s from knownUnsupported", name)
			}
			got := feedLines(t, f, cdf.CommitTimestampColumn)
			if len(got) != want.NumRows || sha(got) != want.RowsSHA256 {
				var wantLines []string
				for _, r := range want.Rows {
					wantLines = append(wantLines, string(r))
				}
				t.Fatalf("got %d rows (sha %s), want %d (sha %s)\ngot:\n%s\nwant (unsorted JSON):\n%s", len(got), sha(got), want.NumRows, want.RowsSHA256, strings.Join(got, "\n"), strings.Join(wantLines, "\n"))
			}
		})
	}
}

// TestFeedNotEnabled: deltalog-getChanges never enabled the feed, so
// any range fails naming the first version.
func TestFeedNotEnabled(t *testing.T) {
	_, st := openCase(t, "deltalog-getChanges")
	f, err := cdf.Open(context.Background(), st, "", cdf.Versions(0, -1))
	if err != nil {
		t.Fatal(err)
	}
	for _, err := range f.Records(context.Background()) {
		if !errors.Is(err, cdf.ErrNotRecorded) || !strings.Contains(err.Error(), "version 0") {
			t.Fatalf("err = %v, want ErrNotRecorded naming version 0", err)
		}
		return
	}
	t.Fatal("no error")
}

// TestSimpleTableWithCDC: Databricks' table: an insert, then an UPDATE
// read from its change data file (pre and post images).
func TestSimpleTableWithCDC(t *testing.T) {
	_, st := openCase(t, "simple_table_with_cdc")
	f, err := cdf.Open(context.Background(), st, "", cdf.Versions(0, -1))
	if err != nil {
		t.Fatal(err)
	}
	got := feedLines(t, f, cdf.CommitTimestampColumn)
	want := []string{
		`{"id":0,"name":"Mario","_change_type":"insert","_commit_version":1}`,
		`{"id":0,"name":"Mario","_change_type":"update_preimage","_commit_version":2}`,
		`{"id":0,"name":"Mino","_change_type":"update_postimage","_commit_version":2}`,
	}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	_ = deltalog.ErrVersionNotFound
}

// TestColumnMappedGolden: the corpus's column-mapped tables (Spark's,
// name and id mode) are no longer refused for their column mapping; they
// do not record change data, and say so (ErrNotRecorded naming the
// property). TestColumnMappedFeed reads mapped tables' changes.
func TestColumnMappedGolden(t *testing.T) {
	for _, name := range []string{"table-with-columnmapping-mode-name", "table-with-columnmapping-mode-id"} {
		_, st := openCase(t, name)
		f, err := cdf.Open(context.Background(), st, "", cdf.Versions(0, -1))
		if err == nil {
			for _, err = range f.Records(context.Background()) {
				if err != nil {
					break
				}
			}
		}
		if !errors.Is(err, cdf.ErrNotRecorded) || !strings.Contains(err.Error(), "delta.enableChangeDataFeed") {
			t.Fatalf("%s: err = %v, want ErrNotRecorded naming delta.enableChangeDataFeed", name, err)
		}
	}
}
