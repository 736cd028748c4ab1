package cdc

import (
	"cmp"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/lakelog/lakelog/objstore/cloudtest"
	"github.com/lakelog/lakelog/test/cdctest"
)

var capture = flag.Bool("cdc.capture", false, "capture testdata/postgres-events.jsonl again from the real Postgres, Kafka Connect and Debezium (CI's servers)")

// fixtureRecord is one Kafka record of testdata/postgres-events.jsonl.
type fixtureRecord struct {
	Step   string          `json:"step"`
	Topic  string          `json:"topic"`
	Offset int64           `json:"offset"`
	Key    json.RawMessage `json:"key"`
	Value  json.RawMessage `json:"value"`
}

// The capture's table: every Postgres type the pipeline maps, and the
// statements whose events the tests decode. Values are chosen at the
// edges (ranges, NaN and infinities, scales, NULLs) and large enough to
// be TOASTed out of line (random text compresses badly).
const captureTable = `create table cdc_types (
	id int primary key,
	big bigint not null,
	small smallint,
	amount numeric(12,2),
	anynum numeric,
	title text,
	code varchar(20),
	flag boolean,
	ts timestamptz,
	tsntz timestamp,
	d date,
	tm time,
	tm3 time(3),
	doc jsonb,
	uid uuid,
	raw bytea,
	tags text[],
	ratio double precision,
	r real,
	nums int[],
	iv interval
);
create or replace function big_text(n int) returns text language sql as
  $$ select string_agg(md5(g::text), '') from generate_series(1, n) g $$;
`

var captureSteps = []struct{ name, sql string }{
	{"snapshot", `insert into cdc_types values
	(1, 9223372036854775807, -32768, -1234567890.12, 3.14159265358979323846264338327950288, 'ann', 'A-1', true,
	 '2026-01-01 10:00:00.123456+00', '2026-01-01 10:00:00.5', '2000-01-02', '10:15:30.25', '23:59:59.999', '{"a": [1, 2.5, null], "b": "x"}',
	 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', '\x00ff10', '{"x","y,z",NULL,""}', 0.3333333333333333, 1.5, '{1,NULL,-3}', '1 day 02:00:00');`},
	{"inserts", `insert into cdc_types values
	(2, -9223372036854775808, 32767, 0.01, -0.000001, '', 'B', false,
	 '1970-01-01 00:00:00+00', '1900-02-28 23:59:59.999999', '0001-01-01', '00:00:00', '00:00:00', '[]',
	 '00000000-0000-0000-0000-000000000000', '', '{}', 'NaN', '-Infinity', '{}', '-3 months'),
	(3, 0, 0, null, null, null, null, null, null, null, null, null, null, null, null, null, null, 'Infinity', 'NaN', null, null),
	(4, 42, 1, 99999.99, 'NaN', big_text(400), 'big', true,
	 '2026-06-30 23:59:59.999999-07', '2026-06-30 23:59:59', '2026-06-30', '24:00:00', '12:00:00.001', ('{"k": "' || big_text(300) || '"}')::jsonb,
	 'ffffffff-ffff-ffff-ffff-ffffffffffff', decode(big_text(300), 'hex'), array[big_text(200), 'b'], -1e308, 3.4e38, array(select g from generate_series(1, 3000) g), '1 year 2 mons 3 days 04:05:06.789');`},
	// Under the default replica identity the unchanged TOASTed columns
	// of row 4 come as Debezium's placeholder.
	{"toast-update", `update cdc_types set code = 'changed', small = 2 where id = 4;`},
	{"transaction", `begin;
	update cdc_types set flag = not flag where id in (1, 2);
	insert into cdc_types (id, big) values (5, 5), (6, 6);
	delete from cdc_types where id = 6;
	commit;`},
	{"delete", `delete from cdc_types where id = 3;`},
	{"numeric-scale", `alter table cdc_types alter column amount type numeric(14,3);
	update cdc_types set amount = 1.234 where id = 1;
	update cdc_types set amount = -98765.432 where id = 2;
	insert into cdc_types (id, big, amount) values (7, 7, 5.5);`},
	{"add-column-default", `alter table cdc_types add column seven int not null default 7;
	insert into cdc_types (id, big, seven) values (8, 8, 8);`},
	{"widen", `alter table cdc_types alter column small type integer;
	insert into cdc_types (id, big, small) values (9, 9, 100000);`},
	{"replica-identity-full", `alter table cdc_types replica identity full;
	update cdc_types set code = 'full' where id = 4;`},
	{"truncate", `truncate cdc_types;`},
}

// TestCaptureFixtures captures the fixture of the decoder's tests from
// the real servers: run with -cdc.capture (CI's servers up) and review
// the diff.
func TestCaptureFixtures(t *testing.T) {
	if !*capture {
		t.Skip("captures testdata/postgres-events.jsonl with -cdc.capture")
	}
	svc := cdctest.Require(t)
	name := "fixture" + strings.ReplaceAll(cloudtest.Name(""), "-", "_")
	svc.PsqlErr("drop table if exists cdc_types")
	svc.Psql(t, captureTable)
	t.Cleanup(func() { svc.PsqlErr("drop table if exists cdc_types") })
	var out []fixtureRecord
	topics := []string{name + ".public.cdc_types", name + ".transaction"}
	seen := map[string]bool{}
	collect := func(step string) {
		time.Sleep(3 * time.Second)
		recs := svc.ReadTopics(t, 3*time.Second, topics...)
		slices.SortStableFunc(recs, func(a, b *kgo.Record) int { return cmp.Compare(a.Topic, b.Topic) })
		for _, r := range recs {
			id := fmt.Sprintf("%s/%d/%d", r.Topic, r.Partition, r.Offset)
			if seen[id] {
				continue
			}
			seen[id] = true
			out = append(out, fixtureRecord{Step: step, Topic: strings.TrimPrefix(r.Topic, name+"."), Offset: r.Offset, Key: raw(r.Key), Value: raw(r.Value)})
		}
	}
	for i, s := range captureSteps {
		svc.Psql(t, s.sql)
		if i == 0 {
			svc.Connector(t, svc.Connect, name, svc.ConnectorConfig(name, "public.cdc_types"))
		}
		collect(s.name)
	}
	f, err := os.Create("testdata/postgres-events.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	enc := json.NewEncoder(f)
	for _, r := range out {
		if err := enc.Encode(r); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("%d records", len(out))
}

func raw(b []byte) json.RawMessage {
	if len(b) == 0 {
		return json.RawMessage("null")
	}
	return json.RawMessage(b)
}
