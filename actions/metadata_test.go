package actions

import (
	"strings"
	"testing"
	"time"
)

func TestMetadataSchema(t *testing.T) {
	md := &Metadata{ID: "t", SchemaString: `{"type":"struct","fields":[{"name":"a","type":"integer","nullable":true,"metadata":{}}]}`}
	st, err := md.Schema()
	if err != nil || st.Field("a").Type != TypeInteger {
		t.Fatalf("Schema() = %v, %v", st, err)
	}
	if _, err := (&Metadata{ID: "t"}).Schema(); err == nil {
		t.Error("an empty schemaString parses")
	}
	var nilMD *Metadata
	if _, err := nilMD.Schema(); err == nil {
		t.Error("nil metadata has a schema")
	}
}

func TestTableProperties(t *testing.T) {
	md := &Metadata{Configuration: map[string]string{
		"delta.checkpointInterval":           " 5 ",
		"delta.appendOnly":                   "TRUE",
		"delta.logRetentionDuration":         "interval 30 days",
		"delta.deletedFileRetentionDuration": "Interval 1 Week",
		"bad.int":                            "ten",
		"bad.bool":                           "yes",
		"bad.duration":                       "interval 1 month",
	}}
	if n, err := PropInt(md, "delta.checkpointInterval", 10); n != 5 || err != nil {
		t.Errorf("PropInt = %d, %v", n, err)
	}
	if n, err := PropInt(md, "unset", 10); n != 10 || err != nil {
		t.Errorf("PropInt default = %d, %v", n, err)
	}
	if n, err := PropInt(nil, "unset", 10); n != 10 || err != nil {
		t.Errorf("PropInt on nil metadata = %d, %v", n, err)
	}
	if b, err := PropBool(md, "delta.appendOnly", false); !b || err != nil {
		t.Errorf("PropBool = %v, %v", b, err)
	}
	if d, err := PropDuration(md, "delta.logRetentionDuration", 0); d != 30*24*time.Hour || err != nil {
		t.Errorf("PropDuration = %v, %v", d, err)
	}
	if d, err := PropDuration(md, "delta.deletedFileRetentionDuration", 0); d != 7*24*time.Hour || err != nil {
		t.Errorf("PropDuration = %v, %v", d, err)
	}
	for _, key := range []string{"bad.int", "bad.bool", "bad.duration"} {
		var err error
		switch key {
		case "bad.int":
			_, err = PropInt(md, key, 0)
		case "bad.bool":
			_, err = PropBool(md, key, false)
		default:
			_, err = PropDuration(md, key, 0)
		}
		if err == nil || !strings.Contains(err.Error(), key) {
			t.Errorf("%s: err = %v, want one naming the key", key, err)
		}
	}
}

func TestParseInterval(t *testing.T) {
	for in, want := range map[string]time.Duration{
		"interval 30 days":           30 * 24 * time.Hour,
		"30 days":                    30 * 24 * time.Hour,
		"INTERVAL 1 WEEK":            7 * 24 * time.Hour,
		"interval 1 day 12 hours":    36 * time.Hour,
		"1 hour 30 minutes 5 second": time.Hour + 30*time.Minute + 5*time.Second,
		"250 milliseconds":           250 * time.Millisecond,
		"1 microsecond":              time.Microsecond,
		"interval -1 days":           -24 * time.Hour,
		"  interval   2   weeks  ":   14 * 24 * time.Hour,
	} {
		got, err := ParseInterval(in)
		if err != nil || got != want {
			t.Errorf("%q = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "interval", "30", "days", "interval 1 month", "1 year", "x days", "1.5 days",
		"interval 1 day 2", "1000000000 weeks", "15000 weeks 15000 weeks"} {
		if got, err := ParseInterval(in); err == nil {
			t.Errorf("%q = %v, want an error", in, got)
		}
	}
}
