package main

import (
	"bufio"
	"context"
	"fmt"
	"iter"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/lakelog/lakelog/cdf"
	"github.com/lakelog/lakelog/expr"
)

func init() {
	register(&verb{
		name: "changes", section: sectionRead,
		args:    []arg{{name: "TABLE"}},
		summary: "the change data feed: every row inserted, deleted or updated in a range of versions, with _change_type, _commit_version and _commit_timestamp last",
		flags: []flagDef{
			{name: "from", kind: textFlag, arg: "V", help: "the first version of the range (0 or more); with --follow, latest starts after the latest version (the default)"},
			{name: "to", kind: versionFlag, arg: "V", help: "the last version of the range (default: the latest)"},
			{name: "from-timestamp", kind: timeFlag, help: "start at the first version committed at or after this time (lakelog help time)"},
			{name: "to-timestamp", kind: timeFlag, help: "end at the last version committed at or before this time (default: the latest version)"},
			{name: "where", kind: textFlag, arg: "PRED", help: "keep the change rows for which the predicate is true (table columns and _change_type, _commit_version, _commit_timestamp)"},
			{name: "columns", kind: listFlag, help: "print these table columns, comma-separated, in this order (the three change columns always follow)"},
			{name: "sorted", kind: boolFlag, help: "sort the output lines by their bytes (holds the output in memory)"},
			{name: "follow", kind: boolFlag, help: "go on printing the changes of each new version as it is committed, until interrupted (each batch of versions printed and flushed as one block)"},
		},
		groups:  []flagGroup{{alts: [][]string{{"from", "to"}, {"from-timestamp", "to-timestamp"}}}},
		formats: allFormats, progress: true,
		run: runChanges,
	})
}

// runChanges prints the table's change data feed over a range of versions
// or commit times: the (projected) table columns, then _change_type,
// _commit_version and _commit_timestamp. Rows come out as the files are
// read, in version order.
func runChanges(ctx context.Context, c *call) error {
	if c.on("follow") {
		return followChanges(ctx, c)
	}
	if !c.given("from") && !c.given("from-timestamp") {
		return usagef("give --from V or --from-timestamp T")
	}
	var bounds cdf.Bounds
	if c.given("from") {
		if strings.TrimSpace(c.raw("from")) == "latest" {
			return usagef("--from latest needs --follow (a range starts at a version)")
		}
		from, err := fromVersion(c.raw("from"))
		if err != nil {
			return err
		}
		to, toSet := c.number("to")
		if !toSet {
			to = -1
		} else if to < from {
			return usagef("--to %d is before --from %d", to, from)
		}
		bounds = cdf.Versions(from, to)
	} else {
		start, _ := c.when("from-timestamp") // the group requires one of them
		end, endSet := c.when("to-timestamp")
		if endSet && end.Before(start) {
			return usagef("--to-timestamp %s is before --from-timestamp %s", c.raw("to-timestamp"), c.raw("from-timestamp"))
		}
		bounds = cdf.Timestamps(start, end)
	}
	opts, err := feedOptions(c)
	if err != nil {
		return err
	}
	st, err := c.openStore(ctx, c.table())
	if err != nil {
		return err
	}
	feed, err := cdf.Open(ctx, st, "", bounds, opts...) // the store is rooted at the table
	if err != nil {
		return err
	}
	records := feed.Records(ctx)
	if !isTerminal(c.stdout) {
		if m := c.meter(); m != nil {
			records = versionProgress(m, feed, records)
			defer m.clear()
		}
	}
	return c.printRows(ctx, feed.Schema(), records)
}

// versionProgress passes the feed's batches on, reporting on m the
// versions done (those before the version of the latest batch) of the
// range, and the rows.
func versionProgress(m *meter, feed *cdf.Feed, in iter.Seq2[arrow.RecordBatch, error]) iter.Seq2[arrow.RecordBatch, error] {
	from, to := feed.Versions()
	return func(yield func(arrow.RecordBatch, error) bool) {
		var rows int64
		for rec, err := range in {
			if err == nil {
				rows += rec.NumRows()
				if idx := rec.Schema().FieldIndices("_commit_version"); len(idx) == 1 && rec.NumRows() > 0 {
					if v, ok := rec.Column(idx[0]).(*array.Int64); ok {
						m.set("changes: versions", v.Value(v.Len()-1)-from, to-from+1, "", fmt.Sprintf("%d rows", rows))
					}
				}
			}
			if !yield(rec, err) {
				return
			}
		}
	}
}

// fromVersion reads --from's version.
func fromVersion(s string) (int64, error) {
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	switch {
	case err != nil:
		return 0, usagef("--from %q: a version is a whole number, 0 or more", s)
	case n < 0:
		return 0, usagef("--from %q: a version is 0 or more", s)
	}
	return n, nil
}

// feedOptions are --where and --columns as feed options.
func feedOptions(c *call) ([]cdf.Option, error) {
	var opts []cdf.Option
	if where := c.text("where"); where != "" {
		pred, err := expr.Parse(where)
		if err != nil {
			return nil, fmt.Errorf("--where: %w", err)
		}
		opts = append(opts, cdf.WithFilter(pred))
	}
	if cols := c.list("columns"); cols != nil {
		opts = append(opts, cdf.WithColumns(cols...))
	}
	return opts, nil
}

// followChanges prints the changes of each new version as it is
// committed (cdf.Follow), from --from (a version, or latest: the
// default) or --from-timestamp, until interrupted. Each batch of versions
// is printed as one block in the --format and flushed: a table of its
// own, JSON Lines, a JSON array per batch, CSV with its header again only
// when the columns changed.
func followChanges(ctx context.Context, c *call) error {
	switch {
	case c.given("to") || c.given("to-timestamp"):
		return usagef("--follow has no end: leave out --to and --to-timestamp")
	case c.on("sorted"):
		return usagef("--follow prints changes as they come: --sorted cannot sort them")
	}
	start := cdf.Latest()
	if c.given("from") && strings.TrimSpace(c.raw("from")) != "latest" {
		v, err := fromVersion(c.raw("from"))
		if err != nil {
			return err
		}
		start = cdf.StartingVersion(v)
	} else if t, ok := c.when("from-timestamp"); ok {
		start = cdf.StartingTimestamp(t)
	}
	opts, err := feedOptions(c)
	if err != nil {
		return err
	}
	st, err := c.openStore(ctx, c.table())
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(c.stdout, 1<<16)
	var header *arrow.Schema // the CSV header printed last
	for b, err := range cdf.Follow(ctx, st, "", start, opts...) {
		if err != nil {
			if ctx.Err() != nil {
				return w.Flush() // interrupted: the end of the output
			}
			return err
		}
		out := newRowWriter(c.format)
		if cw, ok := out.(*csvWriter); ok && header != nil && header.Equal(b.Schema()) {
			cw.noHeader = true
		}
		out.start(w, b.Schema(), false)
		header = b.Schema()
		for rec, err := range b.Records(ctx) {
			if err != nil {
				if ctx.Err() != nil {
					return w.Flush()
				}
				return err
			}
			if err := out.write(rec); err != nil {
				return err
			}
		}
		if err := out.finish(); err != nil {
			return err
		}
		if err := w.Flush(); err != nil {
			return err
		}
	}
	return nil
}
