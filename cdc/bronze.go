package cdc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/conflict"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/maintenance"
	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/schema"
	"github.com/lakelog/lakelog/writer"
)

// Bronze appends a source table's Debezium events to a Delta table,
// each source change once.
//
// Exactly once per Kafka record: each commit records, per topic
// partition, the last offset it holds (txn APP/TOPIC/PARTITION), in the
// same commit; on every assignment a partition resumes after it. Exactly
// once per source change: each commit also records the highest source
// position landed per partition (txns APP/TOPIC/PARTITION/commit_lsn and
// .../lsn), and an event at or below it (Debezium re-sends the changes
// after its last flushed offset when Connect crashes) is dropped. Snapshot
// reads have no position: a snapshot Debezium re-runs lands again (silver
// is unchanged by it).
//
// With a TransactionTopic, a transaction's END lands as a row (__op END,
// __txid, __tx_events: its events of this table), so that silver can
// apply whole source transactions only.
//
// Schema: the table's columns are bronze's own (ColOp, ...), then the
// source's, each at the widest type its events had: a column whose type
// widens (smallint to integer, numeric(12,2) to numeric(14,3)) is widened
// (Delta type widening, enabled when first needed); one whose new type
// bronze's cannot hold gets a new column (name__2). Each row's __schema
// says which columns, types and key its event had.
type Bronze struct {
	Store            objstore.Store
	Brokers          []string
	Topic            string // the table's topic: <topic.prefix>.<schema>.<table>
	TransactionTopic string // <topic.prefix>.transaction, or "" without transaction metadata
	// Collection is the table as transaction events name it
	// ("schema.table"); by default the topic's last two parts.
	Collection string
	Group      string // the Kafka consumer group (it spreads partitions; offsets live in the table)
	InstanceID string // a static group member id ("" for none)
	App        string // the app id prefix of the table's offsets
	Decoder    *Decoder
	// A commit holds what came within MaxWait of its first record, up to
	// MaxRecords records or MaxBytes bytes of record values (defaults 1s,
	// 100,000 and 64 MiB).
	MaxWait    time.Duration
	MaxRecords int
	MaxBytes   int64
	// Properties are table properties bronze is created with, and that
	// Run sets on an existing table that lacks them (auto compaction:
	// Config.TableProperties).
	Properties map[string]string
	Log        *slog.Logger
}

func (b *Bronze) defaults() {
	if b.Collection == "" {
		parts := strings.Split(b.Topic, ".")
		if len(parts) >= 2 {
			b.Collection = strings.Join(parts[len(parts)-2:], ".")
		}
	}
	if b.App == "" {
		b.App = "bronze"
	}
	if b.Decoder == nil {
		b.Decoder = NewDecoder()
	}
	if b.MaxWait <= 0 {
		b.MaxWait = time.Second
	}
	if b.MaxRecords <= 0 {
		b.MaxRecords = 100_000
	}
	if b.MaxBytes <= 0 {
		b.MaxBytes = 64 << 20
	}
	if b.Log == nil {
		b.Log = slog.New(slog.DiscardHandler)
	}
}

func (b *Bronze) offsetApp(topic string, p int32) string {
	return b.App + "/" + topic + "/" + strconv.Itoa(int(p))
}

// Run consumes until ctx ends (nil) or an error stops it.
func (b *Bronze) Run(ctx context.Context) error {
	b.defaults()
	snap, err := openOrCreate(ctx, b.Store, bronzeColumns, b.Properties)
	if err != nil {
		return err
	}
	if err := ensureProperties(ctx, snap, b.Properties, b.Log); err != nil {
		return err
	}
	topics := []string{b.Topic}
	if b.TransactionTopic != "" {
		topics = append(topics, b.TransactionTopic)
	}
	opts := []kgo.Opt{
		kgo.SeedBrokers(b.Brokers...),
		kgo.ConsumerGroup(b.Group),
		kgo.ConsumeTopics(topics...),
		kgo.DisableAutoCommit(),
		// A rebalance waits until what was polled is landed.
		kgo.BlockRebalanceOnPoll(),
		kgo.AdjustFetchOffsetsFn(b.resumeOffsets),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchMaxWait(250 * time.Millisecond),
		kgo.SessionTimeout(10 * time.Second),
	}
	if b.InstanceID != "" {
		opts = append(opts, kgo.InstanceID(b.InstanceID))
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return fmt.Errorf("cdc: bronze: %w", err)
	}
	defer cl.Close()
	defer cl.AllowRebalance()
	for {
		recs, err := b.poll(ctx, cl)
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			return err
		}
		if len(recs) > 0 {
			if err := b.Land(ctx, recs); err != nil {
				return err
			}
		}
		cl.AllowRebalance()
	}
}

// poll gathers the records of one commit: what comes within MaxWait of
// the first, up to MaxRecords or MaxBytes.
func (b *Bronze) poll(ctx context.Context, cl *kgo.Client) ([]*kgo.Record, error) {
	var recs []*kgo.Record
	var size int64
	var first time.Time
	for {
		pctx, cancel := ctx, context.CancelFunc(func() {})
		if !first.IsZero() {
			pctx, cancel = context.WithDeadline(ctx, first.Add(b.MaxWait))
		}
		fs := cl.PollRecords(pctx, b.MaxRecords-len(recs))
		cancel()
		if ctx.Err() != nil {
			return nil, nil
		}
		fs.EachError(func(topic string, p int32, err error) {
			if !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled) {
				b.Log.Warn("fetch failed; retrying", "topic", topic, "partition", p, "err", err)
			}
		})
		for _, r := range fs.Records() {
			recs = append(recs, r)
			size += int64(len(r.Value) + len(r.Key))
		}
		if len(recs) > 0 && first.IsZero() {
			first = time.Now()
		}
		if len(recs) >= b.MaxRecords || size >= b.MaxBytes || !first.IsZero() && time.Since(first) >= b.MaxWait {
			return recs, nil
		}
	}
}

// resumeOffsets starts each assigned partition after the table's offset.
func (b *Bronze) resumeOffsets(ctx context.Context, assigned map[string]map[int32]kgo.Offset) (map[string]map[int32]kgo.Offset, error) {
	snap, err := deltalog.Open(ctx, b.Store, "")
	if err != nil {
		return nil, err
	}
	for topic, parts := range assigned {
		for p := range parts {
			parts[p] = kgo.NewOffset().AtStart()
			at := int64(-1)
			if v, ok := snap.TxnVersion(b.offsetApp(topic, p)); ok {
				parts[p] = kgo.NewOffset().At(v + 1).WithEpoch(-1)
				at = v + 1
			}
			b.Log.Info("partition assigned", "topic", topic, "partition", p, "resume_offset", at)
		}
	}
	return assigned, nil
}

// bronzeRow is one row to land.
type bronzeRow struct {
	rec   *kgo.Record
	event *Event // nil for an END
	txID  int64
	count int64 // END: events of this table
	tsMs  int64
}

// Land appends recs (records of the table's topics, in order per
// partition) with their offsets and positions in one commit. Records the
// table already holds (by offset) and re-sent changes (by position) are
// dropped. A commit that loses a race for a partition is redone on the
// new version.
func (b *Bronze) Land(ctx context.Context, recs []*kgo.Record) error {
	b.defaults()
	for attempt := 1; ; attempt++ {
		snap, err := openOrCreate(ctx, b.Store, bronzeColumns, b.Properties)
		if err != nil {
			return err
		}
		rows, offsets, positions, noCommit, dups, err := b.select_(snap, recs)
		if err != nil {
			return err
		}
		if len(offsets) == 0 {
			return nil
		}
		plan, err := b.planSchema(snap, rows)
		if err != nil {
			return err
		}
		if snap, err = b.widen(ctx, snap, plan); err != nil {
			if errors.Is(err, conflict.ErrConflict) && attempt < 20 {
				continue
			}
			return err
		}
		res, err := b.commit(ctx, snap, plan, rows, offsets, positions, noCommit)
		switch {
		case errors.Is(err, conflict.ErrConflict) && attempt < 20:
			b.Log.Info("commit lost a race; redoing the batch", "err", err)
			continue
		case err != nil:
			return err
		}
		b.Log.Info("landed", "version", res.Version, "events", len(rows), "resent_dropped", dups, "offsets", offsetsText(offsets))
		if err := res.WaitHooks(); err != nil {
			b.Log.Warn("post-commit work failed (the commit stands)", "err", err)
		}
		return nil
	}
}

// select_ decodes the records the table does not hold yet.
//
// A change is dropped as sent before when its position is at or below
// the highest landed (Position.SentBefore). Changes without a commit LSN
// (Debezium knows none in its first transactions after a connector
// starts without stored offsets) are not ordered by position: they are
// dropped when their transaction's changes were landed up to their LSN
// (noCommit: per partition, each such transaction's highest LSN landed).
func (b *Bronze) select_(snap *deltalog.Snapshot, recs []*kgo.Record) (rows []bronzeRow, offsets map[string]int64, positions map[string]Position, noCommit map[string]map[int64]int64, dups int, err error) {
	offsets, positions = map[string]int64{}, map[string]Position{}
	table, err := tablePositions(snap)
	if err != nil {
		return nil, nil, nil, nil, 0, err
	}
	if noCommit, err = tableNoCommit(snap); err != nil {
		return nil, nil, nil, nil, 0, err
	}
	changed := map[string]bool{}
	for _, r := range recs {
		app := b.offsetApp(r.Topic, r.Partition)
		if v, ok := snap.TxnVersion(app); ok && r.Offset <= v {
			continue
		}
		if v, ok := offsets[app]; ok && r.Offset <= v {
			continue // a record polled twice
		}
		offsets[app] = r.Offset
		hwm, seen := positions[app]
		if !seen {
			hwm = table[app]
		}
		if r.Topic == b.TransactionTopic && b.TransactionTopic != "" {
			te, err := DecodeTransaction(r.Value)
			if errors.Is(err, ErrTombstone) || err == nil && te.Status != "END" {
				continue
			}
			if err != nil {
				return nil, nil, nil, nil, 0, &RecordError{r.Topic, r.Partition, r.Offset, err}
			}
			txID, lsn, err := ParseTransactionID(te.ID)
			if err != nil {
				return nil, nil, nil, nil, 0, &RecordError{r.Topic, r.Partition, r.Offset, err}
			}
			if p := (Position{LSN: lsn}); hwm.Less(p) {
				positions[app] = p
			} else {
				dups++
				continue
			}
			if n := te.Collections[b.Collection]; n > 0 {
				rows = append(rows, bronzeRow{rec: r, txID: txID, count: n, tsMs: te.TsMs})
			}
			continue
		}
		e, err := b.Decoder.Decode(r.Key, r.Value)
		if errors.Is(err, ErrTombstone) {
			continue
		}
		if err != nil {
			return nil, nil, nil, nil, 0, &RecordError{r.Topic, r.Partition, r.Offset, err}
		}
		if p, ok := e.Position(); ok {
			landed, known := noCommit[app][p.TxID]
			switch {
			case p.TxID != 0 && known && p.LSN <= landed:
				dups++
				continue
			case p.CommitLSN == 0 || hwm.CommitLSN == 0 && known:
				// Without a commit LSN (or re-sent with one now, its
				// transaction's first sending having had none): by
				// transaction, above.
			case p.SentBefore(hwm):
				dups++
				continue
			}
			if hwm.Less(p) {
				positions[app] = p
			}
			if p.CommitLSN == 0 && p.TxID != 0 {
				if noCommit[app] == nil {
					noCommit[app] = map[int64]int64{}
				}
				noCommit[app][p.TxID] = max(landed, p.LSN)
				changed[app] = true
			}
		}
		rows = append(rows, bronzeRow{rec: r, event: e})
	}
	for app := range noCommit {
		if !changed[app] {
			delete(noCommit, app) // only what this commit changes is written
		}
	}
	return rows, offsets, positions, noCommit, dups, nil
}

// NoCommitDomain is the bronze table's domain metadata holding, per topic
// partition, the highest LSN landed of each source transaction whose
// changes came without a commit LSN: {"APP/TOPIC/PARTITION": {"TXID":
// LSN, ...}, ...}, at most maxNoCommit transactions each (the newest).
const NoCommitDomain = "lakelog.cdc.positions.nocommit"

const maxNoCommit = 10_000

// tableNoCommit is what NoCommitDomain holds.
func tableNoCommit(snap *deltalog.Snapshot) (map[string]map[int64]int64, error) {
	out := map[string]map[int64]int64{}
	d, ok := snap.Domain(NoCommitDomain)
	if !ok || d.Removed {
		return out, nil
	}
	if err := json.Unmarshal([]byte(d.Configuration), &out); err != nil {
		return nil, fmt.Errorf("cdc: bronze's domain %s: %w", NoCommitDomain, err)
	}
	return out, nil
}

// PositionsDomain is the bronze table's domain metadata holding, per
// topic partition (its offset app id), the highest source position
// landed: {"APP/TOPIC/PARTITION": [commitLSN, LSN, txID], ...}. (A
// txn's version must grow with each commit; a position's parts do not.)
const PositionsDomain = "lakelog.cdc.positions"

// tablePositions are the positions the table holds.
func tablePositions(snap *deltalog.Snapshot) (map[string]Position, error) {
	out := map[string]Position{}
	d, ok := snap.Domain(PositionsDomain)
	if !ok || d.Removed {
		return out, nil
	}
	var raw map[string][3]int64 // tables written before txID have two
	if err := json.Unmarshal([]byte(d.Configuration), &raw); err != nil {
		return nil, fmt.Errorf("cdc: bronze's domain %s: %w", PositionsDomain, err)
	}
	for k, v := range raw {
		out[k] = Position{CommitLSN: v[0], LSN: v[1], TxID: v[2]}
	}
	return out, nil
}

// schemaPlan is the bronze schema a batch needs: the table's columns at
// their new types, new columns, and where each event's columns go.
type schemaPlan struct {
	fields  []*actions.StructField // the table's, then the new ones
	added   []*actions.StructField
	widen   map[string]actions.DataType
	shapes  map[*RowSchema]string   // the __schema text of each row schema
	columns map[*RowSchema][]string // the bronze column of each source column
}

func (b *Bronze) planSchema(snap *deltalog.Snapshot, rows []bronzeRow) (*schemaPlan, error) {
	p := &schemaPlan{widen: map[string]actions.DataType{}, shapes: map[*RowSchema]string{}, columns: map[*RowSchema][]string{}}
	byName := map[string]*actions.StructField{}
	for _, f := range snap.Schema().Fields {
		cp := *f
		p.fields = append(p.fields, &cp)
		byName[f.Name] = &cp
	}
	existing := len(p.fields)
	for _, r := range rows {
		e := r.event
		if e == nil || e.Schema == nil {
			continue
		}
		if _, done := p.columns[e.Schema]; done {
			continue
		}
		cols := make([]string, len(e.Schema.Columns))
		for i, c := range e.Schema.Columns {
			if IsBronzeColumn(c.Name) {
				return nil, &RecordError{r.rec.Topic, r.rec.Partition, r.rec.Offset, fmt.Errorf("cdc: the source column %q has the name of one of bronze's own columns", c.Name)}
			}
			for gen := 1; ; gen++ {
				name := c.Name
				if gen > 1 {
					name = fmt.Sprintf("%s__%d", c.Name, gen)
				}
				f := byName[name]
				if f == nil {
					f = &actions.StructField{Name: name, Type: c.Type, Nullable: true}
					p.fields = append(p.fields, f)
					p.added = append(p.added, f)
					byName[name] = f
					if gen > 1 {
						b.Log.Warn("a source column changed to a type its bronze column cannot hold: it goes on in a new column", "column", c.Name, "bronze_column", name, "type", typeText(c.Type))
					}
				}
				u := unionType(f.Type, c.Type)
				if u == nil {
					continue
				}
				if u.String() != f.Type.String() {
					f.Type = u
					if slices.Index(p.fields, f) < existing {
						p.widen[name] = u
					}
				}
				cols[i] = name
				break
			}
		}
		shape, err := shapeOf(e.Schema, e.Key, cols)
		if err != nil {
			return nil, err
		}
		p.columns[e.Schema], p.shapes[e.Schema] = cols, shape
	}
	return p, nil
}

// widen commits the plan's schema changes, each its own metadata
// commit: the new columns (ADD COLUMNS, which also adds the features
// their types need), then the type changes (enabling type widening on
// the table first when it is off).
func (b *Bronze) widen(ctx context.Context, snap *deltalog.Snapshot, p *schemaPlan) (*deltalog.Snapshot, error) {
	if len(p.added) > 0 {
		var cols []schema.Column
		for _, f := range p.added {
			cols = append(cols, schema.Column{Path: quoteName(f.Name), Type: f.Type})
		}
		res, err := schema.AddColumns(ctx, snap, cols, schema.WithCommitOptions(featuresFor(snap, p.added)...))
		if err != nil {
			return nil, fmt.Errorf("cdc: bronze: adding columns: %w", err)
		}
		b.Log.Info("added columns", "columns", fieldNames(p.added), "version", res.Version)
		if snap, err = res.Snapshot(); err != nil {
			return nil, err
		}
	}
	if len(p.widen) == 0 {
		return snap, nil
	}
	snap, err := enableTypeWidening(ctx, snap, b.Log)
	if err != nil {
		return nil, err
	}
	for _, name := range sortedKeys(p.widen) {
		res, err := schema.ChangeColumnType(ctx, snap, quoteName(name), p.widen[name], schema.WithCommitOptions(featuresFor(snap, []*actions.StructField{{Name: name, Type: p.widen[name]}})...))
		if err != nil {
			return nil, fmt.Errorf("cdc: bronze: widening %s to %s: %w", name, p.widen[name], err)
		}
		b.Log.Info("widened a column", "column", name, "type", typeText(p.widen[name]), "version", res.Version)
		if snap, err = res.Snapshot(); err != nil {
			return nil, err
		}
	}
	return snap, nil
}

// enableTypeWidening sets delta.enableTypeWidening on a table that does
// not have it (delta-rs cannot read a table with the feature: it is
// enabled only when a change needs it).
func enableTypeWidening(ctx context.Context, snap *deltalog.Snapshot, log *slog.Logger) (*deltalog.Snapshot, error) {
	if snap.Properties().EnableTypeWidening {
		return snap, nil
	}
	res, err := maintenance.SetProperties(ctx, snap, map[string]string{actions.PropEnableTypeWidening: "true"})
	if err != nil {
		return nil, fmt.Errorf("cdc: enabling type widening: %w", err)
	}
	log.Info("enabled type widening (readers without the typeWidening feature, such as delta-rs, cannot read the table from now on)", "version", res.Version)
	return res.Snapshot()
}

// commit writes the rows and commits them with the offsets and positions.
func (b *Bronze) commit(ctx context.Context, snap *deltalog.Snapshot, p *schemaPlan, rows []bronzeRow, offsets map[string]int64, positions map[string]Position, noCommit map[string]map[int64]int64) (*deltalog.CommitResult, error) {
	rec, err := b.record(p, rows)
	if err != nil {
		return nil, err
	}
	defer rec.Release()
	wr, err := writer.WriteFiles(ctx, snap, one(rec))
	if err != nil {
		return nil, fmt.Errorf("cdc: bronze: %w", err)
	}
	tx := snap.NewTransaction()
	for _, app := range sortedKeys(offsets) {
		tx.SetTransaction(app, offsets[app])
	}
	if len(positions) > 0 {
		all, err := tablePositions(snap)
		if err != nil {
			return nil, err
		}
		raw := map[string][3]int64{}
		for k, p := range all {
			raw[k] = [3]int64{p.CommitLSN, p.LSN, p.TxID}
		}
		for k, p := range positions {
			raw[k] = [3]int64{p.CommitLSN, p.LSN, p.TxID}
		}
		conf, err := json.Marshal(raw)
		if err != nil {
			return nil, err
		}
		if err := tx.SetDomainMetadata(PositionsDomain, string(conf)); err != nil {
			return nil, err
		}
	}
	if len(noCommit) > 0 {
		all, err := tableNoCommit(snap)
		if err != nil {
			return nil, err
		}
		for k, m := range noCommit {
			if len(m) > maxNoCommit { // the newest transactions
				ids := slices.Sorted(maps.Keys(m))
				for _, id := range ids[:len(ids)-maxNoCommit] {
					delete(m, id)
				}
			}
			all[k] = m
		}
		conf, err := json.Marshal(all)
		if err != nil {
			return nil, err
		}
		if err := tx.SetDomainMetadata(NoCommitDomain, string(conf)); err != nil {
			return nil, err
		}
	}
	params := map[string]any{"outputMode": "Append", "queryId": b.App, "epochId": strconv.FormatInt(snap.Version()+1, 10)}
	err = tx.Stage(wr.Changes("STREAMING UPDATE", params, nil))
	var res *deltalog.CommitResult
	if err == nil {
		res, err = tx.Commit(ctx)
	}
	if err != nil {
		for _, a := range wr.Adds {
			_ = b.Store.Delete(ctx, a.Path) // never committed
		}
		return nil, err
	}
	return res, nil
}

// record builds the rows as one Arrow batch of the plan's schema.
func (b *Bronze) record(p *schemaPlan, rows []bronzeRow) (arrow.RecordBatch, error) {
	sc, err := actions.ToArrowSchema(&actions.StructType{Fields: p.fields}, false, "")
	if err != nil {
		return nil, err
	}
	rb := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer rb.Release()
	index := map[string]int{}
	for i, f := range p.fields {
		index[f.Name] = i
	}
	set := make([]bool, len(p.fields))
	for _, r := range rows {
		clear(set)
		put := func(name string, v any) error {
			i := index[name]
			set[i] = true
			return AppendValue(rb.Field(i), v)
		}
		meta := map[string]any{ColTopic: r.rec.Topic, ColPartition: r.rec.Partition, ColOffset: r.rec.Offset}
		if e := r.event; e != nil {
			meta[ColOp] = string(e.Op)
			meta[ColTsMs] = optInt(e.TsMs, e.TsMs != 0)
			meta[ColSourceTsMs] = optInt(e.Source.TsMs, e.Source.TsMs != 0)
			meta[ColLSN] = optInt(e.Source.LSN, e.Source.HasLSN)
			meta[ColCommitLSN] = optInt(e.Source.CommitLSN, e.Source.HasCommitLSN)
			meta[ColTxID] = optInt(e.Source.TxID, e.Source.HasTxID)
			if e.Transaction != nil {
				meta[ColTxOrder] = e.Transaction.TotalOrder
			}
			if e.Schema != nil {
				meta[ColSchema] = p.shapes[e.Schema]
				cols := p.columns[e.Schema]
				var unavailable []string
				for i, c := range e.Schema.Columns {
					if e.Unavailable != nil && e.Unavailable[i] {
						unavailable = append(unavailable, c.Name)
						continue
					}
					f := p.fields[index[cols[i]]]
					v, err := fitValue(e.Row[i], f.Type)
					if err != nil {
						return nil, &RecordError{r.rec.Topic, r.rec.Partition, r.rec.Offset, &ValueError{Column: c.Name, Type: c.Source, Value: fmt.Sprint(e.Row[i]), Err: err}}
					}
					if err := put(cols[i], v); err != nil {
						return nil, &RecordError{r.rec.Topic, r.rec.Partition, r.rec.Offset, &ValueError{Column: c.Name, Type: c.Source, Value: fmt.Sprint(e.Row[i]), Err: err}}
					}
				}
				if len(unavailable) > 0 {
					meta[ColUnavailable] = unavailableText(unavailable)
				}
			}
		} else {
			meta[ColOp], meta[ColTxID], meta[ColTxEvents], meta[ColSourceTsMs] = OpEnd, r.txID, r.count, optInt(r.tsMs, r.tsMs != 0)
		}
		for _, f := range bronzeColumns {
			if err := put(f.Name, meta[f.Name]); err != nil {
				return nil, err
			}
		}
		for i := range p.fields {
			if !set[i] {
				rb.Field(i).AppendNull()
			}
		}
	}
	return rb.NewRecordBatch(), nil
}

func optInt(v int64, ok bool) any {
	if !ok {
		return nil
	}
	return v
}

// unavailableText is the __unavailable value of a list of columns: JSON
// text, sorted, so that equal sets are equal strings.
func unavailableText(cols []string) string {
	s := slices.Clone(cols)
	slices.Sort(s)
	var b strings.Builder
	b.WriteByte('[')
	for i, c := range s {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Quote(c))
	}
	b.WriteByte(']')
	return b.String()
}

func one(rec arrow.RecordBatch) iter.Seq2[arrow.RecordBatch, error] {
	return func(yield func(arrow.RecordBatch, error) bool) {
		if rec.NumRows() > 0 {
			yield(rec, nil)
		}
	}
}

func offsetsText(m map[string]int64) string {
	var parts []string
	for _, k := range sortedKeys(m) {
		parts = append(parts, fmt.Sprintf("%s@%d", k, m[k]))
	}
	return strings.Join(parts, " ")
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// openOrCreate opens the table, creating it with the given columns and
// the change data feed on when it does not exist.
func openOrCreate(ctx context.Context, store objstore.Store, columns []*actions.StructField, props map[string]string) (*deltalog.Snapshot, error) {
	snap, err := deltalog.Open(ctx, store, "")
	if !errors.Is(err, deltalog.ErrNotTable) {
		return snap, err
	}
	s, err := actions.SchemaString(&actions.StructType{Fields: columns})
	if err != nil {
		return nil, err
	}
	conf := map[string]string{actions.PropEnableChangeDataFeed: "true"}
	for k, v := range props {
		conf[k] = v
	}
	tx, err := deltalog.Create(store, "", &actions.Metadata{SchemaString: s, Configuration: conf})
	if err != nil {
		return nil, err
	}
	res, err := tx.Commit(ctx)
	if errors.Is(err, deltalog.ErrTableExists) {
		return deltalog.Open(ctx, store, "") // another process created it first
	}
	if err != nil {
		return nil, err
	}
	return res.Snapshot()
}

// ensureProperties sets the properties the table lacks (or has with
// another value) in one commit.
func ensureProperties(ctx context.Context, snap *deltalog.Snapshot, props map[string]string, log *slog.Logger) error {
	set := map[string]string{}
	for k, v := range props {
		if snap.Metadata().Configuration[k] != v {
			set[k] = v
		}
	}
	if len(set) == 0 {
		return nil
	}
	res, err := maintenance.SetProperties(ctx, snap, set)
	if err != nil {
		return fmt.Errorf("cdc: %w", err)
	}
	log.Info("table properties set", "version", res.Version, "properties", fmt.Sprint(set))
	if err := res.WaitHooks(); err != nil {
		log.Warn("post-commit work failed (the commit stands)", "err", err)
	}
	return nil
}

// quoteName is a column name as a column path: backquoted.
func quoteName(name string) string {
	return "`" + strings.ReplaceAll(name, "`", "``") + "`"
}

func fieldNames(fs []*actions.StructField) string {
	var names []string
	for _, f := range fs {
		names = append(names, f.Name)
	}
	return strings.Join(names, ", ")
}

// featuresFor are the commit options that enable the table features new
// columns need but that Delta adds only when asked for: timestampNtz for
// a timestamp_ntz column (Postgres's timestamp without time zone).
func featuresFor(snap *deltalog.Snapshot, added []*actions.StructField) []deltalog.CommitOption {
	if snap.Config().Supports(actions.FeatureTimestampNTZ) {
		return nil
	}
	for _, f := range added {
		if usesNTZ(f.Type) {
			return []deltalog.CommitOption{deltalog.WithTableFeatures(actions.FeatureTimestampNTZ)}
		}
	}
	return nil
}

func usesNTZ(t actions.DataType) bool {
	switch t := t.(type) {
	case actions.PrimitiveType:
		return t == actions.TypeTimestampNTZ
	case *actions.StructType:
		for _, f := range t.Fields {
			if usesNTZ(f.Type) {
				return true
			}
		}
	case *actions.ArrayType:
		return usesNTZ(t.ElementType)
	case *actions.MapType:
		return usesNTZ(t.KeyType) || usesNTZ(t.ValueType)
	}
	return false
}
