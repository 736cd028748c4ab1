package cdc

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/lakelog/lakelog/actions"
)

// The events of testdata/postgres-events.jsonl are real: Debezium
// 3.6.1's Postgres connector through Kafka Connect 4.3's JsonConverter
// (TestCaptureFixtures writes them from captureSteps).

func readFixture(t *testing.T) []fixtureRecord {
	t.Helper()
	f, err := os.Open("testdata/postgres-events.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []fixtureRecord
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var r fixtureRecord
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// valueText renders a decoded value for comparisons.
func valueText(v any) string {
	switch x := v.(type) {
	case nil:
		return "NULL"
	case string:
		if len(x) > 24 {
			return fmt.Sprintf("%q...(%d)", x[:24], len(x))
		}
		return fmt.Sprintf("%q", x)
	case []byte:
		if len(x) > 8 {
			return fmt.Sprintf("0x%x...(%d)", x[:8], len(x))
		}
		return fmt.Sprintf("0x%x", x)
	case actions.Decimal:
		return x.String()
	case actions.Date:
		return time.Unix(int64(x)*86400, 0).UTC().Format(time.DateOnly)
	case actions.Timestamp:
		return time.UnixMicro(int64(x)).UTC().Format("2006-01-02T15:04:05.999999Z")
	case actions.TimestampNTZ:
		return time.UnixMicro(int64(x)).UTC().Format("2006-01-02 15:04:05.999999")
	case []any:
		var parts []string
		for i, e := range x {
			if i == 4 {
				parts = append(parts, fmt.Sprintf("...(%d)", len(x)))
				break
			}
			parts = append(parts, valueText(e))
		}
		return "[" + strings.Join(parts, ",") + "]"
	}
	return fmt.Sprint(v)
}

func rowText(e *Event) string {
	var parts []string
	for i, c := range e.Schema.Columns {
		v := valueText(e.Row[i])
		if e.Unavailable != nil && e.Unavailable[i] {
			v = "UNAVAILABLE"
		}
		parts = append(parts, c.Name+"="+v)
	}
	return strings.Join(parts, " ")
}

func TestDecodePostgresTypes(t *testing.T) {
	dec := NewDecoder(WithVariableNumeric(NumericMode{AsString: true}))
	var rows []string
	var schemas []string
	for _, r := range readFixture(t) {
		if r.Topic == "transaction" {
			continue
		}
		e, err := dec.Decode(r.Key, r.Value)
		if errors.Is(err, ErrTombstone) {
			rows = append(rows, r.Step+" tombstone")
			continue
		}
		if err != nil {
			t.Fatalf("%s offset %d: %v", r.Step, r.Offset, err)
		}
		if e.Op == OpTruncate {
			rows = append(rows, r.Step+" t")
			continue
		}
		if fmt.Sprint(e.Key) != "[id]" {
			t.Errorf("%s offset %d: key %v, want [id]", r.Step, r.Offset, e.Key)
		}
		rows = append(rows, fmt.Sprintf("%s %s %s", r.Step, e.Op, rowText(e)))
		var cols []string
		for _, c := range e.Schema.Columns {
			s := c.Name + ":" + typeText(c.Type)
			if !c.Nullable {
				s += " not null"
			}
			if c.HasDefault {
				s += " default " + valueText(c.Default)
			}
			cols = append(cols, s)
		}
		if s := strings.Join(cols, ", "); len(schemas) == 0 || schemas[len(schemas)-1] != s {
			schemas = append(schemas, s)
		}
	}
	want := []string{
		`snapshot r id=1 big=9223372036854775807 small=-32768 amount=-1234567890.12 anynum="3.1415926535897932384626"...(37) title="ann" code="A-1" flag=true ts=2026-01-01T10:00:00.123456Z tsntz=2026-01-01 10:00:00.5 d=2000-01-02 tm="10:15:30.25" tm3="23:59:59.999" doc="{\"a\": [1, 2.5, null], \"b"...(31) uid="a0eebc99-9c0b-4ef8-bb6d-"...(36) raw=0x00ff10 tags=["x","y,z",NULL,""] ratio=0.3333333333333333 r=1.5 nums=[1,NULL,-3] iv=93600000000`,
		`inserts c id=2 big=-9223372036854775808 small=32767 amount=0.01 anynum="-0.000001" title="" code="B" flag=false ts=1970-01-01T00:00:00Z tsntz=1900-02-28 23:59:59.999999 d=0001-01-01 tm="00:00:00" tm3="00:00:00" doc="[]" uid="00000000-0000-0000-0000-"...(36) raw=0x tags=[] ratio=NaN r=-Inf nums=[] iv=-7889400000000`,
		`inserts c id=3 big=0 small=0 amount=NULL anynum=NULL title=NULL code=NULL flag=NULL ts=NULL tsntz=NULL d=NULL tm=NULL tm3=NULL doc=NULL uid=NULL raw=NULL tags=NULL ratio=+Inf r=NaN nums=NULL iv=NULL`,
		// Debezium sends numeric NaN as null in its precise mode.
		`inserts c id=4 big=42 small=1 amount=99999.99 anynum=NULL title="c4ca4238a0b923820dcc509a"...(12800) code="big" flag=true ts=2026-07-01T06:59:59.999999Z tsntz=2026-06-30 23:59:59 d=2026-06-30 tm="24:00:00" tm3="12:00:00.001" doc="{\"k\": \"c4ca4238a0b923820"...(9609) uid="ffffffff-ffff-ffff-ffff-"...(36) raw=0xc4ca4238a0b92382...(4800) tags=["c4ca4238a0b923820dcc509a"...(6400),"b"] ratio=-1e+308 r=3.4e+38 nums=[1,2,3,4,...(3000)] iv=37091106789000`,
		// The default replica identity: unchanged TOASTed values are
		// unavailable, never the placeholder.
		`toast-update u id=4 big=42 small=2 amount=99999.99 anynum=NULL title=UNAVAILABLE code="changed" flag=true ts=2026-07-01T06:59:59.999999Z tsntz=2026-06-30 23:59:59 d=2026-06-30 tm="24:00:00" tm3="12:00:00.001" doc=UNAVAILABLE uid="ffffffff-ffff-ffff-ffff-"...(36) raw=UNAVAILABLE tags=UNAVAILABLE ratio=-1e+308 r=3.4e+38 nums=UNAVAILABLE iv=37091106789000`,
		`transaction u id=1 big=9223372036854775807 small=-32768 amount=-1234567890.12 anynum="3.1415926535897932384626"...(37) title="ann" code="A-1" flag=false ts=2026-01-01T10:00:00.123456Z tsntz=2026-01-01 10:00:00.5 d=2000-01-02 tm="10:15:30.25" tm3="23:59:59.999" doc="{\"a\": [1, 2.5, null], \"b"...(31) uid="a0eebc99-9c0b-4ef8-bb6d-"...(36) raw=0x00ff10 tags=["x","y,z",NULL,""] ratio=0.3333333333333333 r=1.5 nums=[1,NULL,-3] iv=93600000000`,
		`transaction u id=2 big=-9223372036854775808 small=32767 amount=0.01 anynum="-0.000001" title="" code="B" flag=true ts=1970-01-01T00:00:00Z tsntz=1900-02-28 23:59:59.999999 d=0001-01-01 tm="00:00:00" tm3="00:00:00" doc="[]" uid="00000000-0000-0000-0000-"...(36) raw=0x tags=[] ratio=NaN r=-Inf nums=[] iv=-7889400000000`,
		`transaction c id=5 big=5 small=NULL amount=NULL anynum=NULL title=NULL code=NULL flag=NULL ts=NULL tsntz=NULL d=NULL tm=NULL tm3=NULL doc=NULL uid=NULL raw=NULL tags=NULL ratio=NULL r=NULL nums=NULL iv=NULL`,
		`transaction c id=6 big=6 small=NULL amount=NULL anynum=NULL title=NULL code=NULL flag=NULL ts=NULL tsntz=NULL d=NULL tm=NULL tm3=NULL doc=NULL uid=NULL raw=NULL tags=NULL ratio=NULL r=NULL nums=NULL iv=NULL`,
		// A delete's row is its before image: the key, and Debezium's
		// zero for a NOT NULL column it does not have.
		`transaction d id=6 big=0 small=NULL amount=NULL anynum=NULL title=NULL code=NULL flag=NULL ts=NULL tsntz=NULL d=NULL tm=NULL tm3=NULL doc=NULL uid=NULL raw=NULL tags=NULL ratio=NULL r=NULL nums=NULL iv=NULL`,
		`transaction tombstone`,
		`delete d id=3 big=0 small=NULL amount=NULL anynum=NULL title=NULL code=NULL flag=NULL ts=NULL tsntz=NULL d=NULL tm=NULL tm3=NULL doc=NULL uid=NULL raw=NULL tags=NULL ratio=NULL r=NULL nums=NULL iv=NULL`,
		`delete tombstone`,
		// After ALTER COLUMN amount TYPE numeric(14,3) each event carries
		// scale 3: 1.234, not 12.34.
		`numeric-scale u id=1 big=9223372036854775807 small=-32768 amount=1.234 anynum="3.1415926535897932384626"...(37) title="ann" code="A-1" flag=false ts=2026-01-01T10:00:00.123456Z tsntz=2026-01-01 10:00:00.5 d=2000-01-02 tm="10:15:30.25" tm3="23:59:59.999" doc="{\"a\": [1, 2.5, null], \"b"...(31) uid="a0eebc99-9c0b-4ef8-bb6d-"...(36) raw=0x00ff10 tags=["x","y,z",NULL,""] ratio=0.3333333333333333 r=1.5 nums=[1,NULL,-3] iv=93600000000`,
		`numeric-scale u id=2 big=-9223372036854775808 small=32767 amount=-98765.432 anynum="-0.000001" title="" code="B" flag=true ts=1970-01-01T00:00:00Z tsntz=1900-02-28 23:59:59.999999 d=0001-01-01 tm="00:00:00" tm3="00:00:00" doc="[]" uid="00000000-0000-0000-0000-"...(36) raw=0x tags=[] ratio=NaN r=-Inf nums=[] iv=-7889400000000`,
		`numeric-scale c id=7 big=7 small=NULL amount=5.500 anynum=NULL title=NULL code=NULL flag=NULL ts=NULL tsntz=NULL d=NULL tm=NULL tm3=NULL doc=NULL uid=NULL raw=NULL tags=NULL ratio=NULL r=NULL nums=NULL iv=NULL`,
		`add-column-default c id=8 big=8 small=NULL amount=NULL anynum=NULL title=NULL code=NULL flag=NULL ts=NULL tsntz=NULL d=NULL tm=NULL tm3=NULL doc=NULL uid=NULL raw=NULL tags=NULL ratio=NULL r=NULL nums=NULL iv=NULL seven=8`,
		`widen c id=9 big=9 small=100000 amount=NULL anynum=NULL title=NULL code=NULL flag=NULL ts=NULL tsntz=NULL d=NULL tm=NULL tm3=NULL doc=NULL uid=NULL raw=NULL tags=NULL ratio=NULL r=NULL nums=NULL iv=NULL seven=7`,
		// REPLICA IDENTITY FULL: every value comes.
		`replica-identity-full u id=4 big=42 small=2 amount=99999.990 anynum=NULL title="c4ca4238a0b923820dcc509a"...(12800) code="full" flag=true ts=2026-07-01T06:59:59.999999Z tsntz=2026-06-30 23:59:59 d=2026-06-30 tm="24:00:00" tm3="12:00:00.001" doc="{\"k\": \"c4ca4238a0b923820"...(9609) uid="ffffffff-ffff-ffff-ffff-"...(36) raw=0xc4ca4238a0b92382...(4800) tags=["c4ca4238a0b923820dcc509a"...(6400),"b"] ratio=-1e+308 r=3.4e+38 nums=[1,2,3,4,...(3000)] iv=37091106789000 seven=7`,
		`truncate t`,
	}
	if len(rows) != len(want) {
		t.Errorf("%d events, want %d:\n%s", len(rows), len(want), strings.Join(rows, "\n"))
	}
	for i := range min(len(rows), len(want)) {
		if rows[i] != want[i] {
			t.Errorf("event %d:\n got %s\nwant %s", i, rows[i], want[i])
		}
	}
	wantSchemas := []string{
		"id:integer not null, big:long not null, small:short, amount:decimal(12,2), anynum:string, title:string, code:string, flag:boolean, ts:timestamp, tsntz:timestamp_ntz, d:date, tm:string, tm3:string, doc:string, uid:string, raw:binary, tags:array<string>, ratio:double, r:float, nums:array<integer>, iv:long",
		"id:integer not null, big:long not null, small:short, amount:decimal(14,3), anynum:string, title:string, code:string, flag:boolean, ts:timestamp, tsntz:timestamp_ntz, d:date, tm:string, tm3:string, doc:string, uid:string, raw:binary, tags:array<string>, ratio:double, r:float, nums:array<integer>, iv:long",
		"id:integer not null, big:long not null, small:short, amount:decimal(14,3), anynum:string, title:string, code:string, flag:boolean, ts:timestamp, tsntz:timestamp_ntz, d:date, tm:string, tm3:string, doc:string, uid:string, raw:binary, tags:array<string>, ratio:double, r:float, nums:array<integer>, iv:long, seven:integer not null default 7",
		"id:integer not null, big:long not null, small:integer, amount:decimal(14,3), anynum:string, title:string, code:string, flag:boolean, ts:timestamp, tsntz:timestamp_ntz, d:date, tm:string, tm3:string, doc:string, uid:string, raw:binary, tags:array<string>, ratio:double, r:float, nums:array<integer>, iv:long, seven:integer not null default 7",
	}
	if strings.Join(schemas, "\n") != strings.Join(wantSchemas, "\n") {
		t.Errorf("schemas:\n%s\nwant\n%s", strings.Join(schemas, "\n"), strings.Join(wantSchemas, "\n"))
	}
}
