package main

import (
	"context"
	"fmt"

	"github.com/lakelog/lakelog/cdf"
	"github.com/lakelog/lakelog/expr"
)

func init() {
	register(&verb{
		name: "changes", section: sectionRead,
		args:    []arg{{name: "TABLE"}},
		summary: "the change data feed: every row inserted, deleted or updated in a range of versions, with _change_type, _commit_version and _commit_timestamp last",
		flags: []flagDef{
			{name: "from", kind: versionFlag, arg: "V", help: "the first version of the range (0 or more)"},
			{name: "to", kind: versionFlag, arg: "V", help: "the last version of the range (default: the latest)"},
			{name: "from-timestamp", kind: timeFlag, help: "start at the first version committed at or after this time (lakelog help time)"},
			{name: "to-timestamp", kind: timeFlag, help: "end at the last version committed at or before this time (default: the latest version)"},
			{name: "where", kind: textFlag, arg: "PRED", help: "keep the change rows for which the predicate is true (table columns and _change_type, _commit_version, _commit_timestamp)"},
			{name: "columns", kind: listFlag, help: "print these table columns, comma-separated, in this order (the three change columns always follow)"},
			{name: "sorted", kind: boolFlag, help: "sort the output lines by their bytes (holds the output in memory)"},
		},
		groups:  []flagGroup{{alts: [][]string{{"from", "to"}, {"from-timestamp", "to-timestamp"}}, required: true}},
		formats: allFormats,
		run:     runChanges,
	})
}

// runChanges prints the table's change data feed over a range of versions
// or commit times: the (projected) table columns, then _change_type,
// _commit_version and _commit_timestamp. Rows come out as the files are
// read, in version order.
func runChanges(ctx context.Context, c *call) error {
	var bounds cdf.Bounds
	if from, ok := c.number("from"); ok {
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
	var opts []cdf.Option
	if where := c.text("where"); where != "" {
		pred, err := expr.Parse(where)
		if err != nil {
			return fmt.Errorf("--where: %w", err)
		}
		opts = append(opts, cdf.WithFilter(pred))
	}
	if cols := c.list("columns"); cols != nil {
		opts = append(opts, cdf.WithColumns(cols...))
	}
	st, err := c.openStore(ctx, c.table())
	if err != nil {
		return err
	}
	feed, err := cdf.Open(ctx, st, "", bounds, opts...) // the store is rooted at the table
	if err != nil {
		return err
	}
	return c.printRows(ctx, feed.Schema(), feed.Records(ctx))
}
