// Command cdcpipeline lands a database's changes in Delta tables, exactly
// once per source change: Postgres -> Debezium -> Kafka -> bronze ->
// change feed -> silver. It is a thin program over the cdc package,
// which `lakelog cdc run` runs too; copy it to build your own.
//
// bronze consumes a table's Debezium topic (and the connector's
// transaction topic) and appends every change event once to the bronze
// table (cdc.Bronze). silver follows bronze's change feed and keeps the
// silver table equal to the source table (cdc.Silver).
//
// Usage:
//
//	cdcpipeline bronze -table URI -brokers HOST:PORT -topic TOPIC [-tx-topic TOPIC] [-group G] [-instance-id ID] [-app ID]
//	cdcpipeline silver -bronze URI -table URI [-key COL[,COL]] [-app ID] [-poll D] [-resume-from-version N]
//
// Both turn auto compaction on for their table (-auto-compact=false
// leaves it off): the small files of their commits are compacted by the
// commits themselves once the table holds -auto-compact-min-files.
//
// Both run until interrupted and log one line per event of note, with
// a timestamp. URIs are paths, file://, s3://, gs:// or az://
// (credentials and endpoints from each cloud's environment).
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/lakelog/lakelog/cdc"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/maintenance"
	"github.com/lakelog/lakelog/objstore"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

const usage = `usage:
  cdcpipeline bronze -table URI -brokers HOST:PORT[,...] -topic TOPIC [-tx-topic TOPIC] [-group G] [-instance-id ID] [-app ID]
                     [-numeric string|decimal(38,S)] [-max-wait D] [-max-records N] [-max-bytes N]
  cdcpipeline silver -bronze URI -table URI [-key COL[,...]] [-app ID] [-poll D] [-resume-from-version N]
  both:              [-auto-compact=false] [-auto-compact-min-files N]`

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || (args[0] != "bronze" && args[0] != "silver") {
		fmt.Fprintln(stderr, usage)
		return 2
	}
	fs := flag.NewFlagSet("cdcpipeline "+args[0], flag.ContinueOnError)
	fs.SetOutput(stderr)
	table := fs.String("table", "", "the table this stage writes (a path or URI); created when missing")
	app := fs.String("app", args[0], "application id of the stage's commits (its offsets)")
	brokers := fs.String("brokers", "127.0.0.1:9092", "bronze: Kafka brokers, comma separated")
	topic := fs.String("topic", "", "bronze: the table's Debezium topic (<prefix>.<schema>.<table>)")
	txTopic := fs.String("tx-topic", "", "bronze: the connector's transaction topic (<prefix>.transaction), with provide.transaction.metadata=true")
	group := fs.String("group", "cdcpipeline-bronze", "bronze: the Kafka consumer group (it spreads partitions; offsets live in the table)")
	instance := fs.String("instance-id", "", "bronze: a static group member id, so that a restarted consumer takes its partitions back at once")
	numeric := fs.String("numeric", "", "bronze: what numerics without precision become: string, or decimal(38,S)")
	maxWait := fs.Duration("max-wait", time.Second, "bronze: a commit holds what came within this of its first record")
	maxRecords := fs.Int("max-records", 100_000, "bronze: most records per commit")
	wait := fs.Duration("wait", time.Minute, "bronze: how long to wait at start for the brokers and the topic before failing")
	maxBytes := fs.Int64("max-bytes", 64<<20, "bronze: most bytes of records per commit")
	bronzeURI := fs.String("bronze", "", "silver: the bronze table")
	keys := fs.String("key", "", "silver: the source table's key columns, comma separated (default: its primary key, from the events)")
	poll := fs.Duration("poll", 200*time.Millisecond, "silver: how often a caught-up follower looks at bronze")
	resume := fs.Int64("resume-from-version", 0, "silver: accept the schema change that stopped silver at this bronze version (see its message)")
	autoCompact := fs.Bool("auto-compact", true, "turn delta.autoOptimize.autoCompact on for the table")
	dvs := fs.String("deletion-vectors", "", "silver: true or false sets delta.enableDeletionVectors, on an existing table too (default: a new silver table gets them)")
	minFiles := fs.Int("auto-compact-min-files", maintenance.AutoCompactMinNumFiles, "small files a partition holds before auto compaction rewrites them")
	if err := fs.Parse(args[1:]); err != nil {
		return 2
	}
	deltalog.RegisterHook(maintenance.AutoCompactHook(maintenance.AutoCompactMinFiles(*minFiles)))
	cfg := &cdc.Config{AutoCompact: autoCompact}
	if *dvs != "" {
		on, err := strconv.ParseBool(*dvs)
		if err != nil {
			fmt.Fprintf(stderr, "cdcpipeline: -deletion-vectors %q: want true or false\n", *dvs)
			return 2
		}
		cfg.DeletionVectors = &on
	}
	props := cfg.TableProperties()
	if args[0] == "silver" {
		props = cfg.SilverProperties()
	}
	if *table == "" || fs.NArg() > 0 || args[0] == "bronze" && *topic == "" || args[0] == "silver" && *bronzeURI == "" {
		fmt.Fprintln(stderr, usage)
		return 2
	}
	log := slog.New(slog.NewTextHandler(stderr, nil)).With("stage", args[0])
	store, err := objstore.Open(ctx, *table)
	if err != nil {
		fmt.Fprintln(stderr, "cdcpipeline:", err)
		return 1
	}
	defer objstore.Close(store)
	if args[0] == "bronze" {
		var opts []cdc.Option
		if *numeric != "" {
			m, err := cdc.ParseNumericMode(*numeric)
			if err != nil {
				fmt.Fprintln(stderr, "cdcpipeline:", err)
				return 2
			}
			opts = append(opts, cdc.WithVariableNumeric(m))
		}
		b := &cdc.Bronze{Store: store, Brokers: strings.Split(*brokers, ","), Topic: *topic, TransactionTopic: *txTopic,
			Group: *group, InstanceID: *instance, App: *app, Decoder: cdc.NewDecoder(opts...),
			MaxWait: *maxWait, MaxRecords: *maxRecords, MaxBytes: *maxBytes, Properties: props, Log: log}
		waitLog := func(err error) { log.Warn("waiting for Kafka", "err", err) }
		if err = cdc.WaitKafka(ctx, b.Brokers, []string{*topic}, *wait, waitLog); err == nil {
			err = b.Run(ctx)
		}
	} else {
		var src objstore.Store
		if src, err = objstore.Open(ctx, *bronzeURI); err == nil {
			defer objstore.Close(src)
			s := &cdc.Silver{Bronze: src, Silver: store, App: *app, Poll: *poll, ResumeFromVersion: *resume, Properties: props, Log: log}
			if *keys != "" {
				s.Keys = strings.Split(*keys, ",")
			}
			err = s.Run(ctx)
		}
	}
	if err != nil {
		log.Error("stopped", "err", err)
		return 1
	}
	return 0
}
