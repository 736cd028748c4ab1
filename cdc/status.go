package cdc

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/objstore"
)

// TableStatus is one table's place in the pipeline: how far Kafka,
// bronze and silver are, and the lags between them.
type TableStatus struct {
	Topic string `json:"topic"`
	// KafkaEnd is each partition's end offset; BronzeOffset the last
	// offset bronze holds; LagEvents the records bronze has yet to land.
	KafkaEnd     map[int32]int64 `json:"kafka_end"`
	BronzeOffset map[int32]int64 `json:"bronze_offset"`
	LagEvents    int64           `json:"lag_events"`
	// SourcePosition is the highest source position bronze holds, per
	// partition ("commitLSN/LSN").
	SourcePosition map[string]string `json:"source_position"`
	BronzeVersion  int64             `json:"bronze_version"`
	BronzeTime     time.Time         `json:"bronze_time"`
	// SilverBronzeVersion is how far into bronze silver is; LagVersions
	// the bronze versions with events it has yet to apply (not auto
	// compaction's or VACUUM's), LagSeconds how long ago the oldest of
	// them was committed (0 when caught up).
	SilverVersion       int64   `json:"silver_version"`
	SilverBronzeVersion int64   `json:"silver_bronze_version"`
	LagVersions         int64   `json:"lag_versions"`
	LagSeconds          float64 `json:"lag_seconds"`
}

// Status reports each table's status.
func Status(ctx context.Context, c *Config) ([]TableStatus, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.Brokers...), kgo.DialTimeout(5*time.Second))
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	var out []TableStatus
	for _, t := range c.Tables {
		st := TableStatus{Topic: t.Topic, BronzeOffset: map[int32]int64{}, SourcePosition: map[string]string{}}
		if st.KafkaEnd, err = endOffsets(ctx, cl, t.Topic); err != nil {
			return nil, err
		}
		bronze, err := objstore.Open(ctx, t.Bronze)
		if err != nil {
			return nil, err
		}
		defer objstore.Close(bronze)
		snap, err := deltalog.Open(ctx, bronze, "")
		if err != nil && !errors.Is(err, deltalog.ErrNotTable) {
			return nil, err
		}
		if err == nil {
			st.BronzeVersion, st.BronzeTime = snap.Version(), snap.Timestamp()
			for p, end := range st.KafkaEnd {
				off, ok := snap.TxnVersion("bronze/" + t.Topic + "/" + strconv.Itoa(int(p)))
				if !ok {
					off = -1
				}
				st.BronzeOffset[p] = off
				st.LagEvents += end - 1 - off
			}
			pos, err := tablePositions(snap)
			if err != nil {
				return nil, err
			}
			for k, p := range pos {
				if strings.Contains(k, "/"+t.Topic+"/") {
					st.SourcePosition[k[strings.LastIndex(k, "/")+1:]] = p.String()
				}
			}
		}
		if err := silverStatus(ctx, t, snap, bronze, &st); err != nil {
			return nil, err
		}
		out = append(out, st)
	}
	return out, nil
}

func silverStatus(ctx context.Context, t TableConfig, bronzeSnap *deltalog.Snapshot, bronze objstore.Store, st *TableStatus) error {
	silver, err := objstore.Open(ctx, t.Silver)
	if err != nil {
		return err
	}
	defer objstore.Close(silver)
	st.SilverVersion, st.SilverBronzeVersion = -1, 0
	snap, err := deltalog.Open(ctx, silver, "")
	if err != nil && !errors.Is(err, deltalog.ErrNotTable) {
		return err
	}
	if err == nil {
		st.SilverVersion = snap.Version()
		pos, err := (&Silver{Silver: silver, App: "silver"}).position(ctx)
		if err != nil {
			return err
		}
		st.SilverBronzeVersion = pos.Version
	}
	if bronzeSnap == nil || st.SilverBronzeVersion >= bronzeSnap.Version() {
		return nil
	}
	// Only bronze versions that landed events count: auto compaction's,
	// VACUUM's and property commits give silver nothing to apply.
	for vc, err := range deltalog.Commits(ctx, bronze, "", st.SilverBronzeVersion+1, bronzeSnap.Version()) {
		if err != nil {
			return err
		}
		if slices.ContainsFunc(vc.Actions, func(a actions.Action) bool { return a.Add != nil && a.Add.DataChange }) {
			if st.LagVersions == 0 {
				st.LagSeconds = time.Since(vc.Timestamp).Seconds()
			}
			st.LagVersions++
		}
	}
	return nil
}

// endOffsets lists a topic's partitions' end offsets.
func endOffsets(ctx context.Context, cl *kgo.Client, topic string) (map[int32]int64, error) {
	meta := kmsg.NewPtrMetadataRequest()
	mt := kmsg.NewMetadataRequestTopic()
	mt.Topic = kmsg.StringPtr(topic)
	meta.Topics = append(meta.Topics, mt)
	mresp, err := meta.RequestWith(ctx, cl)
	if err != nil {
		return nil, fmt.Errorf("%w: Kafka does not answer: %v", ErrNotReady, err)
	}
	req := kmsg.NewPtrListOffsetsRequest()
	rt := kmsg.NewListOffsetsRequestTopic()
	rt.Topic = topic
	for _, t := range mresp.Topics {
		if t.ErrorCode != 0 {
			return nil, fmt.Errorf("%w: topic %q does not exist", ErrNotReady, topic)
		}
		for _, p := range t.Partitions {
			rp := kmsg.NewListOffsetsRequestTopicPartition()
			rp.Partition, rp.Timestamp = p.Partition, -1
			rt.Partitions = append(rt.Partitions, rp)
		}
	}
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return nil, err
	}
	out := map[int32]int64{}
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			out[p.Partition] = p.Offset
		}
	}
	return out, nil
}
