package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"maps"
	"os"
	"slices"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/dml"
	"github.com/lakelog/lakelog/expr"
	"github.com/lakelog/lakelog/writer/input"
)

func init() {
	registerVerb("delete", "delete TABLE --where PRED [--no-deletion-vectors] [--format table|jsonl]", runDelete)
	registerVerb("update", "update TABLE --set 'col = EXPR'... [--where PRED] [--no-deletion-vectors] [--format table|jsonl]", runUpdate)
	registerVerb("merge", "merge TABLE SOURCE_FILE --on 'target.k = source.k' [--when-matched-update-all] [--when-matched-delete] "+
		"[--when-not-matched-insert-all] [--when-not-matched-by-source-delete] [--matched-condition PRED] [--not-matched-condition PRED] "+
		"[--not-matched-by-source-condition PRED] [--no-deletion-vectors] [--format table|jsonl]   (SOURCE_FILE: .jsonl/.ndjson, .csv with a header row, .parquet)", runMerge)
}

// dmlFlags are the flags DELETE, UPDATE and MERGE share.
type dmlFlags struct {
	noDV   *bool
	format *string
}

func newDMLFlags(fs *flag.FlagSet) *dmlFlags {
	return &dmlFlags{
		noDV:   fs.Bool("no-deletion-vectors", false, "rewrite the touched files (copy-on-write) even where the table enables deletion vectors"),
		format: fs.String("format", "table", "table (one 'name value' line per metric) or jsonl (one JSON object)"),
	}
}

func (f *dmlFlags) check() error {
	if *f.format != "table" && *f.format != "jsonl" {
		return usagef("--format %q: want table or jsonl", *f.format)
	}
	return nil
}

func (f *dmlFlags) options() []dml.Option {
	if *f.noDV {
		return []dml.Option{dml.WithoutDeletionVectors()}
	}
	return nil
}

// runDelete is DELETE FROM TABLE WHERE PRED.
func runDelete(ctx context.Context, e *env, args []string) error {
	fs := flag.NewFlagSet("delete", flag.ContinueOnError)
	where := fs.String("where", "", "delete the rows for which the predicate is true (required; --where true deletes every row)")
	df := newDMLFlags(fs)
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("want one TABLE, got %d arguments", len(pos))
	}
	if *where == "" {
		return usagef("--where is required (--where true deletes every row)")
	}
	if err := df.check(); err != nil {
		return err
	}
	snap, err := e.openSnapshot(ctx, pos[0])
	if err != nil {
		return err
	}
	pred, err := parseWhere(*where, snap.Schema())
	if err != nil {
		return err
	}
	res, err := dml.Delete(ctx, snap, pred, df.options()...)
	if err != nil {
		return err
	}
	return printDMLResult(e, "delete", "DELETE", *df.format, res)
}

// runUpdate is UPDATE TABLE SET col = EXPR, ... [WHERE PRED].
func runUpdate(ctx context.Context, e *env, args []string) error {
	fs := flag.NewFlagSet("update", flag.ContinueOnError)
	var sets multiFlag
	fs.Var(&sets, "set", "an assignment 'col = EXPR' (repeat for more columns); EXPR may use the row's columns: 'amount = amount * 2'")
	where := fs.String("where", "", "update the rows for which the predicate is true (default: every row)")
	df := newDMLFlags(fs)
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("want one TABLE, got %d arguments", len(pos))
	}
	if len(sets) == 0 {
		return usagef("--set 'col = EXPR' is required")
	}
	if err := df.check(); err != nil {
		return err
	}
	assign := make([]*expr.Assignment, len(sets))
	for i, s := range sets {
		if assign[i], err = expr.ParseAssignment(s); err != nil {
			return fmt.Errorf("--set %q: %w", s, err)
		}
	}
	snap, err := e.openSnapshot(ctx, pos[0])
	if err != nil {
		return err
	}
	var pred expr.Expr
	if *where != "" {
		if pred, err = parseWhere(*where, snap.Schema()); err != nil {
			return err
		}
	}
	res, err := dml.Update(ctx, snap, pred, assign, df.options()...)
	if err != nil {
		return err
	}
	return printDMLResult(e, "update", "UPDATE", *df.format, res)
}

// runMerge is MERGE INTO TABLE AS target USING SOURCE_FILE AS source ON ...
// with the clauses its flags name.
func runMerge(ctx context.Context, e *env, args []string) error {
	fs := flag.NewFlagSet("merge", flag.ContinueOnError)
	on := fs.String("on", "", "the join condition, with at least one equality of a target and a source column: 'target.id = source.id' (required)")
	matchedUpdateAll := fs.Bool("when-matched-update-all", false, "WHEN MATCHED THEN UPDATE SET *: a matched row takes the source row's values")
	matchedDelete := fs.Bool("when-matched-delete", false, "WHEN MATCHED THEN DELETE: a matched row is deleted (before --when-matched-update-all, whose rows are then the ones --matched-condition leaves)")
	insertAll := fs.Bool("when-not-matched-insert-all", false, "WHEN NOT MATCHED THEN INSERT *: a source row that matches no row is inserted")
	bySourceDelete := fs.Bool("when-not-matched-by-source-delete", false, "WHEN NOT MATCHED BY SOURCE THEN DELETE: a row that no source row matches is deleted")
	matchedCond := fs.String("matched-condition", "", "AND condition of the first WHEN MATCHED clause (the DELETE when both are given): 'source.op = ''delete'''")
	notMatchedCond := fs.String("not-matched-condition", "", "AND condition of the WHEN NOT MATCHED clause: 'source.op <> ''delete'''")
	bySourceCond := fs.String("not-matched-by-source-condition", "", "AND condition of the WHEN NOT MATCHED BY SOURCE clause: 'target.day < ''2026-01-01'''")
	df := newDMLFlags(fs)
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 2 {
		return usagef("want TABLE and SOURCE_FILE, got %d arguments", len(pos))
	}
	if *on == "" {
		return usagef("--on is required ('target.k = source.k')")
	}
	if err := df.check(); err != nil {
		return err
	}
	switch {
	case !*matchedUpdateAll && !*matchedDelete && !*insertAll && !*bySourceDelete:
		return usagef("name at least one clause: --when-matched-update-all, --when-matched-delete, --when-not-matched-insert-all or --when-not-matched-by-source-delete")
	case *matchedUpdateAll && *matchedDelete && *matchedCond == "":
		return usagef("--when-matched-delete with --when-matched-update-all needs --matched-condition (the DELETE's): without it the UPDATE would never act")
	case *matchedCond != "" && !*matchedUpdateAll && !*matchedDelete:
		return usagef("--matched-condition without --when-matched-update-all or --when-matched-delete")
	case *notMatchedCond != "" && !*insertAll:
		return usagef("--not-matched-condition without --when-not-matched-insert-all")
	case *bySourceCond != "" && !*bySourceDelete:
		return usagef("--not-matched-by-source-condition without --when-not-matched-by-source-delete")
	}
	onExpr, err := parseFlagExpr("--on", *on)
	if err != nil {
		return err
	}
	conds := map[string]expr.Expr{}
	for name, text := range map[string]string{"--matched-condition": *matchedCond, "--not-matched-condition": *notMatchedCond, "--not-matched-by-source-condition": *bySourceCond} {
		if text != "" {
			if conds[name], err = parseFlagExpr(name, text); err != nil {
				return err
			}
		}
	}
	var clauses []dml.Clause
	if *matchedDelete {
		clauses = append(clauses, dml.WhenMatchedDelete(conds["--matched-condition"]))
	}
	if *matchedUpdateAll {
		var cond expr.Expr
		if !*matchedDelete {
			cond = conds["--matched-condition"]
		}
		clauses = append(clauses, dml.WhenMatchedUpdateAll(cond))
	}
	if *insertAll {
		clauses = append(clauses, dml.WhenNotMatchedInsertAll(conds["--not-matched-condition"]))
	}
	if *bySourceDelete {
		clauses = append(clauses, dml.WhenNotMatchedBySourceDelete(conds["--not-matched-by-source-condition"]))
	}
	file := pos[1]
	if _, err := input.FormatOf(file); err != nil {
		return err
	}
	if _, err := os.Stat(file); err != nil {
		return &input.Error{File: file, Msg: "cannot read: " + errText(err), Err: err}
	}
	snap, err := e.openSnapshot(ctx, pos[0])
	if err != nil {
		return err
	}
	schema, err := mergeSourceSchema(ctx, snap.Schema(), file)
	if err != nil {
		return err
	}
	res, err := dml.Merge(ctx, snap, input.ReadFile(ctx, file, schema), onExpr, clauses, df.options()...)
	if errors.Is(err, dml.ErrDuplicateMatch) {
		return fmt.Errorf("%s: %w", file, err) // its source rows are the file's rows, in order
	}
	if err != nil {
		return err
	}
	return printDMLResult(e, "merge", "MERGE", *df.format, res)
}

// parseFlagExpr parses a flag's expression; errors name the flag.
func parseFlagExpr(flagName, text string) (expr.Expr, error) {
	x, err := expr.Parse(text)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", flagName, err)
	}
	return x, nil
}

// mergeSourceSchema is the schema a MERGE source file is decoded with:
// exactly the columns the file holds, in its order; a column the table
// has takes the table's type (so that keys and values line up), others
// the type input.MergeSchema infers. Every column is nullable: a source
// row's nulls matter only where they are written. A table column the
// file lacks is absent, not null, so that UPDATE SET * and INSERT * say
// so instead of writing nulls.
func mergeSourceSchema(ctx context.Context, table *actions.StructType, file string) (*actions.StructType, error) {
	names, err := input.Columns(ctx, file)
	if err != nil {
		return nil, err
	}
	wide := table
	if slices.ContainsFunc(names, func(n string) bool { return table.FieldFold(n) == nil }) {
		// Columns the table lacks: infer their types (another pass over
		// a JSONL file).
		if wide, err = input.MergeSchema(ctx, table, []string{file}); err != nil {
			return nil, err
		}
	}
	out := &actions.StructType{}
	for _, n := range names {
		f := wide.FieldFold(n)
		if f == nil { // cannot happen: MergeSchema adds every column
			return nil, &input.Error{File: file, Column: n, Msg: "no type for the column"}
		}
		c := *f
		c.Nullable = true
		out.Fields = append(out.Fields, &c)
	}
	if len(out.Fields) == 0 {
		return nil, &input.Error{File: file, Msg: "holds no columns (an empty MERGE source)"}
	}
	return out, nil
}

// printDMLResult prints an operation's metrics and the version it
// committed, or that nothing matched.
//
// table:  "DELETE: version 3" (or "DELETE: nothing matched; no version
// was committed"), then one "name value" line per metric, sorted.
// jsonl:  {"operation":"DELETE","version":3,"operationMetrics":{...}},
// version null when nothing was committed.
func printDMLResult(e *env, verbName, op, format string, res *dml.Result) error {
	committed := res.CommitResult != nil
	if format == "jsonl" {
		out := struct {
			Operation string           `json:"operation"`
			Version   *int64           `json:"version"`
			Metrics   map[string]int64 `json:"operationMetrics"`
		}{Operation: op, Metrics: res.Metrics}
		if committed {
			out.Version = &res.Version
		}
		if out.Metrics == nil {
			out.Metrics = map[string]int64{}
		}
		b, err := json.Marshal(out)
		if err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "%s\n", b)
	} else {
		if committed {
			fmt.Fprintf(e.stdout, "%s: version %d\n", op, res.Version)
		} else {
			fmt.Fprintf(e.stdout, "%s: nothing matched; no version was committed\n", op)
		}
		for _, n := range slices.Sorted(maps.Keys(res.Metrics)) {
			fmt.Fprintf(e.stdout, "%s %d\n", n, res.Metrics[n])
		}
	}
	if committed {
		if err := res.WaitCheckpoint(); err != nil {
			fmt.Fprintf(e.stderr, "lakelog %s: warning: checkpoint after version %d failed (the commit stands): %v\n", verbName, res.Version, err)
		}
	}
	return nil
}
