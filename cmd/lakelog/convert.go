package main

import (
	"context"
	"fmt"
	"io"
	"strconv"

	"github.com/lakelog/lakelog/convert"
)

func init() {
	register(&verb{
		name: "convert", section: sectionWrite,
		args:    []arg{{name: "PATH"}},
		summary: "make a folder of Parquet files a Delta table in place, in one commit, copying no data (Spark's CONVERT TO DELTA)",
		flags: []flagDef{
			{name: "partition-by", kind: textFlag, arg: "'p string, ...'", help: "the partition columns and their types, in the order of the folders p=v/ (DDL, lakelog help types)"},
			{name: "property", kind: propertyFlag, help: "a table property of the new table"},
			{name: "no-statistics", kind: boolFlag, help: "add the files without stats (Spark's NO STATISTICS)"},
		},
		formats: allFormats, progress: true,
		more: "The schema is merged from the files' footers and the stats come from them; no data is read. " +
			"Names starting with _ or . are skipped (unless they hold =), as Spark skips them. " +
			"A file that is not Parquet, schemas that do not merge or folders that do not match --partition-by are refused, naming the file, and nothing is written. " +
			"On a folder that already is a Delta table it does nothing.",
		run: runConvert,
	})
}

func runConvert(ctx context.Context, c *call) error {
	var opts []convert.Option
	if p := c.text("partition-by"); p != "" {
		ps, err := parseSchemaArg(p)
		if err != nil {
			return usagef("--partition-by: %v", err)
		}
		opts = append(opts, convert.PartitionBy(ps))
	}
	if props := c.properties("property"); len(props) > 0 {
		opts = append(opts, convert.WithProperties(props))
	}
	if c.on("no-statistics") {
		opts = append(opts, convert.NoStatistics())
	}
	st, err := c.openStore(ctx, c.table())
	if err != nil {
		return err
	}
	progress, clear := c.progressTo("convert: footers read")
	if progress != nil {
		opts = append(opts, convert.WithProgress(progress))
	}
	res, err := convert.ToDelta(ctx, st, "", opts...)
	clear()
	if err != nil {
		return err
	}
	if res.AlreadyDelta {
		return c.report(newOpResult("CONVERT", nil, map[string]any{"numConvertedFiles": "0"}), func(w io.Writer) {
			fmt.Fprintf(w, "%s is already a Delta table (version %d); nothing converted\n", c.table(), res.Version)
		})
	}
	c.waitHooks(res.Commit)
	metrics := map[string]any{"numConvertedFiles": strconv.Itoa(res.Files)}
	return c.report(newOpResult("CONVERT", res.Commit, metrics), func(w io.Writer) {
		fmt.Fprintf(w, "converted %s: %d files (%s, %d rows) at version %d; %d hidden files skipped\n",
			c.table(), res.Files, humanBytes(res.Bytes), res.Rows, res.Version, res.Skipped)
	})
}
