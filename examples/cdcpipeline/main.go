// Command cdcpipeline lands a database's changes in Delta tables, exactly
// once: Postgres -> Debezium -> Kafka -> bronze -> change feed -> silver.
//
// bronze consumes Debezium's topics (franz-go, one consumer group) and
// appends every change event, as it came, to the bronze table: the
// event's own columns (__op, __ts_ms, __source_ts_ms, __lsn, __txid,
// __topic, __partition, __offset) and the row's (after, or before for a
// delete), the table's schema growing as the source's does (Spark's
// mergeSchema). Each commit records, per topic partition, the last offset
// it holds (txn(APP/TOPIC/PARTITION, offset)), in the same commit: the
// table is the consumer's offset store. On start and at every rebalance a
// partition resumes after the table's offset, so a crash at any point
// neither loses nor repeats an event.
//
// silver follows bronze's change feed (cdf.Follow), keeps the latest event
// per key in each batch (by source LSN, then offset), and MERGEs it into
// the silver table: a delete deletes the row, anything else upserts it.
// The MERGE commits txn(APP, bronze version): silver's offset in bronze
// is its own last commit. Silver has the change data feed on too.
//
// Usage:
//
//	cdcpipeline bronze -table URI -brokers HOST:PORT -topic TOPIC [-group G] [-app ID]
//	cdcpipeline silver -bronze URI -table URI -key COL[,COL] [-app ID] [-poll D]
//
// Both run until interrupted. URIs are paths, file://, s3://, gs:// or
// az:// (credentials and endpoints from each cloud's environment).
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/lakelog/lakelog/objstore"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

const usage = `usage:
  cdcpipeline bronze -table URI -brokers HOST:PORT[,...] -topic TOPIC[,...] [-group G] [-instance-id ID] [-app ID] [-max-records N]
  cdcpipeline silver -bronze URI -table URI -key COL[,...] [-app ID] [-poll DURATION]`

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || (args[0] != "bronze" && args[0] != "silver") {
		fmt.Fprintln(stderr, usage)
		return 2
	}
	fs := flag.NewFlagSet("cdcpipeline "+args[0], flag.ContinueOnError)
	fs.SetOutput(stderr)
	table := fs.String("table", "", "the table this stage writes (a path or URI); created when missing")
	app := fs.String("app", "cdcpipeline-"+args[0], "application id of the stage's commits (its offsets)")
	brokers := fs.String("brokers", "127.0.0.1:9092", "bronze: Kafka brokers, comma separated")
	topics := fs.String("topic", "", "bronze: Debezium topics, comma separated (<prefix>.<schema>.<table>)")
	group := fs.String("group", "cdcpipeline-bronze", "bronze: the Kafka consumer group (it spreads partitions; offsets live in the table)")
	instance := fs.String("instance-id", "", "bronze: a static group member id, so that a restarted consumer takes its partitions back without waiting for its old session to expire")
	maxRecords := fs.Int("max-records", 10000, "bronze: most events per commit")
	bronzeURI := fs.String("bronze", "", "silver: the bronze table")
	keys := fs.String("key", "", "silver: the source table's key columns, comma separated")
	poll := fs.Duration("poll", 200*time.Millisecond, "silver: how often a caught-up follower looks at bronze (doubling while idle, up to 8 times)")
	if err := fs.Parse(args[1:]); err != nil {
		return 2
	}
	if *table == "" || fs.NArg() > 0 || args[0] == "bronze" && *topics == "" || args[0] == "silver" && (*bronzeURI == "" || *keys == "") {
		fmt.Fprintln(stderr, usage)
		return 2
	}
	store, err := objstore.Open(ctx, *table)
	if err != nil {
		fmt.Fprintln(stderr, "cdcpipeline:", err)
		return 1
	}
	defer objstore.Close(store)
	if args[0] == "bronze" {
		err = runBronze(ctx, store, strings.Split(*brokers, ","), strings.Split(*topics, ","), *group, *instance, *app, *maxRecords, stdout)
	} else {
		var src objstore.Store
		if src, err = objstore.Open(ctx, *bronzeURI); err == nil {
			defer objstore.Close(src)
			err = runSilver(ctx, &silver{bronze: src, silver: store, keys: strings.Split(*keys, ","), app: *app, out: stdout}, *poll)
		}
	}
	if err != nil {
		fmt.Fprintln(stderr, "cdcpipeline:", err)
		return 1
	}
	return 0
}
