package deltasql

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/convert"
	"github.com/lakelog/lakelog/deltalog"
)

// refusedStatements are statements Spark users type that lakelog does
// not run, each with what to do instead.
var refusedStatements = map[string]string{
	"REORG":    "REORG TABLE ... APPLY (PURGE) is not supported: lakelog cannot yet rewrite files to drop their deletion vectors; DELETE, UPDATE and MERGE write without deletion vectors when run with --no-deletion-vectors",
	"DROP":     "DROP TABLE is not supported: lakelog does not delete tables; remove the table's folder (and its catalog entry) yourself",
	"TRUNCATE": "TRUNCATE TABLE is not supported: DELETE FROM t removes every row, in one commit",
	"USE":      "USE is not supported: name tables by their path (delta.`/path`) or by their name in the catalog file (--catalog)",
	"CACHE":    "CACHE TABLE is not supported: lakelog keeps no cache between statements",
	"UNCACHE":  "UNCACHE TABLE is not supported: lakelog keeps no cache between statements",
	"REFRESH":  "REFRESH TABLE is not needed: every statement reads the table's latest version",
	"ANALYZE":  "ANALYZE TABLE is not supported: lakelog keeps per-file statistics in the log as it writes",
	"MSCK":     "MSCK REPAIR TABLE is not needed for Delta tables: the log lists the files",
	"EXPLAIN":  "EXPLAIN is not supported here: `lakelog scan TABLE --where PRED --explain` shows how a scan plans and reads",
	"WITH":     "WITH (common table expressions) is not supported: write the query inline, or MERGE ... USING (SELECT ...) AS s",
	"FSCK":     "FSCK REPAIR TABLE is not supported",
	"CLONE":    "write CREATE TABLE target SHALLOW CLONE source",
	"SHALLOW":  "write CREATE TABLE target SHALLOW CLONE source",
}

// generate is GENERATE symlink_format_manifest FOR TABLE t.
type generate struct {
	table tableRef
}

func (*generate) kind() string { return "GENERATE" }

func (p *parser) generate() (node, error) {
	if err := p.advance(); err != nil {
		return nil, err
	}
	mode, pos, err := p.name("the mode, symlink_format_manifest")
	if err != nil {
		return nil, err
	}
	if !strings.EqualFold(mode, "symlink_format_manifest") {
		return nil, p.errorf(pos, "GENERATE %s: the mode Delta has is symlink_format_manifest", mode)
	}
	if err := p.expect("FOR", "TABLE"); err != nil {
		return nil, err
	}
	g := &generate{}
	g.table, err = p.deltaTable(false)
	return g, err
}

// generate writes the table's symlink manifest
// (deltalog.Snapshot.WriteSymlinkManifest), as Spark's GENERATE does;
// it commits nothing and returns no rows.
func (x *run) generate(ctx context.Context, n *generate) error {
	snap, err := x.snapshot(ctx, n.table)
	if err != nil {
		return err
	}
	if err := snap.WriteSymlinkManifest(ctx); err != nil {
		return x.errAt(n.table.pos, err)
	}
	x.r.Summary = fmt.Sprintf("GENERATE: wrote the symlink manifest of %s version %d under %s", n.table.display(), snap.Version(), strings.TrimSuffix(deltalog.ManifestDir, "/"))
	return nil
}

// convertStmt is CONVERT TO DELTA parquet.`path` [PARTITIONED BY (...)]
// [NO STATISTICS].
type convertStmt struct {
	table       tableRef
	partitioned string
	partPos     int
	noStats     bool
}

func (*convertStmt) kind() string { return "CONVERT" }

func (p *parser) convert() (node, error) {
	if err := p.advance(); err != nil {
		return nil, err
	}
	if err := p.expect("TO", "DELTA"); err != nil {
		return nil, err
	}
	c := &convertStmt{}
	var err error
	if c.table, err = p.tableRef(false, false); err != nil {
		return nil, err
	}
	switch {
	case c.table.format == "parquet" && len(c.table.files) == 1:
		c.table = tableRef{pos: c.table.pos, path: c.table.files[0]}
	case c.table.format != "":
		return nil, p.errorf(c.table.pos, "CONVERT TO DELTA converts a folder of Parquet files (parquet.`/path`), not %s files", c.table.format)
	}
	if ok, err := p.accept("NO", "STATISTICS"); err != nil {
		return nil, err
	} else if ok {
		c.noStats = true
	}
	if ok, err := p.accept("PARTITIONED", "BY"); err != nil {
		return nil, err
	} else if ok {
		c.partPos = p.tok.pos
		if err := p.expectPunct("("); err != nil {
			return nil, err
		}
		text, end, err := p.rawUntil(p.tok.pos, false, false)
		if err != nil {
			return nil, err
		}
		c.partitioned = text
		if err := p.skipTo(end); err != nil {
			return nil, err
		}
		if err := p.expectPunct(")"); err != nil {
			return nil, err
		}
	}
	return c, nil
}

func (x *run) convert(ctx context.Context, n *convertStmt) error {
	var opts []convert.Option
	if n.partitioned != "" {
		ps, err := actions.ParseDDL(n.partitioned)
		if err != nil {
			return x.errorf(n.partPos, "PARTITIONED BY: %v (write the columns with their types, as in PARTITIONED BY (date DATE))", err)
		}
		opts = append(opts, convert.PartitionBy(ps))
	}
	if n.noStats {
		opts = append(opts, convert.NoStatistics())
	}
	if x.s.progress != nil {
		opts = append(opts, convert.WithProgress(func(done, total int) { x.s.progress("convert: footers read", done, total) }))
	}
	st, _, err := x.store(ctx, n.table)
	if err != nil {
		return err
	}
	res, err := convert.ToDelta(ctx, st, "", opts...)
	if err != nil {
		return x.errAt(n.table.pos, err)
	}
	if res.AlreadyDelta {
		x.r.Summary = fmt.Sprintf("CONVERT: %s is already a Delta table (version %d); nothing converted", n.table.display(), res.Version)
		return nil
	}
	x.r.committed(res.Commit)
	x.r.Summary = fmt.Sprintf("CONVERT: %d files at version %d", res.Files, res.Version)
	return nil
}

// show is SHOW TBLPROPERTIES t [('key')], SHOW COLUMNS IN t, SHOW
// CREATE TABLE t.
type show struct {
	what  string // "TBLPROPERTIES", "COLUMNS", "CREATE TABLE"
	table tableRef
	key   string
}

func (s *show) kind() string { return "SHOW " + s.what }

func (p *parser) show() (node, error) {
	if err := p.advance(); err != nil {
		return nil, err
	}
	s := &show{}
	switch {
	case p.is("TBLPROPERTIES"):
		s.what = "TBLPROPERTIES"
		if err := p.advance(); err != nil {
			return nil, err
		}
	case p.is("COLUMNS"):
		s.what = "COLUMNS"
		if err := p.advance(); err != nil {
			return nil, err
		}
		if !p.is("IN", "FROM") {
			return nil, p.unexpected("IN or FROM")
		}
		if err := p.advance(); err != nil {
			return nil, err
		}
	case p.is("CREATE"):
		s.what = "CREATE TABLE"
		if err := p.advance(); err != nil {
			return nil, err
		}
		if err := p.expect("TABLE"); err != nil {
			return nil, err
		}
	case p.is("TABLES", "DATABASES", "SCHEMAS", "FUNCTIONS", "PARTITIONS", "VIEWS", "CATALOGS"):
		return nil, p.errorf(p.tok.pos, "SHOW %s is not supported: lakelog shows TBLPROPERTIES, COLUMNS IN t and CREATE TABLE t; the catalog file (--catalog) lists the table names", strings.ToUpper(p.tok.text))
	default:
		return nil, p.unexpected("TBLPROPERTIES, COLUMNS or CREATE TABLE")
	}
	var err error
	if s.table, err = p.deltaTable(false); err != nil {
		return nil, err
	}
	if s.what == "TBLPROPERTIES" && p.isPunct("(") {
		if err := p.advance(); err != nil {
			return nil, err
		}
		if p.tok.kind == tokString {
			s.key = p.tok.text
			if err := p.advance(); err != nil {
				return nil, err
			}
		} else {
			parts, _, err := p.qualifiedName("a property key")
			if err != nil {
				return nil, err
			}
			s.key = strings.Join(parts, ".")
		}
		if err := p.expectPunct(")"); err != nil {
			return nil, err
		}
	}
	return s, nil
}

func (x *run) show(ctx context.Context, n *show) error {
	snap, err := x.snapshot(ctx, n.table)
	if err != nil {
		return err
	}
	str := arrow.BinaryTypes.String
	md := snap.Metadata()
	switch n.what {
	case "TBLPROPERTIES":
		// Spark lists the table's configuration and the protocol's
		// versions and features as delta.* properties.
		props := map[string]string{}
		for k, v := range md.Configuration {
			props[k] = v
		}
		p := snap.Protocol()
		props["delta.minReaderVersion"] = strconv.Itoa(p.MinReaderVersion)
		props["delta.minWriterVersion"] = strconv.Itoa(p.MinWriterVersion)
		for _, f := range p.ReaderFeatures {
			props["delta.feature."+f] = "supported"
		}
		for _, f := range p.WriterFeatures {
			props["delta.feature."+f] = "supported"
		}
		t := newRowTable(col("key", str), col("value", str))
		if n.key != "" {
			v, ok := props[n.key]
			if !ok {
				v = fmt.Sprintf("Table %s does not have property: %s", n.table.display(), n.key)
			}
			t = newRowTable(col("key", str), col("value", str))
			t.add(n.key, v)
			x.r.set(t)
			return nil
		}
		keys := make([]string, 0, len(props))
		for k := range props {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			t.add(k, props[k])
		}
		x.r.set(t)
	case "COLUMNS":
		t := newRowTable(col("col_name", str))
		for _, f := range snap.Schema().Fields {
			t.add(f.Name)
		}
		x.r.set(t)
	case "CREATE TABLE":
		t := newRowTable(col("createtab_stmt", str))
		t.add(createTableText(n.table, snap.Schema(), snap.PartitionColumns(), md))
		x.r.set(t)
	}
	return nil
}

// createTableText is SHOW CREATE TABLE's statement: columns (with NOT
// NULL, comments and generation expressions), partitioning, location and
// properties.
func createTableText(t tableRef, schema *actions.StructType, parts []string, md *actions.Metadata) string {
	var b strings.Builder
	name := t.name
	if name == "" {
		name = "delta.`" + strings.ReplaceAll(t.path, "`", "``") + "`"
	}
	b.WriteString("CREATE TABLE " + name + " (\n")
	for i, f := range schema.Fields {
		b.WriteString("  " + quoteName(f.Name) + " " + strings.ToUpper(sqlType(f.Type)))
		if !f.Nullable {
			b.WriteString(" NOT NULL")
		}
		if g, ok := f.Metadata[actions.MetaGenerationExpression].(string); ok {
			b.WriteString(" GENERATED ALWAYS AS (" + g + ")")
		}
		if c, ok := f.Metadata["comment"].(string); ok {
			b.WriteString(" COMMENT " + sqlString(c))
		}
		if i < len(schema.Fields)-1 {
			b.WriteString(",")
		}
		b.WriteString("\n")
	}
	b.WriteString(")\nUSING delta\n")
	if len(parts) > 0 {
		q := make([]string, len(parts))
		for i, p := range parts {
			q[i] = quoteName(p)
		}
		b.WriteString("PARTITIONED BY (" + strings.Join(q, ", ") + ")\n")
	}
	if t.path != "" {
		b.WriteString("LOCATION " + sqlString(t.path) + "\n")
	}
	if len(md.Configuration) > 0 {
		keys := make([]string, 0, len(md.Configuration))
		for k := range md.Configuration {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		b.WriteString("TBLPROPERTIES (\n")
		for i, k := range keys {
			b.WriteString("  " + sqlString(k) + " = " + sqlString(md.Configuration[k]))
			if i < len(keys)-1 {
				b.WriteString(",")
			}
			b.WriteString("\n")
		}
		b.WriteString(")\n")
	}
	return b.String()
}

func quoteName(n string) string {
	for i, r := range n {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9') {
			return "`" + strings.ReplaceAll(n, "`", "``") + "`"
		}
	}
	return n
}

func sqlString(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}

// sqlType is a type in Spark's DDL: bigint, int, array<string>, ...
func sqlType(t actions.DataType) string {
	switch x := t.(type) {
	case *actions.ArrayType:
		return "array<" + sqlType(x.ElementType) + ">"
	case *actions.MapType:
		return "map<" + sqlType(x.KeyType) + ", " + sqlType(x.ValueType) + ">"
	case *actions.StructType:
		parts := make([]string, len(x.Fields))
		for i, f := range x.Fields {
			parts[i] = quoteName(f.Name) + ": " + sqlType(f.Type)
		}
		return "struct<" + strings.Join(parts, ", ") + ">"
	}
	switch t {
	case actions.TypeLong:
		return "bigint"
	case actions.TypeInteger:
		return "int"
	case actions.TypeShort:
		return "smallint"
	case actions.TypeByte:
		return "tinyint"
	}
	return t.String()
}

// partitionSpec reads INSERT's PARTITION (p = value, q, ...): a column
// with a value is a static partition value, one without is given by the
// rows (Spark's dynamic partition).
func (p *parser) partitionSpec(in *insert) error {
	in.staticPos = p.tok.pos
	if err := p.advance(); err != nil {
		return err
	}
	if err := p.expectPunct("("); err != nil {
		return err
	}
	in.static = map[string]Expr{}
	for {
		name, _, err := p.name("a partition column")
		if err != nil {
			return err
		}
		if ok, err := p.acceptPunct("="); err != nil {
			return err
		} else if ok {
			e, err := p.expr()
			if err != nil {
				return err
			}
			in.static[name] = e
			in.staticOrder = append(in.staticOrder, name)
		}
		more, err := p.acceptPunct(",")
		if err != nil {
			return err
		}
		if !more {
			break
		}
	}
	return p.expectPunct(")")
}

// withStatic adds INSERT's static partition values to its targets and
// to each row of VALUES or to the query's columns.
func (x *run) withStatic(n *insert, schema *actions.StructType, targets []*actions.StructField) ([]*actions.StructField, error) {
	if len(n.static) == 0 {
		return targets, nil
	}
	var out []*actions.StructField
	for _, f := range targets {
		if !containsFold(n.staticOrder, f.Name) {
			out = append(out, f)
		}
	}
	for _, name := range n.staticOrder {
		f := schema.FieldFold(name)
		if f == nil {
			return nil, x.errorf(n.staticPos, "PARTITION (%s = ...): the table has no column %s (columns: %s)", name, name, strings.Join(schema.Names(), ", "))
		}
		out = append(out, f)
		v := n.static[name]
		for i := range n.values {
			n.values[i] = append(n.values[i], v)
		}
		if n.query != nil {
			n.query.items = append(n.query.items, selectItem{pos: v.Pos, expr: &v, alias: f.Name, text: f.Name})
		}
	}
	return out, nil
}

func containsFold(names []string, name string) bool {
	for _, n := range names {
		if strings.EqualFold(n, name) {
			return true
		}
	}
	return false
}
