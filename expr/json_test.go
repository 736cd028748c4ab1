package expr

import (
	"testing"
	"time"

	"github.com/lakelog/lakelog/actions"
)

// to_json's and get_json_object's texts, as Spark's (the differential
// test against Spark is test/interop.TestJSONFunctionsAgainstSpark).
func TestJSONTexts(t *testing.T) {
	lh, err := time.LoadLocation("Australia/Lord_Howe")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		micros int64
		loc    *time.Location
		want   string
	}{
		{0, time.UTC, "1970-01-01T00:00:00.000Z"},
		{1_710_000_000_123_456, lh, "2024-03-10T03:00:00.123+11:00"},
		{9223372036854775807, lh, "+294247-01-10T15:00:54.775+11:00"},
		{-62198755200000000, time.UTC, "-0001-01-01T00:00:00.000Z"},
	} {
		if got := jsonTimestamp(c.micros, c.loc, true); got != c.want {
			t.Errorf("jsonTimestamp(%d) = %s, want %s", c.micros, got, c.want)
		}
	}
	for _, c := range []struct {
		d    actions.Decimal
		want string
	}{
		{actions.NewDecimal(150, 2), "1.50"},
		{actions.NewDecimal(100, 10), "1.00E-8"},
		{actions.NewDecimal(0, 10), "0E-10"},
		{actions.NewDecimal(-15, 7), "-0.0000015"},
		{actions.NewDecimal(-15, 8), "-1.5E-7"},
	} {
		if got := javaBigDecimalString(c.d); got != c.want {
			t.Errorf("javaBigDecimalString(%v) = %s, want %s", c.d, got, c.want)
		}
	}
	if got := string(appendJSONString(nil, "a\"b\\c\n\t\x01\x7fé/")); got != `"a\"b\\c\n\t\u0001`+"\x7f"+`é/"` {
		t.Errorf("appendJSONString: %s", got)
	}
	doc := `{"a":{"b":[1,2.50,{"c":"x"}],"n":null},"a":{"z":1},"e":1e3,"big":123456789012345678901234} tail`
	for path, want := range map[string]any{
		"$":          `{"a":{"b":[1,2.5,{"c":"x"}],"n":null},"a":{"z":1},"e":1000.0,"big":123456789012345678901234}`,
		"$.a.b[2]":   `{"c":"x"}`,
		"$.a.b[2].c": "x",
		"$['a'].b":   `[1,2.5,{"c":"x"}]`,
		"$.a.n":      nil,
		"$.a.z":      "1", // the first a has no z, the second has
		"$.e":        "1000.0",
		"$.big":      "123456789012345678901234",
		"$.a.b[9]":   nil,
	} {
		p, err := parseJSONPath(path)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if got := getJSONObject(doc, p); got != want {
			t.Errorf("get_json_object(%s) = %v, want %v", path, got, want)
		}
	}
	if got := getJSONObject(`{"a":`, []jsonStep{{name: "a", index: -1}}); got != nil {
		t.Errorf("malformed JSON: %v", got)
	}
	for _, bad := range []string{"a", "$.", "$[x]", "$['a"} {
		if _, err := parseJSONPath(bad); err == nil {
			t.Errorf("path %q accepted", bad)
		}
	}
	if _, err := parseJSONPath("$.a[*]"); err != errJSONWildcard {
		t.Errorf("wildcard: %v", err)
	}
}
