// Command maintain keeps a table in shape: many small appends compacted
// by OPTIMIZE, a column renamed (the table uses column mapping, so no
// file is rewritten), the table restored to an earlier version, and the
// files no version needs removed by VACUUM.
//
//	go run ./examples/maintain /tmp/metrics   # or s3://bucket/metrics
package main

import (
	"context"
	"fmt"
	"io"
	"log"
	"os"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lakelog/lakelog"
	"github.com/lakelog/lakelog/maintenance"
)

var metrics = arrow.NewSchema([]arrow.Field{{Name: "host", Type: arrow.BinaryTypes.String}, {Name: "cpu", Type: arrow.PrimitiveTypes.Float64}}, nil)

func run(ctx context.Context, uri string, out io.Writer) error {
	t, err := lakelog.Create(ctx, uri, metrics, lakelog.Properties(map[string]string{"delta.columnMapping.mode": "name"}))
	if err != nil {
		return err
	}
	for i := range 10 {
		rec, _, err := array.RecordFromJSON(memory.DefaultAllocator, metrics, strings.NewReader(fmt.Sprintf(`[{"host":"h%d","cpu":0.5}]`, i)))
		if err != nil {
			return err
		}
		_, err = t.Append(ctx, rec)
		rec.Release()
		if err != nil {
			return err
		}
	}
	steps := []struct {
		name string
		do   func() (*lakelog.Result, error)
	}{
		{"optimize", func() (*lakelog.Result, error) { return t.Optimize(ctx) }},
		{"rename cpu to cpu_load", func() (*lakelog.Result, error) { return t.RenameColumn(ctx, "cpu", "cpu_load") }},
		{"restore version 5", func() (*lakelog.Result, error) { return t.Restore(ctx, maintenance.ToVersion(5)) }},
		{"vacuum", func() (*lakelog.Result, error) { return t.Vacuum(ctx, maintenance.Retain(0), maintenance.Force()) }},
	}
	for _, s := range steps {
		res, err := s.do()
		if err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
		sc, err := t.Scan()
		if err != nil {
			return err
		}
		files := 0
		for _, err := range sc.Files(ctx) {
			if err != nil {
				return err
			}
			files++
		}
		sch, err := t.Schema()
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "%s: version %d, %d files, columns %s,%s, metrics %v\n", s.name, t.Version(), files,
			sch.Field(0).Name, sch.Field(1).Name, res.Metrics["numRemovedFiles"]+res.Metrics["numDeletedFiles"])
	}
	return nil
}

func main() {
	if len(os.Args) != 2 {
		log.Fatal("usage: maintain TABLE_URI")
	}
	if err := run(context.Background(), os.Args[1], os.Stdout); err != nil {
		log.Fatal(err)
	}
}
