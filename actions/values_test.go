package actions

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

func TestDecimalString(t *testing.T) {
	for _, tc := range []struct {
		d    Decimal
		want string
	}{
		{NewDecimal(150, 2), "1.50"},
		{NewDecimal(-5, 2), "-0.05"},
		{NewDecimal(0, 3), "0.000"},
		{NewDecimal(12, 0), "12"},
		{NewDecimal(-12, 0), "-12"},
		{NewDecimal(7, -2), "700"},
		{Decimal{Scale: 2}, "0.00"},
		{Decimal{mustBig("-99999999999999999999999999999999999999"), 38}, "-0.99999999999999999999999999999999999999"},
	} {
		if got := tc.d.String(); got != tc.want {
			t.Errorf("%v/%d: got %q want %q", tc.d.Unscaled, tc.d.Scale, got, tc.want)
		}
	}
}

func TestParseDecimal(t *testing.T) {
	for _, tc := range []struct {
		in   string
		p, s int
		want string
	}{
		{"1.5", 10, 2, "1.50"},
		{"-.25", 3, 2, "-0.25"},
		{"+7", 1, 0, "7"},
		{"1E-7", 10, 7, "0.0000001"},
		{"12.30e2", 4, 0, "1230"},
		{"1.2300", 3, 2, "1.23"},
		{"0e999999999", 1, 0, "0"},
		{"-0", 5, 2, "0.00"},
		{"99999999999999999999999999999999999999", 38, 0, "99999999999999999999999999999999999999"},
	} {
		d, err := ParseDecimal(tc.in, tc.p, tc.s)
		if err != nil {
			t.Errorf("%q: %v", tc.in, err)
			continue
		}
		if d.Scale != tc.s || d.String() != tc.want {
			t.Errorf("%q as decimal(%d,%d) = %s (scale %d), want %s", tc.in, tc.p, tc.s, d, d.Scale, tc.want)
		}
	}
	for _, tc := range []struct {
		in   string
		p, s int
	}{
		{"100", 2, 0}, {"1.234", 10, 2}, {"1e39", 38, 0}, {"1e-1000000", 38, 2}, {"", 5, 0}, {".", 5, 0},
		{"1e", 5, 0}, {"1x", 5, 0}, {"--1", 5, 0}, {"1", 0, 0}, {"1", 39, 0}, {"1", 5, 6}, {"NaN", 5, 0},
	} {
		if d, err := ParseDecimal(tc.in, tc.p, tc.s); err == nil {
			t.Errorf("%q as decimal(%d,%d) = %s, want an error", tc.in, tc.p, tc.s, d)
		}
	}
}

func TestCompareValues(t *testing.T) {
	for _, tc := range []struct {
		a, b any
		want int
	}{
		{false, true, -1},
		{int8(-1), int8(1), -1},
		{int64(5), int64(5), 0},
		{3.0, math.NaN(), -1},
		{math.NaN(), math.NaN(), 0},
		{math.NaN(), math.Inf(1), 1},
		{math.Copysign(0, -1), 0.0, 0},
		{float32(2), float32(1), 1},
		{"a", "ab", -1},
		{"é", "z", 1}, // bytes, not code points of a locale
		{[]byte{0xff}, []byte{0x00, 0x01}, 1},
		{Date(1), Date(2), -1},
		{Timestamp(2), Timestamp(1), 1},
		{TimestampNTZ(1), TimestampNTZ(1), 0},
		{NewDecimal(150, 2), NewDecimal(15, 1), 0},
		{NewDecimal(-1, 0), NewDecimal(5, 3), -1},
	} {
		got, err := CompareValues(tc.a, tc.b)
		if err != nil || got != tc.want {
			t.Errorf("Compare(%#v, %#v) = %d, %v; want %d", tc.a, tc.b, got, err, tc.want)
		}
	}
	for _, tc := range [][2]any{{int32(1), int64(1)}, {nil, 1}, {"a", nil}, {Date(1), Timestamp(1)}, {struct{}{}, struct{}{}}} {
		if _, err := CompareValues(tc[0], tc[1]); err == nil {
			t.Errorf("Compare(%#v, %#v) succeeded", tc[0], tc[1])
		}
	}
}

func TestParseStatValue(t *testing.T) {
	for _, tc := range []struct {
		t    DataType
		in   any
		want any
	}{
		{TypeLong, json.Number("9007199254740993"), int64(9007199254740993)},
		{TypeInteger, json.Number("-5"), int32(-5)},
		{TypeShort, 12.0, int16(12)},
		{TypeByte, json.Number("1e2"), int8(100)},
		{TypeDouble, json.Number("1.5"), 1.5},
		{TypeDouble, "NaN", math.NaN()},
		{TypeFloat, "-Infinity", float32(math.Inf(-1))},
		{TypeFloat, json.Number("0.1"), float32(0.1)},
		{TypeString, "abc", "abc"},
		{TypeBoolean, true, true},
		{TypeDate, "2021-10-01", Date(18901)},
		{TypeTimestamp, "2021-10-01T08:09:20.000Z", Timestamp(1633075760000000)},
		{TypeTimestamp, "2021-10-01T01:09:20.123-07:00", Timestamp(1633075760123000)},
		{TypeTimestampNTZ, "2021-10-01T08:09:20.000", TimestampNTZ(1633075760000000)},
		{&DecimalType{10, 2}, json.Number("12.5"), NewDecimal(1250, 2)},
		{&DecimalType{10, 2}, "12.5", NewDecimal(1250, 2)},
		{&DecimalType{38, 18}, json.Number("1.0E-7"), NewDecimal(100000000000, 18)},
	} {
		got, err := ParseStatValue(tc.t, tc.in)
		if err != nil {
			t.Errorf("%s %#v: %v", tc.t, tc.in, err)
			continue
		}
		if c, err := CompareValues(got, tc.want); err != nil || c != 0 {
			t.Errorf("%s %#v = %#v, want %#v", tc.t, tc.in, got, tc.want)
		}
	}
	if v, err := ParseStatValue(TypeLong, nil); v != nil || err != nil {
		t.Errorf("nil = %v, %v", v, err)
	}
	for _, tc := range []struct {
		t  DataType
		in any
	}{
		{TypeByte, json.Number("300")},
		{TypeLong, json.Number("1.5")},
		{TypeLong, "5"},
		{TypeString, json.Number("5")},
		{TypeDate, "2021-10-01T00:00:00Z"},
		{TypeTimestampNTZ, "2021-10-01T08:09:20Z"},
		{&DecimalType{3, 2}, json.Number("12.5")},
		{&StructType{}, map[string]any{}},
		{TypeVariant, "0S&u5"},
	} {
		if v, err := ParseStatValue(tc.t, tc.in); err == nil {
			t.Errorf("%s %#v = %#v, want an error", tc.t, tc.in, v)
		}
	}
}

// Every min and max in the golden tables' stats parses as its column's
// type, and min <= max.
func TestGoldenStatValues(t *testing.T) {
	n := 0
	tables := map[string][]string{}
	for _, f := range goldenCommits(t) {
		tables[filepath.Dir(f)] = append(tables[filepath.Dir(f)], f)
	}
	for dir, files := range tables {
		sort.Strings(files)
		var schema *StructType
		var mode string
		for _, f := range files {
			if strings.Contains(filepath.Base(f), "checkpoint") {
				continue
			}
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			as, err := ParseCommit(bytes.NewReader(b))
			if err != nil {
				t.Fatal(err)
			}
			for _, a := range as {
				if a.Metadata != nil && a.Metadata.SchemaString != "" {
					schema, _ = a.Metadata.Schema()
					mode = a.Metadata.Properties().ColumnMappingMode
				}
				if a.Add == nil || a.Add.Stats == "" || schema == nil {
					continue
				}
				st, err := ParseStats(a.Add.Stats)
				if err != nil {
					t.Errorf("%s: %v", dir, err)
					continue
				}
				n += checkStatBounds(t, filepath.Base(dir), schema, mode, st.MinValues, st.MaxValues)
			}
		}
	}
	if n < 100 {
		t.Errorf("only %d stats bounds checked", n)
	}
}

func checkStatBounds(t *testing.T, table string, st *StructType, mode string, mins, maxs map[string]any) int {
	n := 0
	for _, f := range st.Fields {
		key := f.PhysicalName(mode)
		lo, hi := mins[key], maxs[key]
		if sub, ok := f.Type.(*StructType); ok {
			lm, _ := lo.(map[string]any)
			hm, _ := hi.(map[string]any)
			n += checkStatBounds(t, table, sub, mode, lm, hm)
			continue
		}
		if lo == nil && hi == nil {
			continue
		}
		// Type widening: a file written before a column was widened
		// holds stats of the old type, which parse as the new one.
		lv, err1 := ParseStatValue(f.Type, lo)
		hv, err2 := ParseStatValue(f.Type, hi)
		if err1 != nil || err2 != nil {
			t.Errorf("%s: column %s: %v %v", table, f.Name, err1, err2)
			continue
		}
		n++
		if lv != nil && hv != nil {
			if c, err := CompareValues(lv, hv); err != nil || c > 0 {
				t.Errorf("%s: column %s: min %v > max %v (%v)", table, f.Name, lv, hv, err)
			}
		}
	}
	return n
}

func TestDateTimeStrings(t *testing.T) {
	if got := Date(-719162).String(); got != "0001-01-01" {
		t.Errorf("Date = %s", got)
	}
	if got := Date(2932896).String(); got != "9999-12-31" {
		t.Errorf("Date = %s", got)
	}
	if got := Timestamp(-1).String(); got != "1969-12-31T23:59:59.999999Z" {
		t.Errorf("Timestamp = %s", got)
	}
	if got := TimestampNTZ(1373043660123456).String(); got != "2013-07-05T17:01:00.123456" {
		t.Errorf("TimestampNTZ = %s", got)
	}
	loc := time.FixedZone("x", -7*3600)
	tm := time.Date(2021, 10, 1, 1, 9, 20, 123456789, loc)
	if got := TimestampOf(tm); got.String() != "2021-10-01T08:09:20.123456Z" || !got.Time().Equal(tm.Truncate(time.Microsecond)) {
		t.Errorf("TimestampOf = %s", got)
	}
	if got := TimestampNTZOf(tm).String(); got != "2021-10-01T01:09:20.123456" {
		t.Errorf("TimestampNTZOf = %s", got)
	}
	if got := DateOf(tm); got.String() != "2021-10-01" || !got.Time().Equal(time.Date(2021, 10, 1, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("DateOf = %s", got)
	}
	// Every day over a wide range survives days -> text -> days.
	for d := int64(-800000); d < 3000000; d += 97 {
		s := Date(d).String()
		back, err := ParseDate(s)
		if err != nil || int64(back) != d {
			t.Fatalf("%d -> %s -> %d, %v", d, s, back, err)
		}
	}
}
