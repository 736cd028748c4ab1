package cdc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/cdf"
	"github.com/lakelog/lakelog/conflict"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/dml"
	"github.com/lakelog/lakelog/expr"
	"github.com/lakelog/lakelog/objstore"
)

// Silver keeps a Delta table equal to the source table: it follows
// bronze's change feed and MERGEs the latest state of each key.
//
// Each silver commit records, in domain metadata "lakelog.cdc.silver.APP",
// how far into bronze it is: every event of the versions before Version
// and the first Skip events of Version. A crash before a commit redoes
// its events, one after it resumes after them; re-applying events to a
// table that already holds them gives the same table (each event is a
// whole row image, or a delete), so every commit is exactly-once.
//
// Source transactions: with bronze's END rows (Debezium's transaction
// metadata), silver applies whole transactions only: a transaction is
// complete when bronze holds as many of its events as its END counts, or
// an event of a later transaction (they stream in commit order); until
// then it and what follows wait. Without transaction metadata each
// bronze version is applied as it comes.
//
// TOAST: a column whose value Debezium did not have (bronze's
// __unavailable) keeps silver's value: per row and column, the MERGE's
// update leaves it out. Where silver has no row to keep it from (the
// row's first event in silver), it is NULL and the stage warns that the
// source table needs REPLICA IDENTITY FULL.
//
// Schema: before the events of a new row shape, silver's schema follows
// the source's, each change its own commit: columns added (existing rows
// get the column's default, as Postgres gives them), widened (type
// widening, enabled on demand), dropped and renamed (column mapping,
// enabled on demand; a rename is recognised when the new column sits
// where the old one was), NOT NULL dropped. A change Delta cannot carry
// (a type that does not widen, an ambiguous drop and add) stops the stage
// with a *SchemaChangeError saying how to go on (ResumeFromVersion).
// TRUNCATE empties silver in one commit (with the rows of its
// transaction). Silver can be rebuilt from bronze's version 0.
type Silver struct {
	Bronze, Silver objstore.Store
	// Keys are the source table's key columns; by default the primary
	// key the events carry.
	Keys []string
	App  string
	Poll time.Duration
	// ResumeFromVersion, when positive, accepts the schema change that
	// stopped the stage at that bronze version: the column is dropped and
	// added back (rows read NULL until the source re-sends them), or an
	// ambiguous drop and add is taken as such.
	ResumeFromVersion int64
	// MaxFilesPerBatch bounds one MERGE's bronze files (default 400).
	MaxFilesPerBatch int
	// Properties are table properties silver is created with, and that
	// Run sets on an existing table that lacks them (auto compaction:
	// Config.SilverProperties). A new silver table has deletion vectors
	// (delta.enableDeletionVectors=true) unless Properties says false:
	// MERGEs then mark updated and deleted rows instead of rewriting the
	// files that hold them. An existing table gets them only when
	// Properties says true.
	Properties map[string]string
	Log        *slog.Logger

	pos     silverPosition
	pending []*change
	ends    map[int64]int64 // txid -> events of the table (END rows)
}

// SchemaChangeError is a source schema change silver cannot carry.
type SchemaChangeError struct {
	Column        string
	Change        string // what happened
	BronzeVersion int64
}

func (e *SchemaChangeError) Error() string {
	return fmt.Sprintf("cdc: silver: column %q: %s (bronze version %d). Silver stops here; to go on, run silver with --resume-from-version %d, which drops the column and adds it back as the source has it now (existing rows read NULL until the source re-sends them: trigger a Debezium incremental snapshot of the table for that)",
		e.Column, e.Change, e.BronzeVersion, e.BronzeVersion)
}

func (e *SchemaChangeError) Unwrap() error { return ErrIncompatibleChange }

// silverPosition is how far into bronze silver is.
type silverPosition struct {
	Version int64 `json:"version"`
	Skip    int64 `json:"skip"`
}

func (s *Silver) domain() string { return "lakelog.cdc.silver." + s.App }

// change is one bronze row.
type change struct {
	version     int64
	index       int64 // within its version
	op          string
	txID        int64
	inTx        bool  // has transaction metadata
	count       int64 // END: events of the table
	shapeText   string
	shape       *RowShape
	values      []any // by shape.Columns
	unavailable []bool
	partition   int32
	offset      int64
}

func (s *Silver) defaults() {
	if s.App == "" {
		s.App = "silver"
	}
	if s.Poll <= 0 {
		s.Poll = 200 * time.Millisecond
	}
	if s.MaxFilesPerBatch <= 0 {
		s.MaxFilesPerBatch = 400
	}
	if s.Log == nil {
		s.Log = slog.New(slog.DiscardHandler)
	}
	if s.ends == nil {
		s.ends = map[int64]int64{}
	}
}

// Run follows bronze until ctx ends (nil) or an error stops it.
func (s *Silver) Run(ctx context.Context) error {
	s.defaults()
	for {
		_, err := deltalog.Open(ctx, s.Bronze, "")
		if err == nil {
			break
		}
		if !errors.Is(err, deltalog.ErrNotTable) {
			return err
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(s.Poll):
		}
	}
	if err := s.load(ctx); err != nil {
		return err
	}
	if err := s.ensureProperties(ctx); err != nil {
		return err
	}
	s.Log.Info("following bronze", "from_version", s.pos.Version, "skip", s.pos.Skip)
	onlyInserts := &expr.Compare{Op: expr.Eq, Left: expr.Col(actions.ChangeTypeColumn), Right: expr.Lit(actions.ChangeInsert)}
	for b, err := range cdf.Follow(ctx, s.Bronze, "", cdf.StartingVersion(s.pos.Version), cdf.WithPollInterval(s.Poll),
		cdf.WithMaxPollInterval(8*s.Poll), cdf.WithFilter(onlyInserts), cdf.WithMaxFilesPerBatch(s.MaxFilesPerBatch)) {
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			return err
		}
		if err := s.apply(ctx, b.Records(ctx)); err != nil {
			return fmt.Errorf("cdc: silver: bronze versions %d to %d: %w", b.First, b.Last, err)
		}
	}
	return nil
}

// ensureProperties sets Properties on an existing silver table that
// lacks them.
func (s *Silver) ensureProperties(ctx context.Context) error {
	snap, err := deltalog.Open(ctx, s.Silver, "")
	if errors.Is(err, deltalog.ErrNotTable) {
		return nil
	}
	if err != nil {
		return err
	}
	if s.Properties[actions.PropEnableDeletionVectors] == "true" && !snap.Config().Supports(actions.FeatureDeletionVectors) {
		s.Log.Warn("enabling deletion vectors on silver: its protocol is raised to the deletionVectors feature, which every reader of the table must support")
	}
	return ensureProperties(ctx, snap, s.Properties, s.Log)
}

// CatchUp applies what bronze holds now and returns: the stage's work
// without following (tests, one-shot rebuilds).
func (s *Silver) CatchUp(ctx context.Context) error {
	s.defaults()
	if err := s.load(ctx); err != nil {
		return err
	}
	if err := s.ensureProperties(ctx); err != nil {
		return err
	}
	snap, err := deltalog.Open(ctx, s.Bronze, "")
	if err != nil {
		return err
	}
	if snap.Version() < s.pos.Version {
		return nil
	}
	onlyInserts := &expr.Compare{Op: expr.Eq, Left: expr.Col(actions.ChangeTypeColumn), Right: expr.Lit(actions.ChangeInsert)}
	feed, err := cdf.Open(ctx, s.Bronze, "", cdf.Versions(s.pos.Version, snap.Version()), cdf.WithFilter(onlyInserts))
	if err != nil {
		return err
	}
	return s.apply(ctx, feed.Records(ctx))
}

// load reads silver's position, and the END rows of the bronze versions
// just before it (an END can land before its transaction's events).
func (s *Silver) load(ctx context.Context) error {
	s.pending = nil
	clear(s.ends)
	var err error
	if s.pos, err = s.position(ctx); err != nil {
		return err
	}
	if s.pos.Version == 0 {
		return nil
	}
	const lookBack = 200
	onlyEnds := &expr.Compare{Op: expr.Eq, Left: expr.Col(ColOp), Right: expr.Lit(OpEnd)}
	feed, err := cdf.Open(ctx, s.Bronze, "", cdf.Versions(max(0, s.pos.Version-lookBack), s.pos.Version), cdf.WithFilter(onlyEnds),
		cdf.WithColumns(ColOp, ColTxID, ColTxEvents))
	if err != nil {
		return err
	}
	for rec, err := range feed.Records(ctx) {
		if err != nil {
			return err
		}
		for i := range int(rec.NumRows()) {
			id, _ := actions.ArrowValue(rec.Column(1), i)
			n, _ := actions.ArrowValue(rec.Column(2), i)
			if id, ok := id.(int64); ok {
				if n, ok := n.(int64); ok {
					s.ends[id] = n
				}
			}
		}
	}
	return nil
}

// position reads how far into bronze silver is, from silver's domain
// metadata (zero when silver does not exist yet).
func (s *Silver) position(ctx context.Context) (silverPosition, error) {
	var pos silverPosition
	snap, err := deltalog.Open(ctx, s.Silver, "")
	if errors.Is(err, deltalog.ErrNotTable) {
		return pos, nil
	}
	if err != nil {
		return pos, err
	}
	if d, ok := snap.Domain(s.domain()); ok && !d.Removed {
		if err := json.Unmarshal([]byte(d.Configuration), &pos); err != nil {
			return pos, fmt.Errorf("cdc: silver's domain %s: %w", s.domain(), err)
		}
	}
	return pos, nil
}

// apply reads bronze rows and applies what is complete.
func (s *Silver) apply(ctx context.Context, recs iter.Seq2[arrow.RecordBatch, error]) error {
	var changes []*change
	curVersion, idx := int64(-1), int64(0)
	for rec, err := range recs {
		if err != nil {
			return err
		}
		cs, err := readChanges(rec)
		if err != nil {
			return err
		}
		changes = append(changes, cs...)
	}
	// Within a version, in Kafka's order: deterministic, so that Skip
	// counts the same events after a restart.
	slices.SortStableFunc(changes, func(a, b *change) int {
		switch {
		case a.version != b.version:
			return compareInt(a.version, b.version)
		case a.op == OpEnd || b.op == OpEnd:
			return compareBool(a.op != OpEnd, b.op != OpEnd)
		case a.partition != b.partition:
			return compareInt(int64(a.partition), int64(b.partition))
		}
		return compareInt(a.offset, b.offset)
	})
	for _, c := range changes {
		if c.version != curVersion {
			curVersion, idx = c.version, 0
		}
		c.index = idx
		idx++
		if c.version == s.pos.Version && c.index < s.pos.Skip || c.version < s.pos.Version {
			continue // applied before
		}
		s.pending = append(s.pending, c)
	}
	n := s.complete()
	if n == 0 {
		return nil
	}
	ready := s.pending[:n]
	s.pending = slices.Clone(s.pending[n:])
	return s.applyChanges(ctx, ready)
}

func compareInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func compareBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case !a:
		return -1
	}
	return 1
}

// complete is how many pending changes can be applied: up to the first
// event of an incomplete source transaction.
func (s *Silver) complete() int {
	for _, c := range s.pending {
		if c.op == OpEnd {
			s.ends[c.txID] = c.count
		}
	}
	done := map[int64]bool{}
	for i, c := range s.pending {
		if c.op == OpEnd || !c.inTx || done[c.txID] {
			continue
		}
		have, later := int64(0), false
		for _, d := range s.pending[i:] {
			switch {
			case d.op == OpEnd:
			case d.inTx && d.txID == c.txID:
				have++
			case d.inTx || d.op != string(OpRead):
				later = true
			}
		}
		if need, ok := s.ends[c.txID]; ok && have >= need || later {
			done[c.txID] = true
			continue
		}
		return i
	}
	return len(s.pending)
}

// readChanges reads a feed batch's rows.
func readChanges(rec arrow.RecordBatch) ([]*change, error) {
	sc := rec.Schema()
	col := func(name string) arrow.Array {
		if idx := sc.FieldIndices(name); len(idx) == 1 {
			return rec.Column(idx[0])
		}
		return nil
	}
	opC, verC, schemaC, unavC := col(ColOp), col(cdf.CommitVersionColumn), col(ColSchema), col(ColUnavailable)
	txC, orderC, countC, partC, offC := col(ColTxID), col(ColTxOrder), col(ColTxEvents), col(ColPartition), col(ColOffset)
	if opC == nil || verC == nil || schemaC == nil {
		return nil, fmt.Errorf("cdc: silver: bronze lacks its own columns (%s, %s): not a bronze table", ColOp, ColSchema)
	}
	var out []*change
	for i := range int(rec.NumRows()) {
		c := &change{}
		c.op, _ = arrowValue(opC, i).(string)
		c.version, _ = arrowValue(verC, i).(int64)
		if txC != nil {
			c.txID, c.inTx = arrowValue(txC, i).(int64)
		}
		if orderC != nil && orderC.IsNull(i) {
			c.inTx = false
		}
		if partC != nil {
			c.partition, _ = arrowValue(partC, i).(int32)
		}
		if offC != nil {
			c.offset, _ = arrowValue(offC, i).(int64)
		}
		if c.op == OpEnd {
			c.count, _ = arrowValue(countC, i).(int64)
			c.inTx = true
			out = append(out, c)
			continue
		}
		text, _ := arrowValue(schemaC, i).(string)
		if text != "" {
			shape, err := ParseRowShape(text)
			if err != nil {
				return nil, err
			}
			c.shapeText, c.shape = text, shape
			c.values = make([]any, len(shape.Columns))
			for j := range shape.Columns {
				if a := col(shape.Columns[j].BronzeColumn()); a != nil {
					c.values[j] = arrowValue(a, i)
				}
			}
			if unavC != nil && unavC.IsValid(i) {
				var names []string
				if err := json.Unmarshal([]byte(arrowValue(unavC, i).(string)), &names); err != nil {
					return nil, fmt.Errorf("cdc: silver: bronze's %s: %w", ColUnavailable, err)
				}
				c.unavailable = make([]bool, len(shape.Columns))
				for _, n := range names {
					for j := range shape.Columns {
						if shape.Columns[j].Name == n {
							c.unavailable[j], c.values[j] = true, nil
						}
					}
				}
			}
		}
		out = append(out, c)
	}
	return out, nil
}

// applyChanges applies ready changes: in segments of one row shape, each
// preceded by the schema changes it needs.
func (s *Silver) applyChanges(ctx context.Context, ready []*change) error {
	start := 0
	shape := ""
	for i := 0; i <= len(ready); i++ {
		if i < len(ready) {
			c := ready[i]
			if c.op == OpEnd || c.shape == nil || shape == "" || c.shapeText == shape {
				if c.shape != nil && shape == "" {
					shape = c.shapeText
				}
				continue
			}
		}
		if err := s.applySegment(ctx, ready[start:i]); err != nil {
			return err
		}
		if i < len(ready) {
			start, shape = i, ready[i].shapeText
		}
	}
	return nil
}

// folded is a key's state after a segment's events.
type folded struct {
	op          string
	values      []any
	unavailable []bool
}

// applySegment applies changes of one row shape (and END and truncate
// rows) with one MERGE, or a DELETE for a lone truncate.
func (s *Silver) applySegment(ctx context.Context, seg []*change) error {
	if len(seg) == 0 {
		return nil
	}
	var shape *RowShape
	for _, c := range seg {
		if c.shape != nil {
			shape = c.shape
		}
	}
	last := seg[len(seg)-1]
	startPos := silverPosition{Version: seg[0].version, Skip: seg[0].index}
	endPos := silverPosition{Version: last.version, Skip: last.index + 1}
	truncated := false
	state := map[string]*folded{}
	var order []string
	keys := s.Keys
	if len(keys) == 0 && shape != nil {
		keys = shape.Key
	}
	if shape != nil && len(keys) == 0 {
		return errors.New("cdc: silver: the source table has no primary key, and no key columns were given: silver cannot tell its rows apart")
	}
	var keyIdx []int
	if shape != nil {
		for _, k := range keys {
			j := slices.IndexFunc(shape.Columns, func(c ShapeColumn) bool { return c.Name == k })
			if j < 0 {
				return fmt.Errorf("cdc: silver: the key column %q is not a column of the source table", k)
			}
			keyIdx = append(keyIdx, j)
		}
	}
	for _, c := range seg {
		switch {
		case c.op == OpEnd:
			continue
		case c.op == string(OpTruncate):
			clear(state)
			order, truncated = order[:0], true
			continue
		case c.shape == nil:
			continue
		}
		var kb strings.Builder
		for n, j := range keyIdx {
			if c.values[j] == nil {
				return fmt.Errorf("cdc: silver: bronze version %d: an event with a null key column %q (offset %d)", c.version, keys[n], c.offset)
			}
			fmt.Fprintf(&kb, "%v\x00", c.values[j])
		}
		k := kb.String()
		cur, seen := state[k]
		if !seen {
			order = append(order, k)
		}
		if c.op == string(OpDelete) {
			state[k] = &folded{op: c.op, values: c.values}
			continue
		}
		f := &folded{op: c.op, values: slices.Clone(c.values)}
		if c.unavailable != nil {
			f.unavailable = slices.Clone(c.unavailable)
			for j, u := range c.unavailable {
				if u && cur != nil && cur.op != string(OpDelete) && (cur.unavailable == nil || !cur.unavailable[j]) {
					f.values[j], f.unavailable[j] = cur.values[j], false
				}
			}
		}
		state[k] = f
	}
	for attempt := 1; ; attempt++ {
		snap, err := s.ensureSchema(ctx, shape, keys, startPos, seg[0].version)
		if err != nil {
			return err
		}
		if snap == nil {
			return nil // nothing to apply yet: no table and no rows
		}
		err = s.merge(ctx, snap, shape, keys, state, order, truncated, endPos)
		if errors.Is(err, conflict.ErrConflict) && attempt < 10 {
			s.Log.Info("commit lost a race; retrying", "err", err)
			continue
		}
		return err
	}
}

// positionOption records pos in a commit.
func (s *Silver) positionOption(pos silverPosition) deltalog.CommitOption {
	b, _ := json.Marshal(pos)
	return deltalog.WithDomainMetadata(s.domain(), string(b))
}

// merge MERGEs a segment's folded rows.
func (s *Silver) merge(ctx context.Context, snap *deltalog.Snapshot, shape *RowShape, keys []string, state map[string]*folded, order []string, truncated bool, pos silverPosition) error {
	wopts := dml.WithCommitOptions(s.positionOption(pos))
	if len(order) == 0 {
		if !truncated {
			return nil
		}
		res, err := dml.Delete(ctx, snap, nil, wopts)
		if err != nil {
			return err
		}
		s.Log.Info("truncated", "version", commitVersion(res.CommitResult), "rows_deleted", res.Metrics["numDeletedRows"])
		return nil
	}
	cols := snap.Schema().Fields
	src, sets, err := s.source(snap, shape, state, order)
	if err != nil {
		return err
	}
	defer src.Release()
	if err := s.warnMissingToast(ctx, snap, keys, src); err != nil {
		return err
	}
	isDelete := &expr.Compare{Op: expr.Eq, Left: expr.Col("source", ColOp), Right: expr.Lit(string(OpDelete))}
	notDelete := &expr.Compare{Op: expr.Ne, Left: expr.Col("source", ColOp), Right: expr.Lit(string(OpDelete))}
	assign := func(skip map[string]bool) []*expr.Assignment {
		var out []*expr.Assignment
		for _, c := range cols {
			if !skip[c.Name] {
				out = append(out, &expr.Assignment{Column: expr.Col(c.Name), Value: expr.Col("source", c.Name)})
			}
		}
		return out
	}
	clauses := []dml.Clause{dml.WhenMatchedDelete(isDelete)}
	for _, set := range sets {
		var names []string
		if err := json.Unmarshal([]byte(set), &names); err != nil {
			return err
		}
		skip := map[string]bool{}
		for _, n := range names {
			skip[n] = true
		}
		cond := &expr.Compare{Op: expr.Eq, Left: expr.Col("source", ColUnavailable), Right: expr.Lit(set)}
		clauses = append(clauses, dml.WhenMatchedUpdate(cond, assign(skip)...))
	}
	clauses = append(clauses, dml.WhenMatchedUpdate(nil, assign(nil)...), dml.WhenNotMatchedInsert(notDelete, assign(nil)...))
	if truncated {
		clauses = append(clauses, dml.WhenNotMatchedBySourceDelete(nil))
	}
	var on []expr.Expr
	for _, k := range keys {
		on = append(on, &expr.Compare{Op: expr.Eq, Left: expr.Col("target", k), Right: expr.Col("source", k)})
	}
	res, err := dml.Merge(ctx, snap, one(src), expr.And(on...), clauses, wopts)
	if err != nil {
		return err
	}
	if res.CommitResult == nil {
		return nil
	}
	m := res.Metrics
	s.Log.Info("merged", "version", res.Version, "keys", len(order), "inserted", m["numTargetRowsInserted"], "updated", m["numTargetRowsUpdated"],
		"deleted", m["numTargetRowsDeleted"], "rows_copied", m["numTargetRowsCopied"],
		"deletion_vectors", m["numTargetDeletionVectorsAdded"]+m["numTargetDeletionVectorsUpdated"], "truncate", truncated, "bronze_version", pos.Version)
	if err := res.WaitHooks(); err != nil {
		s.Log.Warn("post-commit work failed (the commit stands)", "err", err)
	}
	return nil
}

func commitVersion(r *deltalog.CommitResult) int64 {
	if r == nil {
		return -1
	}
	return r.Version
}

// source builds the MERGE's source: silver's columns, __op and
// __unavailable, one row per key. It returns the distinct non-empty
// __unavailable values.
func (s *Silver) source(snap *deltalog.Snapshot, shape *RowShape, state map[string]*folded, order []string) (arrow.RecordBatch, []string, error) {
	fields := slices.Clone(snap.Schema().Fields)
	for i, f := range fields {
		cp := *f
		cp.Nullable, cp.Metadata = true, nil
		fields[i] = &cp
	}
	fields = append(fields, &actions.StructField{Name: ColOp, Type: actions.TypeString, Nullable: true},
		&actions.StructField{Name: ColUnavailable, Type: actions.TypeString, Nullable: true})
	sc, err := actions.ToArrowSchema(&actions.StructType{Fields: fields}, false, "")
	if err != nil {
		return nil, nil, err
	}
	idx := map[string]int{}
	for j, c := range shape.Columns {
		idx[c.Name] = j
	}
	rb := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer rb.Release()
	sets := map[string]bool{}
	for _, k := range order {
		f := state[k]
		var unavailable []string
		for i, col := range fields[:len(fields)-2] {
			j, ok := idx[col.Name]
			var v any
			if ok {
				if f.unavailable != nil && f.unavailable[j] {
					unavailable = append(unavailable, col.Name)
				}
				v, err = fitValue(f.values[j], col.Type)
				if err != nil {
					return nil, nil, fmt.Errorf("cdc: silver: column %q: %w", col.Name, err)
				}
			}
			if err := AppendValue(rb.Field(i), v); err != nil {
				return nil, nil, fmt.Errorf("cdc: silver: column %q: %w", col.Name, err)
			}
		}
		rb.Field(len(fields) - 2).(*array.StringBuilder).Append(f.op)
		if len(unavailable) > 0 {
			u := unavailableText(unavailable)
			sets[u] = true
			rb.Field(len(fields) - 1).(*array.StringBuilder).Append(u)
		} else {
			rb.Field(len(fields) - 1).AppendNull()
		}
	}
	return rb.NewRecordBatch(), sortedKeys(sets), nil
}

// warnMissingToast warns about rows whose values Debezium did not send
// and that silver has no row to keep them from.
func (s *Silver) warnMissingToast(ctx context.Context, snap *deltalog.Snapshot, keys []string, src arrow.RecordBatch) error {
	unav := src.Column(int(src.NumCols()) - 1)
	if unav.NullN() == unav.Len() {
		return nil
	}
	var want []string
	keyCols := make([]arrow.Array, len(keys))
	for n, k := range keys {
		keyCols[n] = src.Column(src.Schema().FieldIndices(k)[0])
	}
	keyText := func(cols []arrow.Array, i int) string {
		var b strings.Builder
		for _, c := range cols {
			fmt.Fprintf(&b, "%v\x00", arrowValue(c, i))
		}
		return b.String()
	}
	for i := range unav.Len() {
		if unav.IsValid(i) {
			want = append(want, keyText(keyCols, i))
		}
	}
	have := map[string]bool{}
	rows, err := scanKeys(ctx, snap, keys)
	if err != nil {
		return err
	}
	for _, r := range rows {
		have[r] = true
	}
	missing := 0
	for _, k := range want {
		if !have[k] {
			missing++
		}
	}
	if missing > 0 {
		s.Log.Warn("rows whose large (TOASTed) values Debezium did not send and silver does not have: they read NULL in those columns. Set REPLICA IDENTITY FULL on the source table (ALTER TABLE ... REPLICA IDENTITY FULL) so that updates carry every value",
			"rows", missing)
	}
	return nil
}
