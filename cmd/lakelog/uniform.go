package main

import (
	"context"
	"fmt"
	"io"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/uniform"
)

func init() {
	register(&verb{
		name: "uniform", section: sectionMaintain,
		args:    []arg{{name: "sync"}, {name: "TABLE"}},
		summary: "write the Iceberg metadata of a UniForm table (delta.universalFormat.enabledFormats=iceberg) up to its latest version; every write verb does it after its commit",
		flags: []flagDef{
			{name: "max-commits", kind: countFlag, help: "convert at most N commits one by one; a larger gap is converted from the snapshot (default 100)"},
		},
		formats: allFormats,
		run:     runUniform,
	})
}

// uniformResult is `lakelog uniform sync`'s output.
type uniformResult struct {
	From             int64  `json:"fromVersion"`
	To               int64  `json:"toVersion"`
	Snapshots        int    `json:"icebergSnapshots"`
	Full             bool   `json:"full"`
	MetadataLocation string `json:"metadataLocation"`
}

func runUniform(ctx context.Context, c *call) error {
	if c.args[0] != "sync" {
		return usagef("unknown uniform action %q (the action is sync)", c.args[0])
	}
	st, err := c.openStore(ctx, c.args[1])
	if err != nil {
		return err
	}
	var opts []uniform.Option
	if n, ok := c.values["max-commits"].(int64); ok {
		opts = append(opts, uniform.WithMaxCommits(int(n)))
	}
	res, err := uniform.Sync(ctx, st, "", opts...)
	if err != nil {
		return err
	}
	out := uniformResult{From: res.From, To: res.To, Snapshots: res.Snapshots, Full: res.Full, MetadataLocation: res.MetadataLocation}
	return c.report(out, func(w io.Writer) {
		if res.MetadataLocation == "" {
			fmt.Fprintf(w, "Iceberg metadata already at version %d\n", res.To)
			return
		}
		fmt.Fprintf(w, "Iceberg metadata at version %d (from %d, %d snapshots): %s\n", res.To, res.From, res.Snapshots, res.MetadataLocation)
	})
}

// uniformProperties are what `create --uniform iceberg` sets: column
// mapping by name (unless set), IcebergCompatV2 and the format.
func uniformProperties(conf map[string]string) {
	if _, ok := conf[actions.PropColumnMappingMode]; !ok {
		conf[actions.PropColumnMappingMode] = actions.ColumnMappingName
	}
	conf[actions.PropEnableIcebergCompatV2] = "true"
	conf[actions.PropUniversalFormatEnabledFormats] = "iceberg"
}
