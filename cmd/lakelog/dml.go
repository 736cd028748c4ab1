package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/lakelog/lakelog/deltasql"
	"github.com/lakelog/lakelog/dml"
	"github.com/lakelog/lakelog/expr"
	"github.com/lakelog/lakelog/writer/input"
)

// dmlFlags are the flags DELETE, UPDATE and MERGE share.
var dmlFlags = []flagDef{
	{name: "no-deletion-vectors", kind: boolFlag, help: "rewrite the touched files (copy-on-write) even where the table enables deletion vectors"},
}

const dmlOutput = "Output: the version committed (or that nothing matched) and Spark's operationMetrics, one 'name value' line each; --format jsonl, json or csv print one record {operation, version, operationMetrics}."

func init() {
	register(&verb{
		name: "delete", section: sectionWrite,
		args:    []arg{{name: "TABLE"}},
		summary: "delete the rows a predicate matches, in one commit",
		flags: append([]flagDef{
			{name: "where", kind: textFlag, arg: "PRED", required: true, hint: "--where true deletes every row", help: "delete the rows for which the predicate is true"},
		}, dmlFlags...),
		formats: allFormats, progress: true, more: dmlOutput,
		run: runDelete,
	})
	register(&verb{
		name: "update", section: sectionWrite,
		args:    []arg{{name: "TABLE"}},
		summary: "set columns of the rows a predicate matches, in one commit",
		flags: append([]flagDef{
			{name: "set", kind: repeatFlag, arg: "'col = EXPR'", required: true, help: "an assignment (repeat for more columns); EXPR may use the row's columns: 'amount = amount * 2'"},
			{name: "where", kind: textFlag, arg: "PRED", help: "update the rows for which the predicate is true (default: every row)"},
		}, dmlFlags...),
		formats: allFormats, progress: true, more: dmlOutput,
		run: runUpdate,
	})
	register(&verb{
		name: "merge", section: sectionWrite,
		args:    []arg{{name: "TABLE"}, {name: "SOURCE_FILE"}},
		summary: "upsert a .jsonl, .csv or .parquet file into the table (MERGE INTO), in one commit",
		flags: append([]flagDef{
			{name: "on", kind: textFlag, arg: "'target.k = source.k'", required: true, help: "the join condition, with at least one equality of a target and a source column"},
			{name: "when-matched-update-all", kind: boolFlag, help: "WHEN MATCHED THEN UPDATE SET *: a matched row takes the source row's values"},
			{name: "when-matched-delete", kind: boolFlag, help: "WHEN MATCHED THEN DELETE: a matched row is deleted (before --when-matched-update-all, whose rows are then the ones --matched-condition leaves)"},
			{name: "when-not-matched-insert-all", kind: boolFlag, help: "WHEN NOT MATCHED THEN INSERT *: a source row that matches no row is inserted"},
			{name: "when-not-matched-by-source-delete", kind: boolFlag, help: "WHEN NOT MATCHED BY SOURCE THEN DELETE: a row that no source row matches is deleted"},
			{name: "matched-condition", kind: textFlag, arg: "PRED", help: "AND condition of the first WHEN MATCHED clause (the DELETE when both are given): 'source.op = ''delete'''"},
			{name: "not-matched-condition", kind: textFlag, arg: "PRED", help: "AND condition of the WHEN NOT MATCHED clause: 'source.op <> ''delete'''"},
			{name: "not-matched-by-source-condition", kind: textFlag, arg: "PRED", help: "AND condition of the WHEN NOT MATCHED BY SOURCE clause: 'target.day < ''2026-01-01'''"},
			{name: "when-matched", kind: repeatFlag, arg: "CLAUSE", help: "a WHEN MATCHED clause as Spark SQL writes it after WHEN MATCHED: \"[AND cond THEN] UPDATE SET * | UPDATE SET c = e, ... | DELETE\""},
			{name: "when-not-matched", kind: repeatFlag, arg: "CLAUSE", help: "a WHEN NOT MATCHED clause: \"[AND cond THEN] INSERT * | INSERT (c, ...) VALUES (e, ...)\""},
			{name: "when-not-matched-by-source", kind: repeatFlag, arg: "CLAUSE", help: "a WHEN NOT MATCHED BY SOURCE clause: \"[AND cond THEN] UPDATE SET c = e, ... | DELETE\""},
			{name: "target-alias", kind: textFlag, arg: "NAME", help: "the table's name in --on and the clauses (default target)"},
			{name: "source-alias", kind: textFlag, arg: "NAME", help: "the source's name in --on and the clauses (default source)"},
			{name: "with-schema-evolution", kind: boolFlag, help: "MERGE WITH SCHEMA EVOLUTION: UPDATE SET * and INSERT * add the source's new columns to the table, in the same commit"},
		}, dmlFlags...),
		formats: allFormats, progress: true,
		more: "SOURCE_FILE is .jsonl/.ndjson, .csv (a header row) or .parquet, decoded with exactly the columns it holds.\n" +
			"Clauses of a kind apply in the order given, the first whose condition holds: the shorthand flags (DELETE, UPDATE SET *,\n" +
			"INSERT *, DELETE BY SOURCE) before the --when-* clauses. Example:\n" +
			"  lakelog merge t changes.jsonl --on 't.id = c.id' --target-alias t --source-alias c \\\n" +
			"    --when-matched \"AND c.op = 'delete' THEN DELETE\" --when-matched 'UPDATE SET amount = t.amount + c.amount' \\\n" +
			"    --when-not-matched 'INSERT (id, amount) VALUES (c.id, c.amount)' --when-not-matched-by-source 'UPDATE SET stale = true'\n" + dmlOutput,
		run: runMerge,
	})
}

// dmlOptions are the DML verbs' options: --no-deletion-vectors, and on
// a terminal a progress line of the rows read (clear removes it).
func dmlOptions(c *call, op string) (opts []dml.Option, clear func()) {
	if c.on("no-deletion-vectors") {
		opts = append(opts, dml.WithoutDeletionVectors())
	}
	m := c.meter()
	if m == nil {
		return opts, func() {}
	}
	return append(opts, dml.WithProgress(dmlProgress(op, m.set))), m.clear
}

// dmlProgress is a DML operation's progress for a line: the rows read to
// find the rows it changes, then the rows of the files it rewrites.
func dmlProgress(op string, set func(what string, done, total int64, unit, extra string)) func(phase string, done, total int64) {
	return func(phase string, done, total int64) {
		what := strings.ToLower(op) + ": rows read"
		if phase == "rewrite" {
			what = strings.ToLower(op) + ": rows rewritten"
		}
		set(what, done, total, "", "")
	}
}

// runDelete is DELETE FROM TABLE WHERE PRED.
func runDelete(ctx context.Context, c *call) error {
	snap, err := c.snapshot(ctx)
	if err != nil {
		return err
	}
	pred, err := parseWhere(c.text("where"), snap.Schema())
	if err != nil {
		return err
	}
	opts, clear := dmlOptions(c, "DELETE")
	res, err := dml.Delete(ctx, snap, pred, opts...)
	clear()
	if err != nil {
		return err
	}
	return c.printDMLResult("DELETE", res)
}

// runUpdate is UPDATE TABLE SET col = EXPR, ... [WHERE PRED].
func runUpdate(ctx context.Context, c *call) error {
	sets := c.list("set")
	assign := make([]*expr.Assignment, len(sets))
	for i, s := range sets {
		var err error
		if assign[i], err = expr.ParseAssignment(s); err != nil {
			return fmt.Errorf("--set %q: %w", s, err)
		}
	}
	snap, err := c.snapshot(ctx)
	if err != nil {
		return err
	}
	var pred expr.Expr
	if where := c.text("where"); where != "" {
		if pred, err = parseWhere(where, snap.Schema()); err != nil {
			return err
		}
	}
	opts, clear := dmlOptions(c, "UPDATE")
	res, err := dml.Update(ctx, snap, pred, assign, opts...)
	clear()
	if err != nil {
		return err
	}
	return c.printDMLResult("UPDATE", res)
}

// runMerge is MERGE INTO TABLE AS target USING SOURCE_FILE AS source ON ...
// with the clauses its flags name.
func runMerge(ctx context.Context, c *call) error {
	matchedUpdateAll, matchedDelete := c.on("when-matched-update-all"), c.on("when-matched-delete")
	insertAll, bySourceDelete := c.on("when-not-matched-insert-all"), c.on("when-not-matched-by-source-delete")
	matchedCond, notMatchedCond, bySourceCond := c.text("matched-condition"), c.text("not-matched-condition"), c.text("not-matched-by-source-condition")
	generic := len(c.list("when-matched")) + len(c.list("when-not-matched")) + len(c.list("when-not-matched-by-source"))
	switch {
	case !matchedUpdateAll && !matchedDelete && !insertAll && !bySourceDelete && generic == 0:
		return usagef("name at least one clause: --when-matched CLAUSE, --when-not-matched CLAUSE, --when-not-matched-by-source CLAUSE, or a shorthand (--when-matched-update-all, --when-matched-delete, --when-not-matched-insert-all, --when-not-matched-by-source-delete)")
	case matchedUpdateAll && matchedDelete && matchedCond == "":
		return usagef("--when-matched-delete with --when-matched-update-all needs --matched-condition (the DELETE's): without it the UPDATE would never act")
	case matchedCond != "" && !matchedUpdateAll && !matchedDelete:
		return usagef("--matched-condition without --when-matched-update-all or --when-matched-delete")
	case notMatchedCond != "" && !insertAll:
		return usagef("--not-matched-condition without --when-not-matched-insert-all")
	case bySourceCond != "" && !bySourceDelete:
		return usagef("--not-matched-by-source-condition without --when-not-matched-by-source-delete")
	}
	onExpr, err := parseFlagExpr("--on", c.text("on"))
	if err != nil {
		return err
	}
	conds := map[string]expr.Expr{}
	for name, text := range map[string]string{"--matched-condition": matchedCond, "--not-matched-condition": notMatchedCond, "--not-matched-by-source-condition": bySourceCond} {
		if text != "" {
			if conds[name], err = parseFlagExpr(name, text); err != nil {
				return err
			}
		}
	}
	var clauses []dml.Clause
	if matchedDelete {
		clauses = append(clauses, dml.WhenMatchedDelete(conds["--matched-condition"]))
	}
	if matchedUpdateAll {
		var cond expr.Expr
		if !matchedDelete {
			cond = conds["--matched-condition"]
		}
		clauses = append(clauses, dml.WhenMatchedUpdateAll(cond))
	}
	if insertAll {
		clauses = append(clauses, dml.WhenNotMatchedInsertAll(conds["--not-matched-condition"]))
	}
	if bySourceDelete {
		clauses = append(clauses, dml.WhenNotMatchedBySourceDelete(conds["--not-matched-by-source-condition"]))
	}
	file := c.args[1]
	if _, err := input.FormatOf(file); err != nil {
		return err
	}
	if _, err := os.Stat(file); err != nil {
		return &input.Error{File: file, Msg: "cannot read: " + errText(err), Err: err}
	}
	snap, err := c.snapshot(ctx)
	if err != nil {
		return err
	}
	targetAlias, sourceAlias := c.text("target-alias"), c.text("source-alias")
	if targetAlias == "" {
		targetAlias = "target"
	}
	if sourceAlias == "" {
		sourceAlias = "source"
	}
	for _, kind := range []struct{ flag, when string }{{"when-matched", "MATCHED"}, {"when-not-matched", "NOT MATCHED"}, {"when-not-matched-by-source", "NOT MATCHED BY SOURCE"}} {
		for _, text := range c.list(kind.flag) {
			cl, err := deltasql.MergeClause(snap.Schema(), kind.when, text, targetAlias)
			if err != nil {
				return fmt.Errorf("--%s %q: %w", kind.flag, text, err)
			}
			clauses = append(clauses, cl)
		}
	}
	// The source is opened once: its columns and types, then its rows.
	source, _, err := input.OpenSource(ctx, snap.Schema(), file)
	if err != nil {
		return err
	}
	defer source.Close()
	dopts, clear := dmlOptions(c, "MERGE")
	defer clear()
	opts := append([]dml.Option{dml.WithAliases(targetAlias, sourceAlias)}, dopts...)
	if c.on("with-schema-evolution") {
		opts = append(opts, dml.WithSchemaEvolution())
	}
	res, err := dml.Merge(ctx, snap, source.Records(ctx), onExpr, clauses, opts...)
	if errors.Is(err, dml.ErrDuplicateMatch) {
		return fmt.Errorf("%s: %w", file, err) // its source rows are the file's rows, in order
	}
	if err != nil {
		return err
	}
	return c.printDMLResult("MERGE", res)
}

// parseFlagExpr parses a flag's expression; errors name the flag.
func parseFlagExpr(flagName, text string) (expr.Expr, error) {
	x, err := expr.Parse(text)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", flagName, err)
	}
	return x, nil
}

// printDMLResult prints an operation's metrics and the version it
// committed, or that nothing matched.
//
// table:  "DELETE: version 3" (or "DELETE: nothing matched; no version
// was committed"), then one "name value" line per metric, sorted.
// Other formats: one opResult record.
func (c *call) printDMLResult(op string, res *dml.Result) error {
	metrics := map[string]any{}
	for k, v := range res.Metrics {
		metrics[k] = v
	}
	defer c.waitHooks(res.CommitResult)
	return c.report(newOpResult(op, res.CommitResult, metrics), func(w io.Writer) {
		if res.CommitResult != nil {
			fmt.Fprintf(w, "%s: version %d\n", op, res.Version)
		} else {
			fmt.Fprintf(w, "%s: nothing matched; no version was committed\n", op)
		}
		for _, n := range slices.Sorted(maps.Keys(res.Metrics)) {
			fmt.Fprintf(w, "%s %d\n", n, res.Metrics[n])
		}
	})
}
