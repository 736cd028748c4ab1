package cdc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/objstore"
)

// Config is a pipeline's configuration (pipeline.yaml):
//
//	brokers: [127.0.0.1:9092]
//	connect: http://127.0.0.1:8083   # optional: checks the connector
//	connector: pg                    # its name, and topic.prefix
//	variable_numeric: string         # or decimal(38,S)
//	auto_compact: true               # delta.autoOptimize.autoCompact on bronze and silver (default true)
//	deletion_vectors: true           # delta.enableDeletionVectors on silver (default: on new silver tables)
//	properties:                      # more table properties of bronze and silver
//	  delta.deletedFileRetentionDuration: interval 7 days
//	vacuum:
//	  interval: 1h                   # how often (default 1h; 0s: never)
//	  retention: 168h                # default: each table's delta.deletedFileRetentionDuration
//	  bronze: false                  # vacuum bronze too (default false: see below)
//	tables:
//	  - topic: pg.public.customers
//	    bronze: s3://lake/bronze/customers
//	    silver: s3://lake/silver/customers
//	    key: [id]                    # optional: the events' primary key
//
// Auto compaction rewrites the small files the stages' commits write
// (bronze's appends, silver's MERGEs) into larger ones once a table holds
// 50 of them; VACUUM then deletes the files no version inside the
// retention window reads.
//
// Silver's MERGEs mark the rows they update or delete in deletion
// vectors (merge-on-read) rather than rewriting the files that hold them:
// without them every MERGE rewrites each file it touches whole, and the
// copies it replaced stay on disk for the retention window. New silver
// tables are created with delta.enableDeletionVectors=true unless
// deletion_vectors says false; auto compaction rewrites files with
// deletion vectors, so their deleted rows do not accumulate. An existing
// silver table is changed only when deletion_vectors is set: true
// enables them (the table's protocol is raised to reader version 3 and
// writer version 7 with the deletionVectors feature, which every reader
// of the table must support; it cannot be undone), false makes later
// MERGEs rewrite files again (deletion vectors already written stay). Silver reads bronze through its change feed,
// which needs the files each bronze version added: VACUUM of bronze
// never deletes what silver has yet to read (its retention is stretched
// to silver's position), but it does delete the history that rebuilding
// silver from bronze's version 0 needs, so it is off unless asked for.
type Config struct {
	Brokers         []string          `yaml:"brokers"`
	Connect         string            `yaml:"connect"`
	Connector       string            `yaml:"connector"`
	VariableNumeric string            `yaml:"variable_numeric"`
	AutoCompact     *bool             `yaml:"auto_compact"`
	DeletionVectors *bool             `yaml:"deletion_vectors"`
	Properties      map[string]string `yaml:"properties"`
	Vacuum          VacuumConfig      `yaml:"vacuum"`
	Tables          []TableConfig     `yaml:"tables"`
}

// VacuumConfig is when and how the pipeline vacuums its tables.
type VacuumConfig struct {
	// Interval between two VACUUMs of each table (nil: DefaultVacuumInterval;
	// 0: never).
	Interval *time.Duration `yaml:"interval"`
	// Retention is the retention window (0: each table's
	// delta.deletedFileRetentionDuration, 7 days by default). A window
	// under the table's is refused: lower the table's property instead.
	Retention time.Duration `yaml:"retention"`
	// Bronze vacuums bronze too.
	Bronze bool `yaml:"bronze"`
}

// DefaultVacuumInterval is how often the pipeline vacuums each table
// when the configuration does not say.
const DefaultVacuumInterval = time.Hour

// interval is the time between VACUUMs, 0 for never.
func (v VacuumConfig) interval() time.Duration {
	if v.Interval == nil {
		return DefaultVacuumInterval
	}
	return max(*v.Interval, 0)
}

// TableProperties are the properties the stages give bronze and silver:
// auto compaction (on unless AutoCompact says false) and Properties.
func (c *Config) TableProperties() map[string]string {
	props := map[string]string{actions.PropAutoCompact: "true"}
	if c.AutoCompact != nil && !*c.AutoCompact {
		props[actions.PropAutoCompact] = "false"
	}
	maps.Copy(props, c.Properties)
	return props
}

// SilverProperties are the properties the silver stage gives silver:
// TableProperties, and delta.enableDeletionVectors when DeletionVectors
// says (Silver creates new tables with it on when they do not say).
func (c *Config) SilverProperties() map[string]string {
	props := c.TableProperties()
	if c.DeletionVectors != nil {
		props[actions.PropEnableDeletionVectors] = strconv.FormatBool(*c.DeletionVectors)
	}
	return props
}

// TableConfig is one source table's stages.
type TableConfig struct {
	Topic  string   `yaml:"topic"`
	Bronze string   `yaml:"bronze"`
	Silver string   `yaml:"silver"`
	Key    []string `yaml:"key"`
}

// LoadConfig reads and checks a pipeline.yaml.
func LoadConfig(path string) (*Config, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("cdc: %w", err)
	}
	var c Config
	dec := yaml.NewDecoder(strings.NewReader(string(b)))
	dec.KnownFields(true)
	if err := dec.Decode(&c); err != nil {
		return nil, fmt.Errorf("cdc: %s: %w", path, err)
	}
	switch {
	case len(c.Brokers) == 0:
		return nil, fmt.Errorf("cdc: %s: no brokers", path)
	case len(c.Tables) == 0:
		return nil, fmt.Errorf("cdc: %s: no tables", path)
	}
	for i, t := range c.Tables {
		if t.Topic == "" || t.Bronze == "" || t.Silver == "" {
			return nil, fmt.Errorf("cdc: %s: table %d needs topic, bronze and silver", path, i+1)
		}
	}
	if c.VariableNumeric != "" {
		if _, err := ParseNumericMode(c.VariableNumeric); err != nil {
			return nil, fmt.Errorf("cdc: %s: variable_numeric: %w", path, err)
		}
	}
	if err := actions.ParseTableProperties(c.SilverProperties()).Err(); err != nil {
		return nil, fmt.Errorf("cdc: %s: properties: %w", path, err)
	}
	if c.Vacuum.Retention < 0 {
		return nil, fmt.Errorf("cdc: %s: vacuum: retention %s is negative", path, c.Vacuum.Retention)
	}
	return &c, nil
}

// transactionTopic is the connector's transaction topic.
func (c *Config) transactionTopic(t TableConfig) string {
	prefix := c.Connector
	if prefix == "" {
		prefix, _, _ = strings.Cut(t.Topic, ".")
	}
	return prefix + ".transaction"
}

// CheckConnector checks that the connector runs on the Connect worker at
// url, naming what is wrong: not registered, paused, failed (with the
// first line of its trace).
func CheckConnector(ctx context.Context, url, name string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(url, "/")+"/connectors/"+name+"/status", nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("%w: Kafka Connect at %s does not answer: %v", ErrNotReady, url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusNotFound {
		return fmt.Errorf("%w: Kafka Connect at %s has no connector %q", ErrNotReady, url, name)
	}
	var st struct {
		Connector struct{ State string }
		Tasks     []struct{ State, Trace string }
	}
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		return fmt.Errorf("%w: Kafka Connect at %s: connector %q: %s", ErrNotReady, url, name, resp.Status)
	}
	if st.Connector.State != "RUNNING" {
		return fmt.Errorf("%w: connector %q is %s", ErrNotReady, name, st.Connector.State)
	}
	for i, t := range st.Tasks {
		if t.State != "RUNNING" {
			trace, _, _ := strings.Cut(t.Trace, "\n")
			return fmt.Errorf("%w: connector %q's task %d is %s: %s", ErrNotReady, name, i, t.State, trace)
		}
	}
	if len(st.Tasks) == 0 {
		return fmt.Errorf("%w: connector %q has no running task", ErrNotReady, name)
	}
	return nil
}

// Run runs the pipeline until ctx ends: for each table a bronze and a
// silver stage, each restarted with backoff (1 s doubling to 1 min) when
// it fails, except for errors no restart can mend (an unsupported type,
// a bad value, an incompatible schema change), which stop that stage and
// are logged; the others go on. Both tables get the configuration's
// table properties (auto compaction); every vacuum interval silver (and
// bronze, if asked) is vacuumed. It first checks the brokers, the topics
// and (with Connect configured) the connector, and returns their error.
// A cancelled ctx stops every stage between commits and returns nil.
func Run(ctx context.Context, c *Config, log *slog.Logger) error {
	if c.Connect != "" && c.Connector != "" {
		if err := CheckConnector(ctx, c.Connect, c.Connector); err != nil {
			return err
		}
	}
	var topics []string
	for _, t := range c.Tables {
		topics = append(topics, t.Topic)
	}
	if err := WaitKafka(ctx, c.Brokers, topics, time.Minute, func(err error) { log.Warn("waiting for Kafka", "err", err) }); err != nil {
		return err
	}
	var opts []Option
	if c.VariableNumeric != "" {
		m, _ := ParseNumericMode(c.VariableNumeric)
		opts = append(opts, WithVariableNumeric(m))
	}
	var wg sync.WaitGroup
	var stores []objstore.Store
	defer func() {
		for _, s := range stores {
			objstore.Close(s)
		}
	}()
	for _, t := range c.Tables {
		bronze, err := objstore.Open(ctx, t.Bronze)
		if err != nil {
			return err
		}
		stores = append(stores, bronze)
		silver, err := objstore.Open(ctx, t.Silver)
		if err != nil {
			return err
		}
		stores = append(stores, silver)
		tlog := log.With("table", t.Topic)
		group := "lakelog-cdc-" + t.Topic
		b := &Bronze{Store: bronze, Brokers: c.Brokers, Topic: t.Topic, TransactionTopic: c.transactionTopic(t), Group: group,
			App: "bronze", Decoder: NewDecoder(opts...), Properties: c.TableProperties(), Log: tlog.With("stage", "bronze")}
		s := &Silver{Bronze: bronze, Silver: silver, Keys: t.Key, App: "silver", Properties: c.SilverProperties(), Log: tlog.With("stage", "silver")}
		wg.Add(2)
		go func() { defer wg.Done(); supervise(ctx, b.Log, b.Run) }()
		go func() { defer wg.Done(); supervise(ctx, s.Log, s.Run) }()
		if every := c.Vacuum.interval(); every > 0 {
			v := &vacuumer{cfg: c.Vacuum, silver: s, log: tlog.With("stage", "vacuum")}
			wg.Add(1)
			go func() { defer wg.Done(); v.run(ctx, every) }()
		}
	}
	wg.Wait()
	return nil
}

// supervise runs a stage until ctx ends, restarting it with backoff.
func supervise(ctx context.Context, log *slog.Logger, run func(context.Context) error) {
	backoff := time.Second
	for {
		started := time.Now()
		err := run(ctx)
		if ctx.Err() != nil {
			log.Info("stopped")
			return
		}
		if err == nil {
			err = errors.New("the stage returned")
		}
		if errors.Is(err, ErrUnsupportedType) || errors.Is(err, ErrBadValue) || errors.Is(err, ErrIncompatibleChange) || errors.Is(err, ErrNoSchema) {
			log.Error("stage stopped; it needs an operator", "err", err)
			return
		}
		if time.Since(started) > time.Minute {
			backoff = time.Second
		}
		log.Error("stage failed; restarting", "err", err, "in", backoff)
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, time.Minute)
	}
}
