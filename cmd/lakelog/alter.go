package main

import (
	"context"
	"fmt"
	"io"

	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/maintenance"
)

func init() {
	register(&verb{
		name: "alter", section: sectionWrite,
		args:    []arg{{name: "TABLE"}},
		summary: "set or unset table properties",
		flags: []flagDef{
			{name: "set-property", kind: propertyFlag, help: "set a table property; delta.* properties are checked and may upgrade the protocol"},
			{name: "unset-property", kind: repeatFlag, arg: "k", help: "remove a table property; it must be set"},
		},
		formats: allFormats,
		run:     runAlter,
	})
}

// runAlter changes table properties: a SET TBLPROPERTIES commit, then an
// UNSET TBLPROPERTIES commit, for what each flag asks.
func runAlter(ctx context.Context, c *call) error {
	props, unset := c.properties("set-property"), c.list("unset-property")
	if len(props) == 0 && len(unset) == 0 {
		return usagef("give --set-property k=v or --unset-property k")
	}
	snap, err := c.snapshot(ctx)
	if err != nil {
		return err
	}
	var results []*deltalog.CommitResult
	if len(props) > 0 {
		res, err := maintenance.SetProperties(ctx, snap, props)
		if err != nil {
			return err
		}
		c.waitCheckpoint(res)
		results = append(results, res)
		if len(unset) > 0 {
			if snap, err = res.Snapshot(); err != nil {
				return err
			}
		}
	}
	if len(unset) > 0 {
		res, err := maintenance.UnsetProperties(ctx, snap, unset)
		if err != nil {
			return err
		}
		c.waitCheckpoint(res)
		results = append(results, res)
	}
	last := results[len(results)-1]
	return c.report(newOpResult("SET TBLPROPERTIES", last, nil), func(w io.Writer) {
		for i, res := range results {
			if i == 0 && len(props) > 0 {
				fmt.Fprintf(w, "version %d: set %d properties\n", res.Version, len(props))
			} else {
				fmt.Fprintf(w, "version %d: unset %d properties\n", res.Version, len(unset))
			}
		}
	})
}
