package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/writer/input"
)

// The testdata events are real: Debezium 3.6.1's Postgres connector
// through Kafka Connect's JsonConverter, with and without the schema part.

func readEvent(t *testing.T, name string) *event {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	e, err := decodeEvent(b)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return e
}

// rowText is the row converted for the table types of its fields, as
// name=type:value.
func rowText(t *testing.T, e *event) string {
	t.Helper()
	var parts []string
	for _, f := range e.fields {
		typ := deltaType(f, e.row[f.name])
		if typ == nil {
			parts = append(parts, f.name+"=?:null")
			continue
		}
		v, err := value(f, typ, e.row[f.name])
		if err != nil {
			t.Fatalf("column %s: %v", f.name, err)
		}
		switch x := v.(type) {
		case json.RawMessage:
			v = string(x)
		case nil:
			v = "null"
		}
		parts = append(parts, fmt.Sprintf("%s=%s:%v", f.name, typ, v))
	}
	return strings.Join(parts, " ")
}

func TestDecodeWithSchema(t *testing.T) {
	e := readEvent(t, "snapshot-read-with-schema.json")
	if e.op != "r" || *e.lsn != 22472928 || *e.txID != 738 || *e.tsMs != 1796274157075 || *e.sourceTsMs != 1796274156851 || !e.typed {
		t.Fatalf("event %+v", e)
	}
	// numeric(10,2) is base64 of the unscaled value; date is days; a
	// timestamp without time zone is microseconds.
	want := `id=long:1 name=string:"ann" balance=decimal(10,2):10.50 born=date:2000-01-02 seen=timestamp:2026-01-01T10:00:00Z`
	if got := rowText(t, e); got != want {
		t.Fatalf("row\n got %s\nwant %s", got, want)
	}
	// A delete's row is its before image (the key, with the default
	// replica identity).
	d := readEvent(t, "delete-with-schema.json")
	if got := rowText(t, d); d.op != "d" || got != `id=long:2 name=string:null balance=decimal(10,2):null born=date:null seen=timestamp:null` {
		t.Fatalf("delete: %s %s", d.op, got)
	}
}

func TestDecodeWithoutSchema(t *testing.T) {
	e := readEvent(t, "update-without-schema.json")
	if e.op != "u" || *e.lsn != 23669984 || e.typed {
		t.Fatalf("event %+v", e)
	}
	// Types inferred from the values, columns in the object's order.
	want := `id=long:3 name=string:"seed-3++++" qty=long:8 price=string:"3.75" note=string:"u16"`
	if got := rowText(t, e); got != want {
		t.Fatalf("row\n got %s\nwant %s", got, want)
	}
	d := readEvent(t, "delete-without-schema.json")
	if got := rowText(t, d); d.op != "d" || got != `id=long:11 name=?:null qty=?:null price=?:null` {
		t.Fatalf("delete: %s %s", d.op, got)
	}
}

func TestDecodeTombstonesAndBadEvents(t *testing.T) {
	for _, v := range []string{"", "null", "  "} {
		if _, err := decodeEvent([]byte(v)); !errors.Is(err, errTombstone) {
			t.Errorf("%q: %v, want a tombstone", v, err)
		}
	}
	for _, c := range []struct{ value, want string }{
		{`{`, "not a JSON object"},
		{`{"after": {"id": 1}}`, `no "op"`},
		{`{"op": "t", "source": {}}`, `op "t" is not a row change`},
		{`{"op": "d", "before": null}`, `without "before"`},
		{`{"op": "c", "after": null}`, `without "after"`},
		{`{"schema": {"type": "struct"}}`, `a "schema" without a "payload"`},
		{`{"schema": {"type": "struct", "fields": []}, "payload": {"op": "c", "after": {"id": 1}}}`, `no struct "after"`},
		{`{"op": "c", "after": [1]}`, "after"},
	} {
		_, err := decodeEvent([]byte(c.value))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.value, err, c.want)
		}
	}
}

func TestDecimals(t *testing.T) {
	f := rowField{name: "d", schema: &connectSchema{Type: "bytes", Name: "org.apache.kafka.connect.data.Decimal", Parameters: map[string]string{"scale": "2", "connect.decimal.precision": "10"}}}
	typ := deltaType(f, nil)
	for b64, want := range map[string]string{"BBo=": "10.50", "/rs=": "-3.25", "/x8=": "-2.25", "ZA==": "1.00", "AA==": "0.00", "": "0.00"} {
		v, err := value(f, typ, json.RawMessage(`"`+b64+`"`))
		if err != nil || v != want {
			t.Errorf("%s: %v %v, want %s", b64, v, err, want)
		}
	}
	if _, err := value(f, typ, json.RawMessage(`"!!"`)); err == nil {
		t.Error("bad base64 accepted")
	}
}

// bronzeRows lays events out as the bronze table's rows: the table's
// columns first, new ones after; tombstones make no row; a bad event is
// named by its topic, partition and offset.
func TestBronzeRows(t *testing.T) {
	read := func(name string) []byte {
		b, err := os.ReadFile("testdata/" + name)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	recs := []*kgo.Record{
		{Topic: "pg.public.customers", Partition: 0, Offset: 7, Value: read("snapshot-read-with-schema.json")},
		{Topic: "pg.public.customers", Partition: 0, Offset: 8, Value: nil},
		{Topic: "pg.public.customers", Partition: 0, Offset: 9, Value: read("delete-with-schema.json")},
	}
	table := &actions.StructType{Fields: append(bronzeColumns, &actions.StructField{Name: "name", Type: actions.TypeString, Nullable: true})}
	lines, schema, n, err := bronzeRows(table, recs)
	if err != nil || n != 2 {
		t.Fatalf("%d events, %v", n, err)
	}
	var names []string
	for _, f := range schema.Fields[len(bronzeColumns):] {
		names = append(names, f.Name+" "+f.Type.String())
	}
	if got := strings.Join(names, ", "); got != "name string, id long, balance decimal(10,2), born date, seen timestamp" {
		t.Fatalf("columns: %s", got)
	}
	dec, err := input.NewDecoder(bytes.NewReader(lines), "events.jsonl", schema, input.WithFormat(input.JSONL))
	if err != nil {
		t.Fatal(err)
	}
	var rows []string
	for rec, err := range dec.Records(context.Background()) {
		if err != nil {
			t.Fatal(err)
		}
		for i := range int(rec.NumRows()) {
			var cols []string
			for _, c := range []string{colOp, colOffset, "id", "balance", "born"} {
				cols = append(cols, rec.Column(rec.Schema().FieldIndices(c)[0]).ValueStr(i))
			}
			rows = append(rows, strings.Join(cols, " "))
		}
	}
	if got := strings.Join(rows, "; "); got != "r 7 1 10.5 2000-01-02; d 9 2 (null) (null)" {
		t.Fatalf("rows: %s", got)
	}

	recs[1].Value = []byte(`{"op": "x"}`)
	if _, _, _, err := bronzeRows(table, recs); err == nil || !strings.Contains(err.Error(), "pg.public.customers/0 offset 8") {
		t.Fatalf("a bad event: %v", err)
	}
}
