package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"

	"github.com/lakelog/lakelog/cdc"
)

func init() {
	register(&verb{
		name: "cdc", section: sectionOther,
		args:    []arg{{name: "ACTION"}},
		summary: "a change data capture pipeline from Debezium's Kafka topics: run runs bronze and silver for each table of --config until interrupted (stages restarted with backoff, both tables auto-compacted, silver vacuumed on an interval, logs with timestamps on stderr); status reports each table's Kafka offsets, source position, bronze and silver versions and their lag",
		flags: []flagDef{
			{name: "config", kind: textFlag, arg: "FILE", help: "the pipeline's configuration (pipeline.yaml: brokers, connect, connector, variable_numeric, auto_compact, deletion_vectors, properties, vacuum, tables of topic, bronze, silver, key)"},
		},
		formats: []string{formatTable, formatJSON},
		run:     runCDC,
	})
}

func runCDC(ctx context.Context, c *call) error {
	if !c.given("config") {
		return usagef("give --config FILE")
	}
	cfg, err := cdc.LoadConfig(c.raw("config"))
	if err != nil {
		return err
	}
	switch c.args[0] {
	case "run":
		log := slog.New(slog.NewTextHandler(c.stderr, nil))
		log.Info("pipeline starting", "tables", len(cfg.Tables))
		return cdc.Run(ctx, cfg, log)
	case "status":
		st, err := cdc.Status(ctx, cfg)
		if err != nil {
			return err
		}
		return c.report(struct {
			Tables []cdc.TableStatus `json:"tables"`
		}{st}, func(w io.Writer) { printStatus(w, st) })
	}
	return usagef("ACTION is run or status, not %q", c.args[0])
}

func printStatus(w io.Writer, st []cdc.TableStatus) {
	for _, t := range st {
		fmt.Fprintf(w, "%s\n", t.Topic)
		var parts []string
		for _, p := range sortedPartitions(t.KafkaEnd) {
			parts = append(parts, fmt.Sprintf("%d: end %d, bronze %d", p, t.KafkaEnd[p], t.BronzeOffset[p]))
		}
		fmt.Fprintf(w, "  kafka     %s; %d events to land\n", strings.Join(parts, "; "), t.LagEvents)
		var pos []string
		for p, v := range t.SourcePosition {
			pos = append(pos, p+": "+v)
		}
		slices.Sort(pos)
		fmt.Fprintf(w, "  source    %s\n", strings.Join(pos, "; "))
		fmt.Fprintf(w, "  bronze    version %d (%s)\n", t.BronzeVersion, t.BronzeTime.UTC().Format("2006-01-02 15:04:05Z"))
		fmt.Fprintf(w, "  silver    version %d, at bronze version %d; %d versions to apply, %.1f s behind\n", t.SilverVersion, t.SilverBronzeVersion, t.LagVersions, t.LagSeconds)
	}
}

func sortedPartitions(m map[int32]int64) []int32 {
	var out []int32
	for p := range m {
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}
