package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/maintenance"
	"github.com/lakelog/lakelog/schema"
)

func init() {
	register(&verb{
		name: "alter", section: sectionWrite,
		args:    []arg{{name: "TABLE"}},
		summary: "set or unset table properties, or change one thing about the columns, in one commit",
		flags: []flagDef{
			{name: "set-property", kind: propertyFlag, help: "set a table property; delta.* properties are checked and may upgrade the protocol (delta.columnMapping.mode=name maps the columns, as Spark)"},
			{name: "unset-property", kind: repeatFlag, arg: "k", help: "remove a table property; it must be set"},
			{name: "add-column", kind: repeatFlag, arg: "'c type'", help: "add a column: 'path type [NOT NULL] [COMMENT 'text'] [FIRST | AFTER name]' (s.c adds field c to struct s; NOT NULL only on a table without rows)"},
			{name: "rename-column", kind: textFlag, arg: "old:new", help: "rename a column (s.a:b renames field a of struct s); needs column mapping"},
			{name: "drop-column", kind: repeatFlag, arg: "c", help: "drop a column (s.a a field of struct s); needs column mapping"},
			{name: "change-type", kind: textFlag, arg: "c:type", help: "widen a column's type (int:long, float:double, decimals to more digits, date:timestamp_ntz, ...); needs delta.enableTypeWidening=true"},
			{name: "set-nullable", kind: textFlag, arg: "c", help: "drop a column's NOT NULL"},
			{name: "comment", kind: textFlag, arg: "c:text", help: "set a column's comment (an empty text removes it)"},
			{name: "add-constraint", kind: textFlag, arg: "name:EXPR", help: "add a CHECK constraint; the existing rows must meet it, and every write checks each new row (lakelog help predicates)"},
			{name: "drop-constraint", kind: textFlag, arg: "name", help: "drop a CHECK constraint"},
			{name: "if-exists", kind: boolFlag, help: "with --drop-constraint: a constraint the table lacks is not an error"},
		},
		groups: []flagGroup{{alts: [][]string{{"add-column"}, {"rename-column"}, {"drop-column"}, {"change-type"}, {"set-nullable"}, {"comment"}, {"add-constraint"}, {"drop-constraint", "if-exists"}}}},
		more: "Each alter is one commit (or none): the properties given, or one column change.\n" +
			"Column paths are written as in SQL: s.a is field a of struct s, `a b` a name with a space.",
		formats: allFormats,
		run:     runAlter,
	})
}

// columnFlags are alter's flags that change the columns.
var columnFlags = []string{"add-column", "rename-column", "drop-column", "change-type", "set-nullable", "comment", "add-constraint", "drop-constraint"}

// runAlter changes table properties or the columns in one commit (or
// none).
func runAlter(ctx context.Context, c *call) error {
	props, unset := c.properties("set-property"), c.list("unset-property")
	column := ""
	for _, f := range columnFlags {
		if c.given(f) {
			column = f
		}
	}
	switch {
	case column != "" && (len(props) > 0 || len(unset) > 0):
		return usagef("give --%s alone: a column change is its own commit, apart from properties", column)
	case column == "" && len(props) == 0 && len(unset) == 0:
		return usagef("give --set-property k=v, --unset-property k, or one column change (--%s)", strings.Join(columnFlags, ", --"))
	}
	snap, err := c.snapshot(ctx)
	if err != nil {
		return err
	}
	if column != "" {
		return alterColumns(ctx, c, snap, column)
	}
	res, err := maintenance.AlterProperties(ctx, snap, props, unset)
	if err != nil {
		return err
	}
	c.waitHooks(res)
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

// alterColumns runs alter's one column change (the flag named by which)
// through the schema package.
func alterColumns(ctx context.Context, c *call, snap *deltalog.Snapshot, which string) error {
	var res *deltalog.CommitResult
	var err error
	var op, done string
	switch which {
	case "add-column":
		op = "ADD COLUMNS"
		var cols []schema.Column
		for _, text := range c.list("add-column") {
			col, perr := schema.ParseColumn(text)
			if perr != nil {
				return usagef("--add-column %q: %v", text, perr)
			}
			cols = append(cols, col)
		}
		res, err = schema.AddColumns(ctx, snap, cols)
		done = fmt.Sprintf("added %d columns", len(cols))
	case "rename-column":
		op = "RENAME COLUMN"
		from, to, ok := splitColon(c.text("rename-column"), true)
		if !ok {
			return usagef("--rename-column takes old:new, got %q", c.text("rename-column"))
		}
		name, perr := schema.ParseColumnPath(to)
		if perr != nil || len(name) != 1 {
			return usagef("--rename-column %q: the new name is one name (a field keeps its struct), not %q", c.text("rename-column"), to)
		}
		to = name[0]
		res, err = schema.RenameColumn(ctx, snap, from, to)
		done = fmt.Sprintf("renamed %s to %s", from, to)
	case "drop-column":
		op = "DROP COLUMNS"
		cols := c.list("drop-column")
		res, err = schema.DropColumns(ctx, snap, cols)
		done = fmt.Sprintf("dropped %s", strings.Join(cols, ", "))
	case "change-type":
		op = "CHANGE COLUMN"
		col, typ, ok := splitColon(c.text("change-type"), false)
		if !ok {
			return usagef("--change-type takes column:type, got %q", c.text("change-type"))
		}
		st, perr := actions.ParseDDL("x " + typ)
		if perr != nil || len(st.Fields) != 1 {
			return usagef("--change-type %q: the type %q: %v", c.text("change-type"), typ, perr)
		}
		res, err = schema.ChangeColumnType(ctx, snap, col, st.Fields[0].Type)
		done = fmt.Sprintf("changed the type of %s to %s", col, st.Fields[0].Type)
	case "set-nullable":
		op = "CHANGE COLUMN"
		res, err = schema.DropNotNull(ctx, snap, c.text("set-nullable"))
		done = fmt.Sprintf("%s is nullable", c.text("set-nullable"))
	case "comment":
		op = "CHANGE COLUMN"
		col, text, ok := splitColon(c.text("comment"), false)
		if !ok {
			return usagef("--comment takes column:text, got %q", c.text("comment"))
		}
		res, err = schema.SetComment(ctx, snap, col, text)
		done = fmt.Sprintf("set the comment of %s", col)
	case "add-constraint":
		op = "ADD CONSTRAINT"
		name, text, ok := strings.Cut(c.text("add-constraint"), ":")
		if !ok {
			return usagef("--add-constraint takes name:EXPR, got %q", c.text("add-constraint"))
		}
		res, err = schema.AddConstraint(ctx, snap, strings.TrimSpace(name), strings.TrimSpace(text))
		done = fmt.Sprintf("added CHECK constraint %s", strings.TrimSpace(name))
	case "drop-constraint":
		op = "DROP CONSTRAINT"
		var opts []schema.Option
		if c.on("if-exists") {
			opts = append(opts, schema.IfExists())
		}
		res, err = schema.DropConstraint(ctx, snap, c.text("drop-constraint"), opts...)
		done = fmt.Sprintf("dropped CHECK constraint %s", c.text("drop-constraint"))
	}
	if err != nil {
		return err
	}
	if res == nil { // DROP CONSTRAINT IF EXISTS of a constraint the table lacks
		return c.report(newOpResult(op, nil, nil), func(w io.Writer) {
			fmt.Fprintf(w, "the table has no CHECK constraint %s; nothing was committed\n", c.text("drop-constraint"))
		})
	}
	c.waitHooks(res)
	return c.report(newOpResult(op, res, nil), func(w io.Writer) {
		fmt.Fprintf(w, "version %d: %s\n", res.Version, done)
	})
}

// splitColon splits "a:b" at the first colon outside backquotes (last:
// the last one, for old:new where the new name is plain).
func splitColon(s string, last bool) (string, string, bool) {
	at, quoted := -1, false
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '`':
			quoted = !quoted
		case s[i] == ':' && !quoted:
			at = i
			if !last {
				return s[:at], s[at+1:], at > 0
			}
		}
	}
	if at <= 0 {
		return "", "", false
	}
	return s[:at], s[at+1:], true
}
