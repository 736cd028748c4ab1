package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/deltalog"
)

func init() {
	registerVerb("files", "files TABLE [--version N | --timestamp T] [--format table|jsonl]", runFiles)
}

// fileEntry is one line of files --format jsonl.
type fileEntry struct {
	Path            string             `json:"path"`
	Size            int64              `json:"size"`
	PartitionValues map[string]*string `json:"partitionValues"`
	// NumRecords is the file's row count from its statistics (null when
	// it has none), before its deletion vector.
	NumRecords *int64 `json:"numRecords"`
	// DeletedRows is the deletion vector's cardinality (0 without one).
	DeletedRows      int64 `json:"deletedRows"`
	ModificationTime int64 `json:"modificationTime"`
}

// runFiles lists the live files of a version: path, size, partition
// values, row count and deletion vector cardinality.
func runFiles(ctx context.Context, e *env, args []string) error {
	fs := flag.NewFlagSet("files", flag.ContinueOnError)
	tt := timeTravelFlags(fs)
	format := fs.String("format", "table", "table or jsonl")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("want one TABLE, got %d arguments", len(pos))
	}
	if *format != "table" && *format != "jsonl" {
		return usagef("--format %q: want table or jsonl", *format)
	}
	opts, err := tt()
	if err != nil {
		return err
	}
	// One pass over the checkpoint with the stats (the row counts), and
	// the files read from the snapshot's columns.
	snap, err := e.openSnapshot(ctx, pos[0], append(opts, deltalog.WithStats())...)
	if err != nil {
		return err
	}
	var entries []fileEntry
	for _, f := range snap.ActiveFiles().All() {
		fe := fileEntry{Path: f.Path(), Size: f.Size(), PartitionValues: f.PartitionValues(), ModificationTime: f.ModificationTime()}
		if fe.PartitionValues == nil {
			fe.PartitionValues = map[string]*string{}
		}
		if n, ok := f.NumRecords(); ok {
			fe.NumRecords = &n
		} else if js := f.StatsJSON(f.Row); js != "" {
			if _, err := actions.ParseStats(js); err != nil {
				return fmt.Errorf("files: %s: stats: %w", fe.Path, err)
			}
		}
		fe.DeletedRows = f.DeletedRows()
		entries = append(entries, fe)
	}
	if *format == "jsonl" {
		enc := json.NewEncoder(e.stdout)
		for _, fe := range entries {
			if err := enc.Encode(fe); err != nil {
				return err
			}
		}
		return nil
	}
	w := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "path\tsize\tpartition\trows\tdeleted")
	for _, fe := range entries {
		rows := "?"
		if fe.NumRecords != nil {
			rows = fmt.Sprint(*fe.NumRecords)
		}
		fmt.Fprintf(w, "%s\t%d\t%s\t%s\t%d\n", fe.Path, fe.Size, partitionText(snap.PartitionColumns(), fe.PartitionValues), rows, fe.DeletedRows)
	}
	return w.Flush()
}

// partitionText is a file's partition values in the table's column order:
// a=1/b=null.
func partitionText(cols []string, pv map[string]*string) string {
	if len(cols) == 0 {
		return "-"
	}
	parts := make([]string, 0, len(cols))
	for _, c := range cols {
		v := "null"
		if s := pv[c]; s != nil {
			v = *s
		}
		parts = append(parts, c+"="+v)
	}
	return strings.Join(parts, "/")
}
