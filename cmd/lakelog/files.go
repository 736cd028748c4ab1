package main

import (
	"context"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/deltalog"
)

func init() {
	register(&verb{
		name: "files", section: sectionRead,
		args:    []arg{{name: "TABLE"}},
		summary: "the live data files: path, size, partition values, rows, rows deleted by deletion vectors",
		travel:  travelRead,
		formats: allFormats,
		run:     runFiles,
	})
}

// fileEntry is one file of files' record formats.
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
func runFiles(ctx context.Context, c *call) error {
	// One pass over the checkpoint with the stats (the row counts); the
	// files are read from the snapshot's columns.
	snap, err := c.openSnapshot(ctx, c.table(), append(c.at(), deltalog.WithStats())...)
	if err != nil {
		return err
	}
	parts := snap.PartitionColumns()
	// The log keys partition values by physical name (a column-mapped
	// table's differ from the columns' names); print them by name.
	cfg := snap.Config()
	physical := make([]string, len(parts))
	for i, p := range parts {
		physical[i] = p
		if f := snap.Schema().FieldFold(p); f != nil {
			physical[i] = cfg.PhysicalName(f)
		}
	}
	out := newRecordWriter(c.stdout, c.format, fileEntry{},
		jsonKeys(reflect.TypeOf(fileEntry{})), // the columns of every format have the same names
		[]cellKind{textCell, numberCell, textCell, numberCell, numberCell, wordCell},
		func(v any) []string {
			fe := v.(fileEntry)
			rows := "NULL"
			if fe.NumRecords != nil {
				rows = strconv.FormatInt(*fe.NumRecords, 10)
			}
			return []string{fe.Path, strconv.FormatInt(fe.Size, 10), partitionText(parts, fe.PartitionValues), rows,
				strconv.FormatInt(fe.DeletedRows, 10), time.UnixMilli(fe.ModificationTime).UTC().Format("2006-01-02T15:04:05.000Z")}
		})
	for _, f := range snap.ActiveFiles().All() {
		fe := fileEntry{Path: f.Path(), Size: f.Size(), PartitionValues: make(map[string]*string, len(parts)), ModificationTime: f.ModificationTime()}
		pv := f.PartitionValues()
		for i, p := range parts {
			fe.PartitionValues[p] = pv[physical[i]]
		}
		if n, ok := f.NumRecords(); ok {
			fe.NumRecords = &n
		} else if js := f.StatsJSON(f.Row); js != "" {
			if _, err := actions.ParseStats(js); err != nil {
				return fmt.Errorf("files: %s: stats: %w", fe.Path, err)
			}
		}
		fe.DeletedRows = f.DeletedRows()
		if err := out.write(fe); err != nil {
			return err
		}
	}
	return out.finish(false)
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
