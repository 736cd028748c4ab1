package writer_test

import (
	"context"
	"strings"
	"testing"

	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/test/tabletest"
	"github.com/lakelog/lakelog/writer"
)

// statsOf appends rows to a new table and returns the one file's stats.
func statsOf(t *testing.T, ddl string, props map[string]string, rows string, parts ...string) string {
	t.Helper()
	ctx := context.Background()
	mem := tabletest.CheckedMem(t)
	store := objstore.NewMem()
	snap := tabletest.Create(t, store, ddl, props, parts...)
	rec := tabletest.Batch(t, mem, snap, rows)
	if _, err := writer.Append(ctx, snap, tabletest.Batches(t, rec), writer.WithAllocator(mem)); err != nil {
		t.Fatal(err)
	}
	snap = tabletest.Open(t, store)
	if snap.NumFiles() != 1 {
		t.Fatalf("%d files, want 1", snap.NumFiles())
	}
	for f := range snap.Files() {
		return f.Stats
	}
	return ""
}

func TestStats(t *testing.T) {
	long40 := strings.Repeat("x", 40)
	for _, tc := range []struct {
		name  string
		ddl   string
		props map[string]string
		parts []string
		rows  string
		want  string
	}{
		{
			name: "numbers, strings, dates and nulls",
			ddl:  "i int, l long, d double, s string, day date, dec decimal(5,2), b boolean, bin binary",
			rows: `[{"i": 3, "l": -1, "d": 2.5, "s": "b", "day": "2024-01-02", "dec": "1.50", "b": true, "bin": "AA=="},
				{"i": -7, "l": null, "d": -0.5, "s": "a", "day": "2023-12-31", "dec": "-2.00", "b": null, "bin": null},
				{"i": null, "l": null, "d": null, "s": null, "day": null, "dec": null, "b": false, "bin": null}]`,
			want: `{"numRecords":3,"minValues":{"i":-7,"l":-1,"d":-0.5,"s":"a","day":"2023-12-31","dec":-2.00},` +
				`"maxValues":{"i":3,"l":-1,"d":2.5,"s":"b","day":"2024-01-02","dec":1.50},` +
				`"nullCount":{"i":1,"l":2,"d":1,"s":1,"day":1,"dec":1,"b":1,"bin":2}}`,
		},
		{
			name: "timestamps keep bounds at millisecond precision",
			ddl:  "ts timestamp, ntz timestamp_ntz",
			rows: `[{"ts": "2021-10-01T08:09:20.123456Z", "ntz": "2021-10-01T08:09:20.000001"},
				{"ts": "2021-10-01T08:09:20.000999Z", "ntz": "2021-10-01T08:09:20.999000"}]`,
			want: `{"numRecords":2,"minValues":{"ts":"2021-10-01T08:09:20.000Z","ntz":"2021-10-01T08:09:20.000"},` +
				`"maxValues":{"ts":"2021-10-01T08:09:20.124Z","ntz":"2021-10-01T08:09:20.999"},"nullCount":{"ts":0,"ntz":0}}`,
		},
		{
			name: "long strings are truncated, the max with a tie-breaker",
			ddl:  "s string",
			rows: `[{"s": "` + long40 + `"}, {"s": "a"}]`,
			want: `{"numRecords":2,"minValues":{"s":"a"},"maxValues":{"s":"` + long40[:32] + "\ufffd" + `"},"nullCount":{"s":0}}`,
		},
		{
			name: "NaN drops the float bounds",
			ddl:  "f double, g float",
			rows: `[{"f": 1, "g": 1}, {"f": "NaN", "g": 2}]`,
			want: `{"numRecords":2,"minValues":{"g":1},"maxValues":{"g":2},"nullCount":{"f":0,"g":0}}`,
		},
		{
			name: "nested fields nest; a null struct counts as null fields",
			ddl:  "s struct<a: int, t: struct<b: string>>, arr array<int>, m map<string, int>",
			rows: `[{"s": {"a": 1, "t": {"b": "x"}}, "arr": [1], "m": []},
				{"s": null, "arr": null, "m": null},
				{"s": {"a": 5, "t": null}, "arr": [], "m": null}]`,
			want: `{"numRecords":3,"minValues":{"s":{"a":1,"t":{"b":"x"}}},"maxValues":{"s":{"a":5,"t":{"b":"x"}}},` +
				`"nullCount":{"s":{"a":1,"t":{"b":2}},"arr":1,"m":2}}`,
		},
		{
			name:  "partition columns are not in the stats",
			ddl:   "p string, v int",
			parts: []string{"p"},
			rows:  `[{"p": "a", "v": 1}]`,
			want:  `{"numRecords":1,"minValues":{"v":1},"maxValues":{"v":1},"nullCount":{"v":0}}`,
		},
		{
			name:  "dataSkippingNumIndexedCols counts leaves",
			ddl:   "a int, s struct<x: int, y: int>, c int",
			props: map[string]string{"delta.dataSkippingNumIndexedCols": "2"},
			rows:  `[{"a": 1, "s": {"x": 2, "y": 3}, "c": 4}]`,
			want:  `{"numRecords":1,"minValues":{"a":1,"s":{"x":2}},"maxValues":{"a":1,"s":{"x":2}},"nullCount":{"a":0,"s":{"x":0}}}`,
		},
		{
			name:  "dataSkippingNumIndexedCols zero",
			ddl:   "a int",
			props: map[string]string{"delta.dataSkippingNumIndexedCols": "0"},
			rows:  `[{"a": 1}]`,
			want:  `{"numRecords":1}`,
		},
		{
			name:  "dataSkippingStatsColumns names columns",
			ddl:   "a int, s struct<x: int, y: int>, c int",
			props: map[string]string{"delta.dataSkippingStatsColumns": "c, s.y"},
			rows:  `[{"a": 1, "s": {"x": 2, "y": 3}, "c": 4}]`,
			want:  `{"numRecords":1,"minValues":{"c":4,"s":{"y":3}},"maxValues":{"c":4,"s":{"y":3}},"nullCount":{"c":0,"s":{"y":0}}}`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := statsOf(t, tc.ddl, tc.props, tc.rows, tc.parts...); got != tc.want {
				t.Errorf("stats\n got %s\nwant %s", got, tc.want)
			}
		})
	}
}
