package metamorphic

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/cdf"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/reader"
)

// tableRow is a row read from the table, with its row tracking columns
// when asked for.
type tableRow struct {
	row
	rowID, commitVersion int64
	changeType           string
}

// decodeRows reads rec's rows under cols (matched by name); with meta,
// also row tracking's or the change feed's columns.
func decodeRows(cols []*column, rec arrow.RecordBatch, meta bool) ([]tableRow, error) {
	sc := rec.Schema()
	idx := make([]int, len(cols))
	for i, c := range cols {
		idx[i] = -1
		for j, f := range sc.Fields() {
			if f.Name == c.name {
				idx[i] = j
			}
		}
		if idx[i] < 0 {
			return nil, fmt.Errorf("the rows have no column %q (columns %v)", c.name, fieldNames(sc))
		}
	}
	find := func(name string) arrow.Array {
		if is := sc.FieldIndices(name); len(is) > 0 {
			return rec.Column(is[0])
		}
		return nil
	}
	rid, rcv, ct, cv := find(reader.RowIDColumn), find(reader.RowCommitVersionColumn), find(actions.ChangeTypeColumn), find("_commit_version")
	out := make([]tableRow, rec.NumRows())
	for i := range int(rec.NumRows()) {
		tr := tableRow{row: row{vals: map[int]any{}}}
		for k, c := range cols {
			v, err := decode(c.typ, rec.Column(idx[k]), i)
			if err != nil {
				return nil, fmt.Errorf("column %s: %w", c.name, err)
			}
			tr.vals[c.uid] = v
		}
		if meta {
			if rid != nil {
				if rid.IsNull(i) || rcv.IsNull(i) {
					return nil, fmt.Errorf("row %d has a NULL row id or row commit version", i)
				}
				tr.rowID = rid.(*array.Int64).Value(i)
				tr.commitVersion = rcv.(*array.Int64).Value(i)
			}
			if ct != nil {
				tr.changeType = ct.(*array.String).Value(i)
				tr.commitVersion = cv.(*array.Int64).Value(i)
			}
		}
		out[i] = tr
	}
	return out, nil
}

func fieldNames(sc *arrow.Schema) []string {
	var out []string
	for _, f := range sc.Fields() {
		out = append(out, f.Name)
	}
	return out
}

// read reads the table at version v (latest when v < 0), under cols.
func (rn *runner) read(v int64, cols []*column, rowTracking bool) ([]tableRow, error) {
	var opts []deltalog.Option
	if v >= 0 {
		opts = append(opts, deltalog.AtVersion(v))
	}
	snap, err := deltalog.Open(rn.e.ctx, rn.e.store, Root, opts...)
	if err != nil {
		return nil, err
	}
	ropts := []reader.Option{reader.WithAllocator(rn.e.mem)}
	if rowTracking {
		ropts = append(ropts, reader.WithRowTracking())
	}
	sc, err := reader.NewScan(snap, ropts...)
	if err != nil {
		return nil, err
	}
	var out []tableRow
	for rec, err := range sc.Records(rn.e.ctx) {
		if err != nil {
			return nil, err
		}
		rows, err := decodeRows(cols, rec, rowTracking)
		rec.Release()
		if err != nil {
			return nil, err
		}
		out = append(out, rows...)
	}
	return out, nil
}

// check runs the checks of the latest version; prev is the state before
// the step's commit (nil when nothing was committed).
func (rn *runner) check(prev *state) {
	rn.checkMemory()
	cur := rn.cur
	got, err := rn.read(-1, cur.cols, false)
	if err != nil {
		rn.fail("read the latest version: %v", err)
	}
	rn.adoptIdentity(cur, got)
	rn.compare(fmt.Sprintf("version %d (latest)", cur.version), cur, got)
	for _, rw := range cur.rows {
		if name := cur.checkRow(rw); name != "" {
			rn.fail("row %s violates CHECK constraint %s", renderRow(cur.cols, rw), name)
		}
	}
	if cur.feat.rowTrack {
		rn.checkRowTracking(prev)
	}
	rn.checkHistory(rn.opts.EveryVersion)
	if cur.feat.cdf {
		rn.checkChangeFeed()
	}
	if cur.feat.uniform {
		rn.checkIceberg()
	}
}

// compare fails when the table's rows are not the model's.
func (rn *runner) compare(what string, s *state, got []tableRow) {
	var gotRows []row
	for _, g := range got {
		gotRows = append(gotRows, g.row)
	}
	g, w := renderRows(s.cols, gotRows), renderRows(s.cols, s.rows)
	if slices.Equal(g, w) {
		return
	}
	rn.fail("%s: the table's rows differ from the model's:\n%s", what, diff(g, w))
}

// diff shows the lines only one side has.
func diff(got, want []string) string {
	count := map[string]int{}
	for _, g := range got {
		count[g]++
	}
	for _, w := range want {
		count[w]--
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\t%d rows in the table, %d in the model\n", len(got), len(want))
	for _, k := range slices.Sorted(maps.Keys(count)) {
		for n := count[k]; n > 0; n-- {
			fmt.Fprintf(&b, "\ttable only: %s\n", k)
		}
		for n := count[k]; n < 0; n++ {
			fmt.Fprintf(&b, "\tmodel only: %s\n", k)
		}
	}
	return b.String()
}

// adoptIdentity takes the identity values the table generated for the
// model's pending ones, after checking them: each is start + n*step,
// beyond the column's high-water mark in the step's direction, and no
// two generated values of live rows are equal.
func (rn *runner) adoptIdentity(s *state, got []tableRow) {
	byKey := map[int64]tableRow{}
	for _, g := range got {
		if k, ok := g.vals[keyUID].(int64); ok {
			byKey[k] = g
		}
	}
	for _, c := range s.cols {
		if c.kind != identityCol {
			continue
		}
		hwm, has := s.hwm[c.uid]
		newMark, newHas := hwm, has
		for _, rw := range s.rows {
			if _, ok := rw.vals[c.uid].(pendingIdentity); !ok {
				continue
			}
			g, ok := byKey[rw.key()]
			if !ok {
				continue // compare reports the missing row
			}
			v, ok := g.vals[c.uid].(int64)
			switch {
			case !ok:
				rn.fail("identity column %s: row k=%d got %v, want a generated value", c.name, rw.key(), g.vals[c.uid])
			case (v-c.start)%c.step != 0:
				rn.fail("identity column %s: generated %d is not %d + n*%d", c.name, v, c.start, c.step)
			case has && (c.step > 0 && v <= hwm || c.step < 0 && v >= hwm):
				rn.fail("identity column %s: generated %d is not beyond the high-water mark %d (step %d)", c.name, v, hwm, c.step)
			case !has && (c.step > 0 && v < c.start || c.step < 0 && v > c.start):
				rn.fail("identity column %s: generated %d is before the start %d (step %d)", c.name, v, c.start, c.step)
			}
			rw.vals[c.uid] = v
			if !newHas || c.step > 0 && v > newMark || c.step < 0 && v < newMark {
				newMark, newHas = v, true
			}
		}
		if newHas {
			s.hwm[c.uid] = newMark
		}
		seen := map[int64]int64{}
		for _, rw := range s.rows {
			if !rw.generated[c.uid] {
				continue
			}
			v, _ := rw.vals[c.uid].(int64)
			if k, dup := seen[v]; dup {
				rn.fail("identity column %s: rows k=%d and k=%d both got the generated value %d", c.name, k, rw.key(), v)
			}
			seen[v] = rw.key()
		}
	}
}

// checkHistory reads earlier versions by time travel: each must have the
// model's rows, or (before a VACUUM or log cleanup) fail cleanly.
func (rn *runner) checkHistory(all bool) {
	cur := rn.cur
	var versions []int64
	for _, h := range rn.history[:len(rn.history)-1] {
		versions = append(versions, h.version)
	}
	if !all && len(versions) > 4 {
		pick := rn.g.r.Perm(len(versions))[:3]
		sample := []int64{versions[len(versions)-1]}
		for _, i := range pick {
			sample = append(sample, versions[i])
		}
		versions = sample
	}
	for _, v := range versions {
		h := rn.history[v]
		got, err := rn.read(v, h.cols, false)
		switch {
		case err != nil && (v < cur.restorable || cur.vacuumed && v < cur.vacuumedAt):
			continue // gone with the log or the files VACUUM removed
		case err != nil:
			rn.fail("time travel to version %d: %v", v, err)
		}
		rn.compare(fmt.Sprintf("time travel to version %d", v), h, got)
	}
}

// checkRowTracking: row IDs unique, and for rows the step did not insert
// or update, the same ID and commit version as before; rows it inserted
// or updated carry a commit version of the step.
func (rn *runner) checkRowTracking(prev *state) {
	cur := rn.cur
	got, err := rn.read(-1, cur.cols, true)
	if err != nil {
		rn.fail("read version %d with row tracking: %v", cur.version, err)
	}
	ids := map[int64]int64{}
	cur.rowIDs = map[int64][2]int64{}
	for _, g := range got {
		k := g.vals[keyUID].(int64)
		if other, dup := ids[g.rowID]; dup {
			rn.fail("row tracking: rows k=%d and k=%d have the same row id %d", other, k, g.rowID)
		}
		ids[g.rowID] = k
		if was, dup := cur.rowIDs[k]; dup {
			// The rows are compared with the model's by key, so the
			// generator keeps keys unique; two rows of one key would
			// make the IDs compared depend on the order files are read.
			rn.fail("row tracking: two rows have the key k=%d (row ids %d and %d): the generator must keep keys unique", k, was[0], g.rowID)
		}
		cur.rowIDs[k] = [2]int64{g.rowID, g.commitVersion}
	}
	if prev == nil || prev.rowIDs == nil || !prev.feat.rowTrack || strings.HasPrefix(cur.op, "restore") || cur.op == "enable row tracking" {
		return
	}
	var touched map[int64]bool
	first := prev.version + 1
	for v := first; v <= cur.version; v++ {
		if t := rn.history[v].touched; len(t) > 0 {
			touched = t
		}
	}
	for k, now := range cur.rowIDs {
		was, ok := prev.rowIDs[k]
		switch {
		case touched[k]:
			if now[1] < first {
				rn.fail("row tracking: row k=%d was written at version %d but its row commit version is %d", k, first, now[1])
			}
			if ok && now[0] != was[0] {
				rn.fail("row tracking: row k=%d was updated at version %d and its row id changed from %d to %d", k, first, was[0], now[0])
			}
		case !ok:
			rn.fail("row tracking: row k=%d is new at version %d but the model has no write of it", k, cur.version)
		case now != was:
			rn.fail("row tracking: row k=%d was not changed by version %d but its row id / commit version went from %v to %v", k, first, was, now)
		}
	}
}

// checkChangeFeed reads the change feed of a random range ending at the
// latest version and compares it with the model: per version, exactly
// the model's changes where it knows them, else the net difference;
// ranges the feed cannot read fail with the error the model expects.
func (rn *runner) checkChangeFeed() {
	cur := rn.cur
	low := max(cur.restorable, 1)
	if cur.version < low {
		return
	}
	r := rn.g.r
	from := low + r.Int64N(cur.version-low+1)
	to := from + r.Int64N(cur.version-from+1)
	end := rn.history[to]
	wantErr, why := error(nil), ""
	for v := from; v <= to; v++ {
		h := rn.history[v]
		if !h.feat.cdf {
			wantErr, why = cdf.ErrNotRecorded, fmt.Sprintf("version %d does not record the change feed", v)
			break
		}
		if msg := readableAs(h, end); msg != "" {
			wantErr, why = cdf.ErrSchemaChange, fmt.Sprintf("version %d %s", v, msg)
			break
		}
	}
	// The rows a version removes were written under the version before
	// it: a RESTORE at the start of the range that narrows a widened
	// column removes files the end schema cannot read, and the feed fails
	// with ErrSchemaChange (or reads, when the RESTORE removed no file).
	// When log cleanup took the version before, the feed cannot know its
	// schema and reads the files as they are: any error is accepted then.
	schemaErrOK, anyErr := false, false
	if wantErr == nil && from > 0 && readableAs(rn.history[from-1], end) != "" && strings.HasPrefix(rn.history[from].op, "restore") {
		if from-1 >= cur.restorable {
			schemaErrOK = true
		} else {
			anyErr = true
		}
	}
	ctx := context.Background()
	var rows []tableRow
	feed, err := cdf.Open(ctx, rn.e.store, Root, cdf.Versions(from, to), cdf.WithAllocator(rn.e.mem))
	if err == nil {
		for rec, e := range feed.Records(ctx) {
			if e != nil {
				err = e
				break
			}
			got, e := decodeRows(end.cols, rec, true)
			rec.Release()
			if e != nil {
				err = e
				break
			}
			rows = append(rows, got...)
		}
	}
	what := fmt.Sprintf("change feed of versions %d to %d", from, to)
	switch {
	case err != nil && cur.vacuumed && from < cur.vacuumedAt && (errors.Is(err, cdf.ErrFileMissing) || errors.Is(err, reader.ErrFileMissing)):
		return // VACUUM removed files the range reads
	case anyErr && err != nil, schemaErrOK && errors.Is(err, cdf.ErrSchemaChange):
		return
	case wantErr != nil && err == nil:
		rn.fail("%s: read %d rows; want %v (%s)", what, len(rows), wantErr, why)
	case wantErr != nil && !errors.Is(err, wantErr) && !(errors.Is(err, cdf.ErrNotRecorded) || errors.Is(err, cdf.ErrSchemaChange)):
		rn.fail("%s: %v; want %v (%s)", what, err, wantErr, why)
	case wantErr != nil:
		return
	case err != nil:
		rn.fail("%s: %v", what, err)
	}
	byVersion := map[int64][]tableRow{}
	for _, g := range rows {
		if g.commitVersion < from || g.commitVersion > to {
			rn.fail("%s: a row of version %d", what, g.commitVersion)
		}
		byVersion[g.commitVersion] = append(byVersion[g.commitVersion], g)
	}
	for v := from; v <= to; v++ {
		h := rn.history[v]
		got := map[string][]string{}
		for _, g := range byVersion[v] {
			got[g.changeType] = append(got[g.changeType], renderRow(end.cols, g.row))
		}
		if h.changes == nil || (v > 0 && rn.history[v-1].restorable > v) {
			// Net effect only: inserts and postimages minus deletes and
			// preimages, over the columns both versions have. The feed
			// records changes to data files, so a commit that changes
			// only the schema (a RESTORE across a dropped column, which
			// brings back the values the files kept) records none, as
			// in Spark.
			prev := rn.history[v-1]
			shared := sharedColumns(prev, h, end)
			got := map[string][]string{}
			for _, g := range byVersion[v] {
				got[g.changeType] = append(got[g.changeType], renderRow(shared, g.row))
			}
			net := func(add, sub []string) []string {
				return multisetMinus(add, sub)
			}
			gotNet := net(append(got[actions.ChangeInsert], got["update_postimage"]...), append(got[actions.ChangeDelete], got["update_preimage"]...))
			prevRows := underColumns(prev, end, shared, prev.rows)
			wantNet := net(underColumns(h, end, shared, h.rows), prevRows)
			gotNeg := net(append(got[actions.ChangeDelete], got["update_preimage"]...), append(got[actions.ChangeInsert], got["update_postimage"]...))
			wantNeg := net(prevRows, underColumns(h, end, shared, h.rows))
			if !slices.Equal(gotNet, wantNet) || !slices.Equal(gotNeg, wantNeg) {
				rn.fail("%s: version %d (%s): net change differs:\nadded:\n%s\nremoved:\n%s", what, v, h.op, diff(gotNet, wantNet), diff(gotNeg, wantNeg))
			}
			continue
		}
		prev := rn.history[v-1]
		for _, kind := range []struct {
			name string
			at   *state
			rows []row
		}{{actions.ChangeInsert, h, h.changes.inserts}, {actions.ChangeDelete, prev, h.changes.deletes}, {"update_preimage", prev, h.changes.pre}, {"update_postimage", h, h.changes.post}} {
			g := got[kind.name]
			slices.Sort(g)
			w := underAll(kind.at, end, kind.rows)
			if !slices.Equal(g, w) {
				rn.fail("%s: version %d (%s): %s rows differ:\n%s", what, v, h.op, kind.name, diff(g, w))
			}
		}
	}
}

// multisetMinus is a - b as multisets, sorted.
func multisetMinus(a, b []string) []string {
	count := map[string]int{}
	for _, x := range a {
		count[x]++
	}
	for _, x := range b {
		count[x]--
	}
	var out []string
	for k, n := range count {
		for ; n > 0; n-- {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// sameColumn reports whether column a of version h is column b of
// version end: by name where neither maps columns, else by physical name
// (and the model's column, which id mode's ids follow).
func sameColumn(h, end *state, a, b *column) bool {
	if h.feat.mapping == "none" && end.feat.mapping == "none" {
		return strings.EqualFold(a.name, b.name)
	}
	return a.phys == b.phys && (a.uid == b.uid || h.feat.mapping != "id" || end.feat.mapping != "id")
}

// under renders a row of version h under end's columns (a column end
// has that h lacks is NULL).
func under(h, end *state, r row) string {
	return underColumn(h, end, end.cols, r)
}

// underColumn renders r, a row of version h, with cols, columns of end.
func underColumn(h, end *state, cols []*column, r row) string {
	out := row{vals: map[int]any{}}
	for _, c := range cols {
		for _, hc := range h.cols {
			if sameColumn(h, end, hc, c) {
				out.vals[c.uid] = r.vals[hc.uid]
			}
		}
	}
	return renderRow(cols, out)
}

// underColumns is underColumn of each row, sorted.
func underColumns(h, end *state, cols []*column, rows []row) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = underColumn(h, end, cols, r)
	}
	slices.Sort(out)
	return out
}

// sharedColumns are end's columns that versions a and b have too.
func sharedColumns(a, b, end *state) []*column {
	var out []*column
	for _, c := range end.cols {
		in := func(h *state) bool {
			return slices.ContainsFunc(h.cols, func(hc *column) bool { return sameColumn(h, end, hc, c) })
		}
		if in(a) && in(b) {
			out = append(out, c)
		}
	}
	return out
}

func underAll(h, end *state, rows []row) []string {
	return underColumns(h, end, end.cols, rows)
}

// readableAs is why the rows of version h cannot be read under end's
// schema ("" when they can): a column end lacks or has under another
// name (dropped, renamed, dropped and added again), a type end narrows,
// or other partition columns.
func readableAs(h, end *state) string {
	for _, c := range h.cols {
		var e *column
		for _, ec := range end.cols {
			if sameColumn(h, end, c, ec) {
				e = ec
			}
		}
		switch {
		case e == nil && end.col(c.name) != nil:
			return fmt.Sprintf("has column %s, which the end version dropped and added again", c.name)
		case e == nil:
			return fmt.Sprintf("has column %s, which the end version dropped or renamed", c.name)
		case e.name != c.name:
			return fmt.Sprintf("has column %s, renamed to %s in the end version", c.name, e.name)
		case !widensTo(c.typ, e.typ):
			return fmt.Sprintf("has column %s of type %s, %s in the end version", c.name, c.typ, e.typ)
		}
	}
	var hp, ep []string
	for _, p := range h.parts {
		hp = append(hp, strings.ToLower(h.colByUID(p).name))
	}
	for _, p := range end.parts {
		ep = append(ep, strings.ToLower(end.colByUID(p).name))
	}
	if !slices.Equal(hp, ep) {
		return "has other partition columns"
	}
	return ""
}

func widensTo(a, b actions.DataType) bool {
	for t := a; t != nil; t = widenTo(t) {
		if t.String() == b.String() {
			return true
		}
	}
	return false
}

// checkIceberg reads the table's newest Iceberg metadata with iceberg-go
// and compares its rows with the model's.
func (rn *runner) checkIceberg() {
	cur := rn.cur
	var last string
	prefix := Root + "/metadata/v"
	for o, err := range rn.e.store.List(rn.e.ctx, prefix, "") {
		if err != nil {
			rn.fail("list the Iceberg metadata: %v", err)
		}
		if strings.HasSuffix(o.Key, ".metadata.json") && (len(o.Key) > len(last) || len(o.Key) == len(last) && o.Key > last) {
			last = o.Key
		}
	}
	if last == "" {
		rn.fail("UniForm table without Iceberg metadata at version %d", cur.version)
	}
	ctx := rn.e.ctx
	fs := func(context.Context) (icebergio.IO, error) { return icebergio.LocalFS{}, nil }
	loc := "file://" + objstore.Location(rn.e.store) + "/" + last
	tbl, err := table.NewFromLocation(ctx, []string{"t"}, loc, fs, nil)
	if err != nil {
		rn.fail("iceberg-go opens %s: %v", loc, err)
	}
	if p := tbl.Metadata().Properties()["delta-version"]; p != fmt.Sprint(cur.version) {
		rn.fail("the newest Iceberg metadata %s is of Delta version %s, want %d", last, p, cur.version)
	}
	at, err := tbl.Scan().ToArrowTable(ctx)
	if err != nil {
		rn.fail("iceberg-go scans %s: %v", loc, err)
	}
	defer at.Release()
	tr := array.NewTableReader(at, 1024)
	defer tr.Release()
	var got []tableRow
	for tr.Next() {
		rows, err := decodeRows(cur.cols, tr.RecordBatch(), false)
		if err != nil {
			rn.fail("iceberg-go's rows: %v", err)
		}
		got = append(got, rows...)
	}
	rn.compare(fmt.Sprintf("iceberg-go at Delta version %d", cur.version), cur, got)
}
