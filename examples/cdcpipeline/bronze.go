package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/conflict"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/writer"
	"github.com/lakelog/lakelog/writer/input"
)

// The bronze table's own columns, before the source table's: what each
// event was and where it came from.
const (
	colOp          = "__op"           // c, u, d or r
	colTsMs        = "__ts_ms"        // when Debezium processed the change (ms)
	colSourceTsMs  = "__source_ts_ms" // when the database committed it (ms)
	colLSN         = "__lsn"          // its WAL position
	colTxID        = "__txid"         // the database transaction
	colTopic       = "__topic"
	colPartition   = "__partition"
	colOffset      = "__offset"
	bronzeAppTitle = "STREAMING UPDATE"
)

var bronzeColumns = []*actions.StructField{
	{Name: colOp, Type: actions.TypeString, Nullable: false},
	{Name: colTsMs, Type: actions.TypeLong, Nullable: true},
	{Name: colSourceTsMs, Type: actions.TypeLong, Nullable: true},
	{Name: colLSN, Type: actions.TypeLong, Nullable: true},
	{Name: colTxID, Type: actions.TypeLong, Nullable: true},
	{Name: colTopic, Type: actions.TypeString, Nullable: false},
	{Name: colPartition, Type: actions.TypeInteger, Nullable: false},
	{Name: colOffset, Type: actions.TypeLong, Nullable: false},
}

// bronze appends a Debezium topic's events to a table, exactly once.
type bronze struct {
	store objstore.Store
	app   string // the app id prefix of the offsets: APP/TOPIC/PARTITION
	out   io.Writer
}

// offsetApp is the app id under which the table records the last offset
// of a topic partition it holds.
func (b *bronze) offsetApp(topic string, partition int32) string {
	return fmt.Sprintf("%s/%s/%d", b.app, topic, partition)
}

// runBronze consumes topics in the consumer group until ctx ends. The
// group only spreads partitions over consumers: the table, not Kafka,
// holds the offsets. On every assignment each partition resumes after
// the offset the table recorded for it (AdjustFetchOffsetsFn), and each
// poll's records land in one commit that records, per partition, the
// last offset it holds (an app transaction each).
func runBronze(ctx context.Context, store objstore.Store, brokers, topics []string, group, instance, app string, maxRecords int, out io.Writer) error {
	b := &bronze{store: store, app: app, out: out}
	if _, err := openOrCreate(ctx, store, bronzeColumns, nil); err != nil {
		return err
	}
	opts := []kgo.Opt{
		kgo.SeedBrokers(brokers...),
		kgo.ConsumerGroup(group),
		kgo.ConsumeTopics(topics...),
		kgo.DisableAutoCommit(),
		// A rebalance waits until the records polled are landed
		// (AllowRebalance), so partitions move between commits.
		kgo.BlockRebalanceOnPoll(),
		kgo.AdjustFetchOffsetsFn(b.resumeOffsets),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchMaxWait(250 * time.Millisecond),
		// A consumer that died leaves the group after this; a static
		// member (InstanceID) that comes back takes its partitions again
		// at once.
		kgo.SessionTimeout(10 * time.Second),
	}
	if instance != "" {
		opts = append(opts, kgo.InstanceID(instance))
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return err
	}
	// Close leaves the group, which waits for a rebalance that a poll
	// still blocks: allow it first.
	defer cl.Close()
	defer cl.AllowRebalance()
	for {
		fetches := cl.PollRecords(ctx, maxRecords)
		if ctx.Err() != nil {
			return nil
		}
		fetches.EachError(func(topic string, partition int32, err error) {
			fmt.Fprintf(out, "fetch %s/%d: %v (retrying)\n", topic, partition, err)
		})
		if recs := fetches.Records(); len(recs) > 0 {
			if err := b.land(ctx, recs); err != nil {
				return err
			}
		}
		cl.AllowRebalance()
	}
}

// resumeOffsets starts each assigned partition after the last offset the
// table holds for it, or at the topic's start.
func (b *bronze) resumeOffsets(ctx context.Context, assigned map[string]map[int32]kgo.Offset) (map[string]map[int32]kgo.Offset, error) {
	snap, err := deltalog.Open(ctx, b.store, "")
	if err != nil {
		return nil, err
	}
	for topic, parts := range assigned {
		for p := range parts {
			parts[p] = kgo.NewOffset().AtStart()
			where := "the start"
			if v, ok := snap.TxnVersion(b.offsetApp(topic, p)); ok {
				parts[p] = kgo.NewOffset().At(v + 1).WithEpoch(-1)
				where = fmt.Sprintf("offset %d (the table holds up to %d)", v+1, v)
			}
			fmt.Fprintf(b.out, "bronze: assigned %s/%d: resuming at %s\n", topic, p, where)
		}
	}
	return assigned, nil
}

// land appends recs to the table with their offsets in the same commit.
// Records at or below an offset the table already holds are dropped
// first (another consumer landed them before a rebalance), so that a
// record lands once. A commit that loses a race for one of its partitions
// (another consumer recorded it meanwhile) is redone on the new version.
func (b *bronze) land(ctx context.Context, recs []*kgo.Record) error {
	for attempt := 1; ; attempt++ {
		snap, err := deltalog.Open(ctx, b.store, "")
		if err != nil {
			return err
		}
		var keep []*kgo.Record
		last := map[string]int64{}
		for _, r := range recs {
			app := b.offsetApp(r.Topic, r.Partition)
			if v, ok := snap.TxnVersion(app); ok && r.Offset <= v {
				continue
			}
			keep = append(keep, r)
			last[app] = max(last[app], r.Offset)
		}
		if len(keep) == 0 {
			return nil
		}
		lines, schema, events, err := bronzeRows(snap.Schema(), keep)
		if err != nil {
			return err
		}
		dec, err := input.NewDecoder(bytes.NewReader(lines), "events.jsonl", schema, input.WithFormat(input.JSONL))
		if err != nil {
			return err
		}
		wr, err := writer.WriteFiles(ctx, snap, dec.Records(ctx), writer.WithMergeSchema())
		if err != nil {
			return recordError(err, keep)
		}
		tx := snap.NewTransaction()
		for _, app := range sortedNames(last) {
			tx.SetTransaction(app, last[app])
		}
		params := map[string]any{"outputMode": "Append", "queryId": b.app, "epochId": strconv.FormatInt(snap.Version()+1, 10)}
		err = tx.Stage(wr.Changes(bronzeAppTitle, params, nil))
		var res *deltalog.CommitResult
		if err == nil {
			res, err = tx.Commit(ctx)
		}
		switch {
		case errors.Is(err, conflict.ErrConflict) && attempt < 20:
			b.discard(ctx, wr)
			fmt.Fprintf(b.out, "bronze: %v; redoing the batch\n", err)
			continue
		case err != nil:
			b.discard(ctx, wr)
			return err
		case res.AlreadyApplied:
			b.discard(ctx, wr)
			continue // one of its partitions moved on: keep what is left
		}
		fmt.Fprintf(b.out, "bronze: version %d: %d events (%d tombstones) up to %s\n", res.Version, events, len(keep)-events, offsetsText(last))
		if err := res.WaitHooks(); err != nil {
			fmt.Fprintf(b.out, "bronze: %v\n", err)
		}
		return nil
	}
}

// discard deletes the files of a write that was not committed (VACUUM
// would remove them later anyway).
func (b *bronze) discard(ctx context.Context, wr *writer.WriteResult) {
	for _, a := range wr.Adds {
		_ = b.store.Delete(ctx, a.Path)
	}
}

func offsetsText(last map[string]int64) string {
	var parts []string
	for _, app := range sortedNames(last) {
		parts = append(parts, fmt.Sprintf("%s@%d", app, last[app]))
	}
	return strings.Join(parts, " ")
}

// bronzeRows turns records into JSON Lines of the bronze table's columns
// (one line per event; tombstones have none) and the schema to read them
// with: the table's columns, then the source's new ones (typed by the
// event's schema, or inferred from the first non-null value). It returns
// the number of events.
func bronzeRows(table *actions.StructType, recs []*kgo.Record) ([]byte, *actions.StructType, int, error) {
	schema := &actions.StructType{Fields: slices.Clone(table.Fields)}
	var buf bytes.Buffer
	n := 0
	for _, r := range recs {
		e, err := decodeEvent(r.Value)
		if errors.Is(err, errTombstone) {
			continue
		}
		if err != nil {
			return nil, nil, 0, fmt.Errorf("%s/%d offset %d: %w", r.Topic, r.Partition, r.Offset, err)
		}
		row := map[string]any{colOp: e.op, colTsMs: e.tsMs, colSourceTsMs: e.sourceTsMs, colLSN: e.lsn, colTxID: e.txID,
			colTopic: r.Topic, colPartition: r.Partition, colOffset: r.Offset}
		for _, f := range e.fields {
			v := e.row[f.name]
			col := schema.Field(f.name)
			if col == nil {
				t := deltaType(f, v)
				if t == nil {
					continue // no schema and only nulls so far: added with a value
				}
				col = &actions.StructField{Name: f.name, Type: t, Nullable: true}
				schema.Fields = append(schema.Fields, col)
			}
			cv, err := value(f, col.Type, v)
			if err != nil {
				return nil, nil, 0, fmt.Errorf("%s/%d offset %d: column %q: %w", r.Topic, r.Partition, r.Offset, f.name, err)
			}
			row[col.Name] = cv
		}
		line, err := json.Marshal(row)
		if err != nil {
			return nil, nil, 0, err
		}
		buf.Write(line)
		buf.WriteByte('\n')
		n++
	}
	return buf.Bytes(), schema, n, nil
}

// recordError names the record an input error's line came from.
func recordError(err error, recs []*kgo.Record) error {
	var ie *input.Error
	if !errors.As(err, &ie) || ie.Line <= 0 {
		return err
	}
	line := int64(0)
	for _, r := range recs {
		if _, derr := decodeEvent(r.Value); derr != nil {
			continue
		}
		if line++; line == ie.Line {
			return fmt.Errorf("%s/%d offset %d: %w", r.Topic, r.Partition, r.Offset, err)
		}
	}
	return err
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
	conf := map[string]string{"delta.enableChangeDataFeed": "true"}
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
