package input

import (
	"testing"

	"github.com/lakelog/lakelog/actions"
)

// Spark's inference folds a column's values in order, each tried from
// the type so far on; the cases are Spark's answers (CSVInferSchemaSuite
// and Spark 4.2 itself).
func TestInferCSVField(t *testing.T) {
	for _, c := range []struct {
		values []string
		want   string
	}{
		{[]string{"1", "-2", "+3", "007"}, "integer"},
		{[]string{"1", "2147483648"}, "long"},
		{[]string{"9223372036854775808"}, "decimal(19,0)"},
		{[]string{"1", "9223372036854775808"}, "decimal(19,0)"},
		{[]string{"99999999999999999999999999999999999999"}, "decimal(38,0)"},
		{[]string{"999999999999999999999999999999999999999"}, "double"},
		{[]string{"1.5"}, "double"},
		{[]string{"1e3"}, "double"}, // a negative scale: not a decimal
		{[]string{"5."}, "decimal(1,0)"},
		{[]string{"9223372036854775808", "1.5"}, "double"},
		{[]string{"NaN", "Inf", "-Inf", "1"}, "double"},
		{[]string{" 5"}, "double"}, // Java's parseDouble trims, parseInt does not
		{[]string{"2024-01-15"}, "date"},
		{[]string{"2024-1-5"}, "timestamp"}, // not yyyy-MM-dd, but a timestamp
		{[]string{"2024-01-15", "2024-01-15 10:00:00"}, "timestamp"},
		{[]string{"2024-01-15 10:00:00", "2024-01-15"}, "timestamp"},
		{[]string{"2024-01-15", "2024"}, "string"}, // Spark: timestamp; lakelog reads no year alone
		{[]string{"2024", "2024-01-15"}, "string"},
		{[]string{"true", "FALSE"}, "boolean"},
		{[]string{"true", "1"}, "string"},
		{[]string{"1", "true"}, "string"},
		{[]string{"", ""}, ""},
		{[]string{"", "x"}, "string"},
		{[]string{"2023-02-29"}, "string"},
		{[]string{"1,5"}, "string"},
		{[]string{"1.5d"}, "string"}, // Spark: double (Java's suffix)
	} {
		var typ actions.DataType
		for _, v := range c.values {
			typ = inferCSVField(typ, v)
		}
		got := ""
		if typ != nil {
			got = typ.String()
		}
		if got != c.want {
			t.Errorf("%q: %s, want %s", c.values, got, c.want)
		}
	}
}
