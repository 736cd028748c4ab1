package actions

import (
	"bytes"
	"math"
	"math/big"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

func ptr(s string) *string { return &s }

func TestParsePartitionValue(t *testing.T) {
	for _, tc := range []struct {
		t    DataType
		in   string
		want any
		out  string // FormatPartitionValue of want; "" means in
	}{
		{TypeString, "null", "null", ""},
		{TypeString, " a/b=c ", " a/b=c ", ""},
		{TypeLong, "-9223372036854775808", int64(math.MinInt64), ""},
		{TypeInteger, "2147483647", int32(math.MaxInt32), ""},
		{TypeShort, "-32768", int16(-32768), ""},
		{TypeByte, "127", int8(127), ""},
		{TypeBoolean, "true", true, ""},
		{TypeBoolean, "FALSE", false, "false"},
		{TypeDouble, "0.0", 0.0, "0"},
		{TypeDouble, "1.5E10", 1.5e10, "1.5e+10"},
		{TypeDouble, "NaN", math.NaN(), "NaN"},
		{TypeDouble, "-Infinity", math.Inf(-1), "-Infinity"},
		{TypeFloat, "1.1", float32(1.1), "1.1"},
		{TypeFloat, "Infinity", float32(math.Inf(1)), "Infinity"},
		{TypeDate, "2021-09-08", Date(18878), ""},
		{TypeDate, "1969-12-31", Date(-1), ""},
		{TypeDate, "0001-01-01", Date(-719162), ""},
		{TypeDate, "+10000-01-01", Date(2932897), ""},
		{TypeTimestamp, "2021-09-08 11:11:11", Timestamp(1631099471000000), "2021-09-08T11:11:11.000000Z"},
		{TypeTimestamp, "2020-01-01 08:09:10.001", Timestamp(1577866150001000), "2020-01-01T08:09:10.001000Z"},
		{TypeTimestamp, "2021-10-01T08:09:20.000000Z", Timestamp(1633075760000000), ""},
		{TypeTimestamp, "2021-10-01T01:09:20.5-07:00", Timestamp(1633075760500000), "2021-10-01T08:09:20.500000Z"},
		{TypeTimestamp, "2021-10-01T09:09:20+0100", Timestamp(1633075760000000), "2021-10-01T08:09:20.000000Z"},
		{TypeTimestamp, "1969-01-01 00:00:00", Timestamp(-31536000000000), "1969-01-01T00:00:00.000000Z"},
		{TypeTimestamp, "1969-12-31 23:59:59.999999999", Timestamp(-1), "1969-12-31T23:59:59.999999Z"},
		{TypeTimestampNTZ, "2013-07-05 17:01:00.123456", TimestampNTZ(1373043660123456), ""},
		{TypeTimestampNTZ, "2013-07-05T17:01:00", TimestampNTZ(1373043660000000), "2013-07-05 17:01:00.000000"},
		{&DecimalType{10, 2}, "1.5", NewDecimal(150, 2), "1.50"},
		{&DecimalType{10, 2}, "-0.05", NewDecimal(-5, 2), ""},
		{&DecimalType{10, 0}, "1E+3", NewDecimal(1000, 0), "1000"},
		{&DecimalType{38, 18}, "12345678901234567890.123456789012345678", Decimal{mustBig("12345678901234567890123456789012345678"), 18}, ""},
		{TypeBinary, "\x00\x01\xff", []byte{0, 1, 0xff}, ""},
	} {
		got, err := ParsePartitionValue(tc.t, ptr(tc.in))
		if err != nil {
			t.Errorf("%s %q: %v", tc.t, tc.in, err)
			continue
		}
		if c, err := CompareValues(got, tc.want); err != nil || c != 0 {
			t.Errorf("%s %q = %#v, want %#v (%v)", tc.t, tc.in, got, tc.want, err)
			continue
		}
		out, err := FormatPartitionValue(tc.t, got)
		if err != nil {
			t.Errorf("%s %q: format: %v", tc.t, tc.in, err)
			continue
		}
		want := tc.out
		if want == "" {
			want = tc.in
		}
		if out == nil || *out != want {
			t.Errorf("%s %q formats as %v, want %q", tc.t, tc.in, out, want)
		}
	}
}

func mustBig(s string) *big.Int {
	b, ok := new(big.Int).SetString(s, 10)
	if !ok {
		panic(s)
	}
	return b
}

func TestPartitionValueNulls(t *testing.T) {
	for _, typ := range []DataType{TypeString, TypeLong, TypeDate, TypeTimestamp, &DecimalType{5, 1}, TypeBinary} {
		for _, in := range []*string{nil, ptr("")} {
			v, err := ParsePartitionValue(typ, in)
			if err != nil || v != nil {
				t.Errorf("%s %v: got %v, %v; want null", typ, in, v, err)
			}
		}
		if s, err := FormatPartitionValue(typ, nil); s != nil || err != nil {
			t.Errorf("%s: format nil = %v, %v", typ, s, err)
		}
	}
	if s, err := FormatPartitionValue(TypeString, ""); s != nil || err != nil {
		t.Errorf(`format "" = %v, %v; want null`, s, err)
	}
}

func TestParsePartitionValueErrors(t *testing.T) {
	for _, tc := range []struct {
		t  DataType
		in string
	}{
		{TypeByte, "128"},
		{TypeInteger, "1.0"},
		{TypeLong, "0x10"},
		{TypeBoolean, "yes"},
		{TypeDouble, "one"},
		{TypeDate, "2021-02-29"},
		{TypeDate, "2021-13-01"},
		{TypeDate, "2021-01-01 00:00:00"},
		{TypeTimestamp, "2021-01-01 24:00:00"},
		{TypeTimestamp, "2021-01-01T00:00:00+19:00"},
		{TypeTimestamp, "2021-01-01T00:00:00Zjunk"},
		{TypeTimestamp, "2021-01-01 00:00:60"},
		{TypeTimestampNTZ, "2021-01-01T00:00:00Z"},
		{&DecimalType{4, 2}, "100.00"},
		{&DecimalType{4, 2}, "1.001"},
		{&DecimalType{4, 2}, "1e1000000000"},
		{&DecimalType{4, 2}, "1.2.3"},
		{&ArrayType{ElementType: TypeString}, "x"},
		{TypeVariant, "x"},
	} {
		if v, err := ParsePartitionValue(tc.t, ptr(tc.in)); err == nil {
			t.Errorf("%s %q = %#v, want an error", tc.t, tc.in, v)
		} else if !strings.HasPrefix(err.Error(), "actions: ") {
			t.Errorf("%s %q: message %q", tc.t, tc.in, err)
		}
	}
	if _, err := FormatPartitionValue(TypeLong, int32(1)); err == nil {
		t.Error("FormatPartitionValue(long, int32) succeeded")
	}
	if _, err := FormatPartitionValue(&DecimalType{3, 1}, NewDecimal(12345, 2)); err == nil {
		t.Error("FormatPartitionValue of a decimal that does not fit succeeded")
	}
}

// Every partition value in the golden tables parses as its column's type
// and formats back to a value that parses equal.
func TestGoldenPartitionValues(t *testing.T) {
	tables := map[string][]string{}
	for _, f := range goldenCommits(t) {
		dir := filepath.Dir(f)
		tables[dir] = append(tables[dir], f)
	}
	n := 0
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
					if schema, err = a.Metadata.Schema(); err != nil {
						t.Fatal(err)
					}
					mode = a.Metadata.Properties().ColumnMappingMode
				}
				var pv map[string]*string
				switch {
				case a.Add != nil:
					pv = a.Add.PartitionValues
				case a.Remove != nil:
					pv = a.Remove.PartitionValues
				}
				for key, v := range pv {
					if schema == nil {
						continue
					}
					var field *StructField
					for _, f := range schema.Fields {
						if f.PhysicalName(mode) == key {
							field = f
						}
					}
					if field == nil {
						t.Errorf("%s: partition column %q not in the schema", f, key)
						continue
					}
					got, err := ParsePartitionValue(field.Type, v)
					if err != nil {
						t.Errorf("%s: %v", filepath.Base(dir), err)
						continue
					}
					n++
					out, err := FormatPartitionValue(field.Type, got)
					if err != nil {
						t.Errorf("%s: format %#v: %v", filepath.Base(dir), got, err)
						continue
					}
					back, err := ParsePartitionValue(field.Type, out)
					if err != nil {
						t.Errorf("%s: reparse %q: %v", filepath.Base(dir), *out, err)
						continue
					}
					if (got == nil) != (back == nil) {
						t.Errorf("%s: %v became %v", filepath.Base(dir), got, back)
					} else if got != nil {
						if c, err := CompareValues(got, back); err != nil || c != 0 {
							t.Errorf("%s: %#v became %#v", filepath.Base(dir), got, back)
						}
					}
				}
			}
		}
	}
	if n < 100 {
		t.Errorf("only %d partition values checked", n)
	}
}

func TestEscapePartitionPath(t *testing.T) {
	for in, want := range map[string]string{
		"plain-Value_1.2 ü":     "plain-Value_1.2 ü",
		"a/b":                   "a%2Fb",
		"2021-01-01 10:00:00":   "2021-01-01 10%3A00%3A00",
		"\"#%'*/:=?\\{[]^":      "%22%23%25%27%2A%2F%3A%3D%3F%5C%7B%5B%5D%5E",
		"\x00\x01\x1f\x7f }<>|": "%00%01%1F%7F }<>|",
	} {
		got := EscapePartitionPath(in)
		if got != want {
			t.Errorf("Escape(%q) = %q, want %q", in, got, want)
		}
		back, err := UnescapePartitionPath(got)
		if err != nil || back != in {
			t.Errorf("Unescape(%q) = %q, %v", got, back, err)
		}
	}
	if got, err := UnescapePartitionPath("a%2fb%C3%BC"); err != nil || got != "a/bü" {
		t.Errorf("lower-case hex and UTF-8 bytes: %q, %v", got, err)
	}
	for _, bad := range []string{"%", "%2", "%zz", "a%2"} {
		if _, err := UnescapePartitionPath(bad); err == nil {
			t.Errorf("Unescape(%q) succeeded", bad)
		}
	}
}

func TestPartitionPath(t *testing.T) {
	schema, err := ParseDDL("a int, `b/c` string, d date, v long")
	if err != nil {
		t.Fatal(err)
	}
	got, err := PartitionPath([]string{"a", "b/c", "d"}, schema, map[string]*string{"a": ptr("1"), "b/c": nil, "d": ptr("2021-01-02")})
	if err != nil {
		t.Fatal(err)
	}
	if want := "a=1/b%2Fc=__HIVE_DEFAULT_PARTITION__/d=2021-01-02/"; got != want {
		t.Errorf("got %q want %q", got, want)
	}
	if got, _ := PartitionPath(nil, schema, nil); got != "" {
		t.Errorf("no columns: %q", got)
	}
	for _, tc := range []struct {
		cols []string
		vals map[string]*string
	}{
		{[]string{"a"}, map[string]*string{}},
		{[]string{"zz"}, map[string]*string{"zz": ptr("1")}},
		{[]string{"a"}, map[string]*string{"a": ptr("x")}},
	} {
		if _, err := PartitionPath(tc.cols, schema, tc.vals); err == nil {
			t.Errorf("PartitionPath(%v, %v) succeeded", tc.cols, tc.vals)
		}
	}
}

func FuzzPartitionValue(f *testing.F) {
	for _, s := range []string{"0", "-1", "127", "1.5", "1E+3", "NaN", "-Infinity", "true", "False",
		"2021-09-08", "2021-09-08 11:11:11", "2021-10-01T08:09:20.000000Z", "2021-10-01T01:09:20.5-07:00",
		"2013-07-05 17:01:00.123456", "null", "\xff", "+10000-01-01", "-0.0", "0.000001"} {
		f.Add(s)
	}
	types := []DataType{TypeString, TypeLong, TypeInteger, TypeShort, TypeByte, TypeFloat, TypeDouble,
		TypeBoolean, TypeBinary, TypeDate, TypeTimestamp, TypeTimestampNTZ,
		&DecimalType{10, 2}, &DecimalType{38, 0}, &DecimalType{38, 38}, &DecimalType{1, 0}}
	f.Fuzz(func(t *testing.T, s string) {
		for _, typ := range types {
			v, err := ParsePartitionValue(typ, &s)
			if err != nil {
				continue
			}
			out, err := FormatPartitionValue(typ, v)
			if err != nil {
				t.Fatalf("%s %q parsed as %#v but does not format: %v", typ, s, v, err)
			}
			back, err := ParsePartitionValue(typ, out)
			if err != nil {
				t.Fatalf("%s %q formatted as %q, which does not parse: %v", typ, s, *out, err)
			}
			if (v == nil) != (back == nil) {
				t.Fatalf("%s %q: %#v became %#v", typ, s, v, back)
			}
			if v == nil {
				continue
			}
			if c, err := CompareValues(v, back); err != nil || c != 0 {
				t.Fatalf("%s %q: %#v became %#v via %q", typ, s, v, back, *out)
			}
			out2, _ := FormatPartitionValue(typ, back)
			if *out2 != *out {
				t.Fatalf("%s %q: formatting is not stable: %q then %q", typ, s, *out, *out2)
			}
		}
	})
}
