package interop

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/deltasql"
	"github.com/lakelog/lakelog/objstore"
)

// TestProtocolRuleAgainstSpark: the one protocol rule decides as Spark
// 4.x does, statement by statement: the protocol of a new table, the
// features a property adds by itself to an existing table's protocol and
// how the protocol is written (Spark 4 keeps exactly the features
// supported: (1, 2) with a change data feed becomes (1, 7) listing
// appendOnly, invariants and changeDataFeed, while a CHECK constraint
// makes (1, 3)), and the features it refuses to add until
// delta.feature.NAME = 'supported' (timestampNtz for a new timestamp_ntz
// column). The same statements run in Spark on its tables and in
// lakelog sql on lakelog's; after each, both protocols support the same
// features at the same versions.
func TestProtocolRuleAgainstSpark(t *testing.T) {
	sp := requirePeer(t, "spark")
	type step struct {
		sql    string
		refuse bool // both refuse it
	}
	scenarios := [][]step{
		{
			{sql: "CREATE TABLE {T} (id BIGINT, v STRING) USING DELTA"},
			{sql: "ALTER TABLE {T} ADD COLUMNS (at TIMESTAMP_NTZ)", refuse: true},
			{sql: "ALTER TABLE {T} SET TBLPROPERTIES ('delta.enableChangeDataFeed' = 'true')"},
			{sql: "ALTER TABLE {T} SET TBLPROPERTIES ('delta.enableDeletionVectors' = 'true')"},
			{sql: "ALTER TABLE {T} SET TBLPROPERTIES ('delta.feature.timestampNtz' = 'supported')"},
			{sql: "ALTER TABLE {T} ADD COLUMNS (at TIMESTAMP_NTZ)"},
			{sql: "ALTER TABLE {T} SET TBLPROPERTIES ('delta.checkpointPolicy' = 'v2')"},
			{sql: "ALTER TABLE {T} SET TBLPROPERTIES ('delta.enableTypeWidening' = 'true')"},
		},
		{
			{sql: "CREATE TABLE {T} (id BIGINT NOT NULL, v STRING) USING DELTA"},
			{sql: "ALTER TABLE {T} ADD CONSTRAINT positive CHECK (id > 0)"},
			{sql: "ALTER TABLE {T} SET TBLPROPERTIES ('delta.appendOnly' = 'true')"},
			{sql: "ALTER TABLE {T} SET TBLPROPERTIES ('delta.columnMapping.mode' = 'name')"},
			{sql: "ALTER TABLE {T} SET TBLPROPERTIES ('delta.enableRowTracking' = 'true')"},
		},
		{
			{sql: "CREATE TABLE {T} (id BIGINT, v STRING) USING DELTA TBLPROPERTIES ('delta.columnMapping.mode' = 'name')"},
			{sql: "ALTER TABLE {T} SET TBLPROPERTIES ('delta.enableChangeDataFeed' = 'true')"},
			{sql: "ALTER TABLE {T} SET TBLPROPERTIES ('delta.enableDeletionVectors' = 'true')"},
		},
		{
			{sql: "CREATE TABLE {T} (id BIGINT, v STRING) USING DELTA TBLPROPERTIES ('delta.enableChangeDataFeed' = 'true')"},
			{sql: "ALTER TABLE {T} SET TBLPROPERTIES ('delta.enableInCommitTimestamps' = 'true')"},
		},
	}
	type table struct{ sdir, ldir string }
	var stmts []string
	var tables []table
	for _, sc := range scenarios {
		_, sdir := newLocal(t)
		_, ldir := newLocal(t)
		tables = append(tables, table{sdir, ldir})
		for _, st := range sc {
			stmts = append(stmts, strings.ReplaceAll(st.sql, "{T}", "delta.`"+sdir+"`"))
		}
	}
	res, err := sp.doWithin(request{Op: "sql_rows", Statements: stmts, KeepGoing: true}, time.Duration(len(stmts))*time.Minute)
	if err != nil {
		t.Fatalf("interop: %v", err)
	}
	if len(res.StatementRows) != len(stmts) {
		t.Fatalf("Spark answered %d statements of %d", len(res.StatementRows), len(stmts))
	}
	sess := deltasql.New()
	defer sess.Close()
	ctx := context.Background()
	k := 0
	for n, sc := range scenarios {
		sstore, err := objstore.NewLocal(tables[n].sdir)
		if err != nil {
			t.Fatal(err)
		}
		lstore, err := objstore.NewLocal(tables[n].ldir)
		if err != nil {
			t.Fatal(err)
		}
		sv := int64(-1) // Spark's table's version after the step
		for _, st := range sc {
			serr := res.StatementRows[k].Error
			k++
			if serr == "" {
				sv++
			}
			text := strings.ReplaceAll(st.sql, "{T}", "delta.`"+tables[n].ldir+"`")
			parsed, err := deltasql.Parse(text)
			if err != nil {
				t.Fatalf("%s: %v", text, err)
			}
			r, lerr := sess.Run(ctx, parsed[0])
			if lerr == nil {
				if err := r.WaitHooks(); err != nil {
					t.Fatalf("%s: hooks: %v", text, err)
				}
			}
			switch {
			case st.refuse && (lerr == nil || serr == ""):
				t.Fatalf("%s: want both to refuse it; lakelog: %v; Spark: %s", st.sql, lerr, orNone(serr))
			case st.refuse:
				if !strings.Contains(strings.ToLower(serr), "timestampntz") || !strings.Contains(lerr.Error(), "delta.feature.timestampNtz=supported") {
					t.Fatalf("%s: the refusals do not name the feature:\nlakelog: %v\nSpark: %s", st.sql, lerr, serr)
				}
				t.Logf("%s: both refuse it\nlakelog: %v\nspark:   %s", st.sql, lerr, serr)
			case lerr != nil || serr != "":
				t.Fatalf("%s: lakelog: %v; Spark: %s", st.sql, lerr, orNone(serr))
			}
			sprot := open(t, sstore, "", deltalog.AtVersion(sv)).Protocol()
			lprot := open(t, lstore, "").Protocol()
			if protocolText(sprot) != protocolText(lprot) {
				t.Errorf("after %s: lakelog's protocol %s, Spark's %s", st.sql, protocolText(lprot), protocolText(sprot))
			}
		}
	}
}

// protocolText renders a protocol as written, its feature lists sorted.
func protocolText(p *actions.Protocol) string {
	r, w := slices.Sorted(slices.Values(p.ReaderFeatures)), slices.Sorted(slices.Values(p.WriterFeatures))
	return fmt.Sprintf("(%d, %d) readerFeatures %v writerFeatures %v", p.MinReaderVersion, p.MinWriterVersion, r, w)
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
