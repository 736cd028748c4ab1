package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"time"

	"github.com/lakelog/lakelog/cdf"
	"github.com/lakelog/lakelog/expr"
)

func init() {
	registerVerb("changes", "changes TABLE (--from V [--to V] | --from-timestamp T [--to-timestamp T]) [--where PRED] [--columns a,b] [--format table|jsonl|csv] [--sorted]", runChanges)
}

// runChanges prints the table's change data feed over a range of versions
// or commit times: the (projected) table columns, then _change_type,
// _commit_version and _commit_timestamp. Rows come out as the files are
// read, in version order.
func runChanges(ctx context.Context, e *env, args []string) error {
	fs := flag.NewFlagSet("changes", flag.ContinueOnError)
	from := fs.Int64("from", -1, "the first version of the range (0 or more)")
	to := fs.Int64("to", -1, "the last version of the range (default: the latest)")
	fromTS := fs.String("from-timestamp", "", "start at the first version committed at or after this time (RFC 3339, 'YYYY-MM-DD[ HH:MM:SS]' UTC, or epoch milliseconds)")
	toTS := fs.String("to-timestamp", "", "end at the last version committed at or before this time (default: the latest version)")
	where := fs.String("where", "", "keep the change rows for which the predicate is true (table columns and _change_type, _commit_version, _commit_timestamp)")
	columns := fs.String("columns", "", "print these table columns, comma-separated, in this order (the three change columns always follow)")
	format := fs.String("format", "table", "table, jsonl or csv")
	sorted := fs.Bool("sorted", false, "sort the output lines by their bytes (holds the output in memory)")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("want one TABLE, got %d arguments", len(pos))
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	var bounds cdf.Bounds
	switch {
	case set["from"] && (set["from-timestamp"] || set["to-timestamp"]):
		return usagef("give --from/--to or --from-timestamp/--to-timestamp, not both")
	case set["from"]:
		if *from < 0 {
			return usagef("--from %d: a version is 0 or more", *from)
		}
		if set["to"] && *to < *from {
			return usagef("--to %d is before --from %d", *to, *from)
		}
		bounds = cdf.Versions(*from, *to)
	case set["to"]:
		return usagef("--to needs --from")
	case set["from-timestamp"]:
		start, err := parseTime(*fromTS)
		if err != nil {
			return usagef("--from-timestamp %q: %v", *fromTS, err)
		}
		var end time.Time
		if set["to-timestamp"] {
			if end, err = parseTime(*toTS); err != nil {
				return usagef("--to-timestamp %q: %v", *toTS, err)
			}
			if end.Before(start) {
				return usagef("--to-timestamp %s is before --from-timestamp %s", *toTS, *fromTS)
			}
		}
		bounds = cdf.Timestamps(start, end)
	case set["to-timestamp"]:
		return usagef("--to-timestamp needs --from-timestamp")
	default:
		return usagef("give --from V or --from-timestamp T")
	}
	out, err := newRowWriter(*format)
	if err != nil {
		return err
	}
	var opts []cdf.Option
	if *where != "" {
		pred, err := expr.Parse(*where)
		if err != nil {
			return fmt.Errorf("--where: %w", err)
		}
		opts = append(opts, cdf.WithFilter(pred))
	}
	if *columns != "" {
		cols := splitList(*columns)
		if len(cols) == 0 {
			return usagef("--columns %q: name at least one column", *columns)
		}
		opts = append(opts, cdf.WithColumns(cols...))
	}
	st, err := e.openStore(ctx, pos[0])
	if err != nil {
		return err
	}
	feed, err := cdf.Open(ctx, st, "", bounds, opts...) // the store is rooted at the table
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(e.stdout, 1<<16)
	out.start(w, feed.Schema(), *sorted)
	for rec, err := range feed.Records(ctx) {
		if err != nil {
			w.Flush()
			return err
		}
		if err := out.write(rec); err != nil {
			return err
		}
	}
	if err := out.finish(); err != nil {
		return err
	}
	return w.Flush()
}
