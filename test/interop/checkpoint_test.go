package interop

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/dml"
	"github.com/lakelog/lakelog/expr"
	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/writer"
)

// historyDDL is the schema of the tables with a history: a partition
// column, statistics of every kind of leaf, and nested columns.
const historyDDL = `id long not null, p int, s string, amount decimal(12,2), ts timestamp, d date,
	st struct<a:int, b:string>, tags array<string>, m map<string,long>`

// history is a lakelog table built by a sequence of commits, with the rows
// each version holds.
type history struct {
	store objstore.Store
	dir   string
	// rows[v] are the sorted canonical lines of version v, as lakelog
	// read them right after the commit.
	rows [][]string
}

// step is one commit of a history.
type step struct {
	op    string // "append", "overwrite", "replaceWhere"
	rows  int
	pool  []any  // partition values of the new rows (default: all of partitionInts)
	where string // replaceWhere's predicate, in lakelog's syntax
}

// buildHistory creates a table partitioned by p and applies steps after
// the first (which is the create), recording every version's rows.
func buildHistory(t *testing.T, seed uint64, props map[string]string, steps []step) *history {
	t.Helper()
	ctx := context.Background()
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	schema, sc := tableSchema(t, historyDDL)
	g := newGen(seed)
	store, dir := newLocal(t)
	h := &history{store: store, dir: dir}
	batch := func(s step) arrow.RecordBatch {
		g.pools = map[string][]any{"p": partitionInts[:3:3]}
		if s.pool != nil {
			g.pools["p"] = s.pool
		}
		return g.batch(mem, sc, s.rows)
	}
	for v, s := range steps {
		var recs []arrow.RecordBatch
		if s.rows > 0 {
			rec := batch(s)
			defer rec.Release()
			recs = append(recs, rec)
		}
		if v == 0 {
			createTable(t, store, "", schema, []string{"p"}, props, recs...)
		} else {
			snap := open(t, store, "")
			var err error
			switch s.op {
			case "append":
				_, err = writer.Append(ctx, snap, seq(recs...), writer.WithCommitOptions(noHooks), writer.WithAllocator(mem))
			case "overwrite":
				_, err = writer.Overwrite(ctx, snap, seq(recs...), writer.WithCommitOptions(noHooks), writer.WithAllocator(mem))
			case "replaceWhere":
				var pred expr.Expr
				if pred, err = expr.Parse(s.where); err == nil {
					_, err = dml.ReplaceWhere(ctx, snap, pred, seq(recs...), dml.WithCommitOptions(noHooks), dml.WithWriterOptions(writer.WithAllocator(mem)))
				}
			default:
				t.Fatalf("unknown step %q", s.op)
			}
			if err != nil {
				t.Fatalf("lakelog %s at version %d: %v", s.op, v, err)
			}
		}
		h.rows = append(h.rows, openLines(t, store, ""))
	}
	return h
}

// checkpoint writes a checkpoint of the latest version with lakelog.
func (h *history) checkpoint(t *testing.T) int64 {
	t.Helper()
	snap := open(t, h.store, "")
	if _, err := snap.Checkpoint(context.Background(), time.Now()); err != nil {
		t.Fatalf("lakelog checkpoint of version %d: %v", snap.Version(), err)
	}
	return snap.Version()
}

// deleteCommitsBefore removes the commit files of versions below v, so
// that a reader can only load the table through the checkpoint at v.
func (h *history) deleteCommitsBefore(t *testing.T, v int64) {
	t.Helper()
	for u := range v {
		if err := os.Remove(filepath.Join(h.dir, "_delta_log", deltalog.CommitName(u))); err != nil {
			t.Fatal(err)
		}
	}
}

// historySteps: appends over three partitions and the null one, a
// partition replaced (its files removed), a DELETE-like replaceWhere on a
// data column (files rewritten without the matching rows), more appends.
var historySteps = []step{
	{op: "create", rows: 20},
	{op: "append", rows: 15}, {op: "append", rows: 15}, {op: "append", rows: 15},
	{op: "append", rows: 15, pool: []any{nil}},
	{op: "append", rows: 15}, {op: "append", rows: 15},
	{op: "replaceWhere", rows: 10, pool: []any{int32(1)}, where: "p = 1"},
	{op: "append", rows: 15}, {op: "append", rows: 15},
	{op: "replaceWhere", where: "amount IS NULL OR amount < 0"},
	{op: "append", rows: 15},
	{op: "replaceWhere", rows: 5, pool: []any{int32(0), nil}, where: "p = 0 OR p IS NULL"},
	{op: "append", rows: 15},
}

// TestPeersReadLakelogCheckpoints builds a history with lakelog, writes a
// checkpoint, adds two commits, deletes every commit before the
// checkpoint, and checks that lakelog, delta-rs and Spark all read the
// latest rows (and the same rows under a filter, which prunes with the
// checkpoint's statistics). The second table writes the statistics as
// structs only (stats_parsed, partitionValues_parsed), not as JSON.
func TestPeersReadLakelogCheckpoints(t *testing.T) {
	rs := requirePeer(t, deltaRS)
	sp := requirePeer(t, spark)
	variants := []struct {
		name  string
		props map[string]string
	}{
		{"stats-as-json", nil},
		{"stats-as-struct", map[string]string{
			"delta.checkpoint.writeStatsAsStruct": "true",
			"delta.checkpoint.writeStatsAsJson":   "false",
		}},
	}
	const where = "id > 100 AND ts >= '1990-01-01'"
	for i, vt := range variants {
		t.Run(vt.name, func(t *testing.T) {
			h := buildHistory(t, uint64(300+i), vt.props, historySteps)
			cp := h.checkpoint(t)
			// Two commits after the checkpoint, which readers replay on it.
			rows := buildMore(t, h, []step{{op: "append", rows: 10}, {op: "append", rows: 10}})
			latest := int64(len(rows) - 1)
			want := rows[latest]
			wantFiltered := filtered(t, open(t, h.store, ""), where)
			if len(wantFiltered) == 0 || len(wantFiltered) == len(want) {
				t.Fatalf("the filter %q keeps %d of %d rows: it tests nothing", where, len(wantFiltered), len(want))
			}
			h.deleteCommitsBefore(t, cp)

			snap := open(t, h.store, "")
			if snap.Version() != latest {
				t.Fatalf("lakelog opened version %d after the commits before the checkpoint went, want %d", snap.Version(), latest)
			}
			sameRows(t, "lakelog through its checkpoint", lakelogLines(t, snap), want)
			sameRows(t, "lakelog through its checkpoint, filtered", filtered(t, snap, where), wantFiltered)

			for _, rd := range []string{"pyarrow", "datafusion"} {
				got, resp := peerRead(t, rs, request{Path: h.dir, Reader: rd})
				sameRows(t, "delta-rs "+rd, got, want)
				if resp.Version != latest {
					t.Errorf("delta-rs %s read version %d, want %d", rd, resp.Version, latest)
				}
			}
			got, _ := peerRead(t, rs, request{Path: h.dir, Reader: "datafusion", Where: where})
			sameRows(t, "delta-rs datafusion, filtered", got, wantFiltered)

			got, resp := peerRead(t, sp, request{Path: h.dir})
			sameRows(t, "spark", got, want)
			if resp.Version != latest {
				t.Errorf("spark read version %d, want %d", resp.Version, latest)
			}
			got, _ = peerRead(t, sp, request{Path: h.dir, Where: where})
			sameRows(t, "spark, filtered", got, wantFiltered)
			// Spark also time travels to the checkpoint's version.
			got, _ = peerRead(t, sp, request{Path: h.dir, Version: &cp})
			sameRows(t, fmt.Sprintf("spark at the checkpoint's version %d", cp), got, h.rows[cp])
		})
	}
}

// TestSparkTimeTravelsLakelogTable checks that Spark and delta-rs read
// every version of a partitioned lakelog table, before and after a
// checkpoint in its middle, as lakelog does.
func TestSparkTimeTravelsLakelogTable(t *testing.T) {
	rs := requirePeer(t, deltaRS)
	sp := requirePeer(t, spark)
	steps := []step{
		{op: "create", rows: 20},
		{op: "append", rows: 10},
		{op: "replaceWhere", rows: 5, pool: []any{int32(1)}, where: "p = 1"},
		{op: "append", rows: 10, pool: []any{nil}},
	}
	h := buildHistory(t, 500, nil, steps)
	h.checkpoint(t)
	more := buildMore(t, h, []step{
		{op: "overwrite", rows: 12},
		{op: "append", rows: 8},
	})
	for v := range int64(len(more)) {
		got, _ := peerRead(t, sp, request{Path: h.dir, Version: &v})
		sameRows(t, fmt.Sprintf("spark at version %d", v), got, more[v])
		got, _ = peerRead(t, rs, request{Path: h.dir, Version: &v, Reader: "datafusion"})
		sameRows(t, fmt.Sprintf("delta-rs at version %d", v), got, more[v])
		sameRows(t, fmt.Sprintf("lakelog at version %d", v), openLines(t, h.store, "", deltalog.AtVersion(v)), more[v])
	}
}

// buildMore applies more steps to a history's table and returns the rows
// of every version, old and new.
func buildMore(t *testing.T, h *history, steps []step) [][]string {
	t.Helper()
	ctx := context.Background()
	_, sc := tableSchema(t, historyDDL)
	g := newGen(uint64(len(h.rows)) * 7919)
	g.nextID = 1_000_000
	rows := append([][]string(nil), h.rows...)
	for _, s := range steps {
		g.pools = map[string][]any{"p": partitionInts[:3:3]}
		rec := g.batch(memory.DefaultAllocator, sc, s.rows)
		snap := open(t, h.store, "")
		var err error
		switch s.op {
		case "append":
			_, err = writer.Append(ctx, snap, seq(rec), writer.WithCommitOptions(noHooks))
		case "overwrite":
			_, err = writer.Overwrite(ctx, snap, seq(rec), writer.WithCommitOptions(noHooks))
		default:
			t.Fatalf("buildMore: unsupported step %q", s.op)
		}
		rec.Release()
		if err != nil {
			t.Fatal(err)
		}
		rows = append(rows, openLines(t, h.store, ""))
	}
	return rows
}
