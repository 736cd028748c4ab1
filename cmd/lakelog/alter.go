package main

import (
	"context"
	"fmt"
	"io"

	"github.com/lakelog/lakelog/maintenance"
)

func init() {
	register(&verb{
		name: "alter", section: sectionWrite,
		args:    []arg{{name: "TABLE"}},
		summary: "set or unset table properties, in one commit",
		flags: []flagDef{
			{name: "set-property", kind: propertyFlag, help: "set a table property; delta.* properties are checked and may upgrade the protocol"},
			{name: "unset-property", kind: repeatFlag, arg: "k", help: "remove a table property; it must be set"},
		},
		formats: allFormats,
		run:     runAlter,
	})
}

// runAlter changes table properties in one commit (or none).
func runAlter(ctx context.Context, c *call) error {
	props, unset := c.properties("set-property"), c.list("unset-property")
	if len(props) == 0 && len(unset) == 0 {
		return usagef("give --set-property k=v or --unset-property k")
	}
	snap, err := c.snapshot(ctx)
	if err != nil {
		return err
	}
	res, err := maintenance.AlterProperties(ctx, snap, props, unset)
	if err != nil {
		return err
	}
	c.waitCheckpoint(res)
	op := "SET TBLPROPERTIES"
	if len(props) == 0 {
		op = "UNSET TBLPROPERTIES"
	}
	return c.report(newOpResult(op, res, nil), func(w io.Writer) {
		switch {
		case len(unset) == 0:
			fmt.Fprintf(w, "version %d: set %d properties\n", res.Version, len(props))
		case len(props) == 0:
			fmt.Fprintf(w, "version %d: unset %d properties\n", res.Version, len(unset))
		default:
			fmt.Fprintf(w, "version %d: set %d and unset %d properties\n", res.Version, len(props), len(unset))
		}
	})
}
