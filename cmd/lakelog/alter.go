package main

import (
	"context"
	"flag"
	"fmt"
	"strings"

	"github.com/lakelog/lakelog/maintenance"
)

func init() {
	registerVerb("alter", "alter TABLE [--set-property k=v]... [--unset-property k]...", runAlter)
}

// runAlter changes table properties: a SET TBLPROPERTIES commit, then an
// UNSET TBLPROPERTIES commit, for what each flag asks.
func runAlter(ctx context.Context, e *env, args []string) error {
	fs := flag.NewFlagSet("alter", flag.ContinueOnError)
	var set, unset multiFlag
	fs.Var(&set, "set-property", "set a table property, k=v (repeatable); delta.* properties are checked and may upgrade the protocol")
	fs.Var(&unset, "unset-property", "remove a table property (repeatable); it must be set")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("want one TABLE, got %d arguments", len(pos))
	}
	if len(set) == 0 && len(unset) == 0 {
		return usagef("give --set-property k=v or --unset-property k")
	}
	props := map[string]string{}
	for _, kv := range set {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || strings.TrimSpace(k) == "" {
			return usagef("--set-property %q: want key=value", kv)
		}
		props[strings.TrimSpace(k)] = v
	}
	snap, err := e.openSnapshot(ctx, pos[0])
	if err != nil {
		return err
	}
	if len(props) > 0 {
		res, err := maintenance.SetProperties(ctx, snap, props)
		if err != nil {
			return err
		}
		if err := res.WaitCheckpoint(); err != nil {
			fmt.Fprintf(e.stderr, "lakelog alter: warning: checkpoint: %v\n", err)
		}
		fmt.Fprintf(e.stdout, "version %d: set %d properties\n", res.Version, len(props))
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
		if err := res.WaitCheckpoint(); err != nil {
			fmt.Fprintf(e.stderr, "lakelog alter: warning: checkpoint: %v\n", err)
		}
		fmt.Fprintf(e.stdout, "version %d: unset %d properties\n", res.Version, len(unset))
	}
	return nil
}
