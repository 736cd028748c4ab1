package expr

import (
	"strings"
	"testing"

	"github.com/lakelog/lakelog/actions"
)

var pruneSchema = &actions.StructType{Fields: []*actions.StructField{
	{Name: "p", Type: actions.TypeString, Nullable: true},
	{Name: "year", Type: actions.TypeInteger, Nullable: true},
	{Name: "day", Type: actions.TypeDate, Nullable: true},
	{Name: "n", Type: actions.TypeLong, Nullable: true},
	{Name: "i", Type: actions.TypeInteger, Nullable: true},
	{Name: "s", Type: actions.TypeString, Nullable: true},
	{Name: "x", Type: actions.TypeDouble, Nullable: true},
	{Name: "ts", Type: actions.TypeTimestamp, Nullable: true},
	{Name: "m", Type: &actions.DecimalType{Precision: 10, Scale: 2}, Nullable: true},
	{Name: "d", Type: actions.TypeDate, Nullable: true},
	{Name: "flag", Type: actions.TypeBoolean, Nullable: true},
	{Name: "st", Type: &actions.StructType{Fields: []*actions.StructField{
		{Name: "a", Type: actions.TypeLong, Nullable: true},
	}}, Nullable: true},
}}

var prunePartitions = []string{"p", "year", "day"}

func mustStats(t *testing.T, s string) *actions.Stats {
	t.Helper()
	st, err := actions.ParseStats(s)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// baseStats: 10 rows; n in [10, 20] with 2 nulls; s in ["apple",
// "melon"] without nulls; x in [-1.5, 2.5]; ts in [2026-03-01T00:00,
// 2026-03-01T12:00:00.123]; m in [1.00, 9.99]; d in [2026-01-01,
// 2026-01-31]; i all null; st.a in [5, 5].
const baseStats = `{"numRecords":10,
	"minValues":{"n":10,"s":"apple","x":-1.5,"ts":"2026-03-01T00:00:00.000Z","m":1.00,"d":"2026-01-01","st":{"a":5}},
	"maxValues":{"n":20,"s":"melon","x":2.5,"ts":"2026-03-01T12:00:00.123Z","m":9.99,"d":"2026-01-31","st":{"a":5}},
	"nullCount":{"n":2,"s":0,"x":0,"ts":0,"m":0,"d":1,"i":10,"flag":0,"st":{"a":0}}}`

func TestPrunerStats(t *testing.T) {
	st := mustStats(t, baseStats)
	pv := map[string]*string{"p": strp("a"), "year": strp("2026"), "day": strp("2026-03-01")}
	for _, tc := range []struct {
		pred string
		may  bool
	}{
		// = < <= > >= <> against [10, 20].
		{"n = 15", true}, {"n = 10", true}, {"n = 20", true}, {"n = 9", false}, {"n = 21", false},
		{"n < 10", false}, {"n < 11", true}, {"n <= 10", true}, {"n <= 9", false},
		{"n > 20", false}, {"n > 19", true}, {"n >= 20", true}, {"n >= 21", false},
		{"10 > n", false}, {"21 <= n", false}, {"n <> 15", true},
		{"n BETWEEN 21 AND 30", false}, {"n BETWEEN 0 AND 10", true},
		{"n IN (1, 2, 30)", false}, {"n IN (1, 15)", true}, {"n NOT IN (15)", true},
		{"n IN (NULL)", false}, {"n = NULL", false},
		// NULLs: n has 2, s none, i only nulls.
		{"n IS NULL", true}, {"n IS NOT NULL", true},
		{"s IS NULL", false}, {"s IS NOT NULL", true},
		{"i IS NULL", true}, {"i IS NOT NULL", false}, {"i = 1", false}, {"i <> 1", false},
		{"NOT i = 1", false}, {"i IS NULL AND n = 15", true},
		{"n <=> NULL", true}, {"s <=> NULL", false}, {"i <=> NULL", true}, {"i <=> 5", false},
		// NOT, AND, OR.
		{"NOT n = 15", true}, {"NOT n > 5", false}, {"NOT (n >= 10 AND n <= 20)", false}, {"NOT (n > 10 AND n <= 20)", true},
		{"NOT s >= 'apple'", false}, {"NOT NOT n = 9", false},
		{"n = 9 OR n = 21", false}, {"n = 9 OR s = 'banana'", true}, {"n = 9 AND s = 'banana'", false},
		{"n > 100 OR NOT s < 'zzz'", false},
		// Strings; the max may be a truncated prefix.
		{"s = 'apple'", true}, {"s = 'aardvark'", false}, {"s = 'zebra'", false},
		{"s = 'melon'", true}, {"s = 'melonade'", true}, {"s > 'melon'", true}, {"s > 'melp'", false},
		{"s LIKE 'b%'", true}, {"s LIKE 'z%'", false}, {"s LIKE 'a%'", true}, {"s LIKE 'aa%'", false},
		{"s LIKE '%z'", true}, {"s NOT LIKE 'z%'", true}, {"s LIKE 'melon%'", true},
		// Doubles: NaN need not be in the max.
		{"x = 0", true}, {"x = 3", false}, {"x < -2", false}, {"x > 3", true},
		{"x = CAST('NaN' AS double)", true}, {"x <= -1.5", true},
		// Timestamps: the max is truncated to milliseconds.
		{"ts > '2026-03-01 12:00:00.123'", true}, {"ts > '2026-03-01 12:00:00.124'", false},
		{"ts < '2026-03-01'", false}, {"ts = '2026-03-01 06:00'", true},
		// Decimals, dates, casts.
		{"m = 5", true}, {"m > 9.99", false}, {"m >= 9.99", true}, {"m < 1", false}, {"m > 9.985", true},
		{"m > 9.995", false},
		{"d >= '2026-02-01'", false}, {"d = '2026-01-15'", true}, {"d < '2026-01-01 12:00'", true},
		{"d < '2025-12-31 12:00'", false},
		{"n > 20.5", false}, {"n < 10.5", true}, {"CAST(n AS double) > 20.5", false},
		// Nested stats.
		{"st.a = 5", true}, {"st.a <> 5", false}, {"st.a > 5", false},
		// Columns without stats may be anything.
		{"flag", true}, {"NOT flag", true}, {"n + 1 > 100", true}, {"n > i", false}, {"s < 'a' OR n + 1 > 100", true},
		// Partition columns are exact.
		{"p = 'a'", true}, {"p = 'b'", false}, {"p <> 'a'", false}, {"p IN ('b', 'c')", false},
		{"year = 2026", true}, {"year > 2026", false}, {"year + 1 = 2027", true}, {"year % 2 = 1", false},
		{"day = '2026-03-01'", true}, {"day < '2026-03-01'", false},
		{"p IS NULL", false}, {"p = 'a' AND n = 15", true}, {"p = 'b' OR n = 15", true}, {"p = 'b' OR n = 9", false},
		{"NOT (p = 'a' AND n > 5)", false}, {"NOT (p = 'a' AND n > 15)", true}, {"NOT (p = 'a' OR n > 5)", false},
		{"p LIKE 'a%'", true}, {"p LIKE 'b%'", false},
		{"p = s", false}, {"p < s", true},
	} {
		pr, err := NewPruner(mustParse(t, tc.pred), tableOf(pruneSchema, prunePartitions, "none"))
		if err != nil {
			t.Errorf("NewPruner(%q): %v", tc.pred, err)
			continue
		}
		if got := pr.MayMatch(pv, st); got != tc.may {
			t.Errorf("MayMatch(%s) = %v, want %v", tc.pred, got, tc.may)
		}
		// Without stats, only the partition values can prune.
		if !pr.MayMatch(pv, nil) && !pr.PartitionOnly() && !strings.Contains(tc.pred, "p ") && !strings.Contains(tc.pred, "NULL") {
			t.Errorf("MayMatch(%s) without stats = false", tc.pred)
		}
	}
}

func TestPrunerNullPartitions(t *testing.T) {
	pv := map[string]*string{"p": nil, "year": strp(""), "day": strp("2026-03-01")}
	for _, tc := range []struct {
		pred string
		may  bool
	}{
		{"p IS NULL", true}, {"p IS NOT NULL", false}, {"p = 'a'", false}, {"p <> 'a'", false},
		{"NOT p = 'a'", false}, {"p = 'a' OR p IS NULL", true}, {"year IS NULL", true}, {"year = 0", false},
		{"p <=> NULL", true}, {"p IN ('a', NULL)", false}, {"p NOT IN ('a')", false},
	} {
		pr, err := NewPruner(mustParse(t, tc.pred), tableOf(pruneSchema, prunePartitions, "none"))
		if err != nil {
			t.Fatal(err)
		}
		if !pr.PartitionOnly() {
			t.Errorf("%s: not partition-only", tc.pred)
		}
		if got := pr.MayMatch(pv, nil); got != tc.may {
			t.Errorf("MayMatch(%s) = %v, want %v", tc.pred, got, tc.may)
		}
	}
}

func TestPrunerIsConservative(t *testing.T) {
	pv := map[string]*string{"p": strp("a"), "year": strp("2026"), "day": strp("2026-03-01")}
	for _, tc := range []struct {
		name, pred, stats string
		pv                map[string]*string
	}{
		{"no stats", "n = 100", "", pv},
		{"no column stats", "n = 100", `{"numRecords":3,"minValues":{"s":"a"},"maxValues":{"s":"b"},"nullCount":{"s":0}}`, pv},
		{"min only", "n = 100", `{"numRecords":3,"minValues":{"n":1},"nullCount":{"n":0}}`, pv},
		{"max null", "n = 100", `{"numRecords":3,"minValues":{"n":1},"maxValues":{"n":null},"nullCount":{"n":0}}`, pv},
		{"wrong stat type", "n = 100", `{"numRecords":3,"minValues":{"n":"one"},"maxValues":{"n":"two"},"nullCount":{"n":0}}`, pv},
		{"nested where flat expected", "n = 100", `{"numRecords":3,"minValues":{"n":{"a":1}},"maxValues":{"n":{"a":1}}}`, pv},
		{"null count not a number", "n IS NULL", `{"numRecords":3,"nullCount":{"n":"x"}}`, pv},
		{"no numRecords", "n IS NOT NULL", `{"nullCount":{"n":3}}`, pv},
		{"wide bounds, partial null count", "n IS NULL", `{"numRecords":10,"tightBounds":false,"minValues":{"n":1},"maxValues":{"n":2},"nullCount":{"n":4}}`, pv},
		{"wide bounds still bound", "n >= 2", `{"numRecords":10,"tightBounds":false,"minValues":{"n":1},"maxValues":{"n":2},"nullCount":{"n":4}}`, pv},
		{"truncated string max", "s = 'abcdefgh'", `{"numRecords":3,"minValues":{"s":"a"},"maxValues":{"s":"abcd"},"nullCount":{"s":0}}`, pv},
		{"tie-breaker max", "s = 'abcd\U0001F600'", `{"numRecords":3,"minValues":{"s":"a"},"maxValues":{"s":"abcd\uffff"},"nullCount":{"s":0}}`, pv},
		{"truncated timestamp max", "ts = '2026-03-01 12:00:00.123999'", `{"numRecords":3,"minValues":{"ts":"2026-03-01T00:00:00.000Z"},"maxValues":{"ts":"2026-03-01T12:00:00.123Z"},"nullCount":{"ts":0}}`, pv},
		{"NaN beyond a finite max", "x > 100", `{"numRecords":3,"minValues":{"x":1},"maxValues":{"x":2},"nullCount":{"x":0}}`, pv},
		{"missing partition value", "p = 'b'", "", map[string]*string{}},
		{"bad partition value", "year = 2025", "", map[string]*string{"year": strp("twenty")}},
		{"division by zero on partitions", "year / 0 = 1", "", pv},
	} {
		var st *actions.Stats
		if tc.stats != "" {
			st = mustStats(t, tc.stats)
		}
		pr, err := NewPruner(mustParse(t, tc.pred), tableOf(pruneSchema, prunePartitions, "none"))
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if !pr.MayMatch(tc.pv, st) {
			t.Errorf("%s: %s pruned", tc.name, tc.pred)
		}
	}
	// The same stats do prune where they are exact.
	st := mustStats(t, `{"numRecords":10,"tightBounds":false,"minValues":{"n":1},"maxValues":{"n":2},"nullCount":{"n":0}}`)
	pr, _ := NewPruner(mustParse(t, "n IS NULL OR n > 2"), tableOf(pruneSchema, prunePartitions, "none"))
	if pr.MayMatch(pv, st) {
		t.Error("wide bounds with nullCount 0 and max 2 should prune n IS NULL OR n > 2")
	}
	st = mustStats(t, `{"numRecords":10,"tightBounds":false,"nullCount":{"n":10}}`)
	pr, _ = NewPruner(mustParse(t, "n IS NOT NULL"), tableOf(pruneSchema, prunePartitions, "none"))
	if pr.MayMatch(pv, st) {
		t.Error("nullCount = numRecords should prune n IS NOT NULL")
	}
	st = mustStats(t, `{"numRecords":3,"minValues":{"x":1},"maxValues":{"x":2},"nullCount":{"x":0}}`)
	pr, _ = NewPruner(mustParse(t, "x < 1"), tableOf(pruneSchema, prunePartitions, "none"))
	if pr.MayMatch(pv, st) {
		t.Error("NaN is above every number: x < 1 cannot hold")
	}
}

func TestPrunerColumnMapping(t *testing.T) {
	schema := &actions.StructType{Fields: []*actions.StructField{
		{Name: "region", Type: actions.TypeString, Nullable: true, Metadata: map[string]any{
			"delta.columnMapping.id": 1, "delta.columnMapping.physicalName": "col-1a"}},
		{Name: "amount", Type: actions.TypeLong, Nullable: true, Metadata: map[string]any{
			"delta.columnMapping.id": 2, "delta.columnMapping.physicalName": "col-2b"}},
		{Name: "info", Type: &actions.StructType{Fields: []*actions.StructField{
			{Name: "k", Type: actions.TypeInteger, Nullable: true, Metadata: map[string]any{
				"delta.columnMapping.id": 4, "delta.columnMapping.physicalName": "col-4d"}},
		}}, Nullable: true, Metadata: map[string]any{
			"delta.columnMapping.id": 3, "delta.columnMapping.physicalName": "col-3c"}},
	}}
	st := mustStats(t, `{"numRecords":5,"minValues":{"col-2b":1,"col-3c":{"col-4d":7}},"maxValues":{"col-2b":9,"col-3c":{"col-4d":8}},"nullCount":{"col-2b":0}}`)
	pv := map[string]*string{"col-1a": strp("eu")}
	for _, tc := range []struct {
		pred string
		may  bool
	}{
		{"region = 'eu'", true}, {"REGION = 'us'", false},
		{"amount > 9", false}, {"amount = 5", true}, {"amount IS NULL", false},
		{"info.k < 7", false}, {"info.k = 8", true},
	} {
		for _, mode := range []string{"name", "id"} {
			pr, err := NewPruner(mustParse(t, tc.pred), tableOf(schema, []string{"region"}, mode))
			if err != nil {
				t.Fatal(err)
			}
			if got := pr.MayMatch(pv, st); got != tc.may {
				t.Errorf("mode %s: MayMatch(%s) = %v, want %v", mode, tc.pred, got, tc.may)
			}
		}
	}
	// Under column mapping a partition value keyed by the logical name is
	// not the column's: it is not read (the file may match).
	pr, _ := NewPruner(mustParse(t, "region = 'us'"), tableOf(schema, []string{"region"}, "name"))
	if !pr.MayMatch(map[string]*string{"region": strp("eu")}, nil) {
		t.Error("mode name read a partition value keyed by the logical name")
	}
	// Without column mapping the logical names are the keys; physical
	// ones mean nothing.
	pr, _ = NewPruner(mustParse(t, "amount > 9 OR region = 'us'"), tableOf(schema, []string{"region"}, "none"))
	if !pr.MayMatch(map[string]*string{"region": strp("us")}, st) {
		t.Error("mode none read physical names")
	}
}

func TestPrunerErrors(t *testing.T) {
	if _, err := NewPruner(mustParse(t, "nope = 1"), tableOf(pruneSchema, prunePartitions, "none")); err == nil {
		t.Error("no error for an unknown column")
	}
	if _, err := NewPruner(mustParse(t, "n + 1"), tableOf(pruneSchema, prunePartitions, "none")); err == nil {
		t.Error("no error for a non-boolean predicate")
	}
	pr, err := NewPruner(mustParse(t, "p = 'a' AND year > 2000"), tableOf(pruneSchema, prunePartitions, "none"))
	if err != nil {
		t.Fatal(err)
	}
	if !pr.PartitionOnly() || pr.Expr().String() != "p = 'a' AND year > 2000" {
		t.Errorf("PartitionOnly %v, Expr %s", pr.PartitionOnly(), pr.Expr())
	}
}

func TestPrunerConcurrentUse(t *testing.T) {
	st := mustStats(t, baseStats)
	pr, err := NewPruner(mustParse(t, "p = 'a' AND n > 15 OR s LIKE 'm%'"), tableOf(pruneSchema, prunePartitions, "none"))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan bool)
	for g := range 8 {
		go func() {
			ok := true
			for i := range 200 {
				v := "a"
				if (g+i)%2 == 0 {
					v = "b"
				}
				ok = ok && pr.MayMatch(map[string]*string{"p": &v}, st)
			}
			done <- ok
		}()
	}
	for range 8 {
		if !<-done {
			t.Error("MayMatch = false for a file that may match")
		}
	}
}

func TestPrunerAllMatch(t *testing.T) {
	st := mustStats(t, baseStats)
	pv := map[string]*string{"p": strp("a"), "year": strp("2026"), "day": strp("2026-03-01")}
	for _, tc := range []struct {
		pred string
		all  bool
	}{
		{"p = 'a'", true}, {"p = 'b'", false}, {"year >= 2026 AND day = '2026-03-01'", true},
		{"year + 1 = 2027", true}, // arithmetic on partition values is exact
		{"s >= 'apple'", true}, {"s > 'apple'", false}, {"s IS NOT NULL", true},
		{"n >= 10", false}, // n has nulls
		// Outcomes of operands are combined as if independent: that n
		// is NULL exactly where n >= 10 is NULL is not tracked.
		{"n >= 10 OR n IS NULL", false},
		{"m BETWEEN 1 AND 10", true}, {"m < 9.99", false},
		{"i IS NULL", true}, {"NOT i = 1", false},
		{"d <= '2026-01-31' OR s IS NOT NULL", true},
		{"ts <= '2026-03-01 12:00:00.123'", false}, // the max is truncated
		{"ts <= '2026-03-01 12:00:00.124'", true},
		{"x < 3", false}, // NaN may hide above a finite max
		{"x > -2", true},
		{"p = 'a' OR n + 1 > 0", false}, // n + 1 may overflow on some row
		{"CAST(n AS double) > 5", false},
		{"CAST(st.a AS decimal(20,0)) = 5", true},
	} {
		pr, err := NewPruner(mustParse(t, tc.pred), tableOf(pruneSchema, prunePartitions, "none"))
		if err != nil {
			t.Fatal(err)
		}
		if got := pr.AllMatch(pv, st); got != tc.all {
			t.Errorf("AllMatch(%s) = %v, want %v", tc.pred, got, tc.all)
		}
		if tc.all && !pr.MayMatch(pv, st) {
			t.Errorf("%s: AllMatch without MayMatch", tc.pred)
		}
	}
	pr, _ := NewPruner(mustParse(t, "s >= 'apple'"), tableOf(pruneSchema, prunePartitions, "none"))
	if pr.AllMatch(pv, nil) {
		t.Error("AllMatch without stats")
	}
}
