package interop

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// sqlStep is one statement of the SQL golden test and what of its answer
// must agree between lakelog and Spark.
type sqlStep struct {
	sql string
	// compare: "rows" (columns and every value, in order), "count" (the
	// number of rows and the columns), "columns" (the column names only:
	// the values depend on each engine's files), "shape" (the columns,
	// the number of rows, and the fields of struct values, nested),
	// "history" (each version's operation and the names of its
	// operationMetrics), "error" (both refuse the statement).
	compare string
}

// The statements of Delta's documentation (the quickstart's create,
// insert, update, delete and time travel; MERGE with every clause; the
// table utility commands DESCRIBE HISTORY, RESTORE, OPTIMIZE ZORDER BY,
// VACUUM DRY RUN; the change data feed's table_changes), run by lakelog
// sql on one table and by Spark on another made the same way. {T} is the
// table, {P} its path, {U} the updates file.
var sqlGoldenSteps = []sqlStep{
	{"CREATE TABLE {T} (id BIGINT NOT NULL, firstName STRING, gender STRING, salary INT) USING DELTA PARTITIONED BY (gender) TBLPROPERTIES ('delta.enableChangeDataFeed' = 'true')", "rows"},
	{"INSERT INTO {T} VALUES (1, 'Ann', 'F', 3000), (2, 'Bob', 'M', 4000), (3, 'Cat', 'F', 5000), (4, 'Dan', 'M', 500)", "rows"},
	{"INSERT INTO {T} (id, firstName, gender) VALUES (5, 'Eve', 'F')", "rows"},
	{"UPDATE {T} SET gender = 'Female' WHERE gender = 'F'", "rows"},
	{"DELETE FROM {T} WHERE salary < 1000", "rows"},
	{"SELECT * FROM {T} VERSION AS OF 1 ORDER BY id", "rows"},
	{"SELECT id, firstName FROM {T} VERSION AS OF 2 WHERE salary IS NULL", "rows"},
	{"MERGE INTO {T} AS people USING json.`{U}` AS updates ON people.id = updates.id " +
		"WHEN MATCHED AND updates.op = 'delete' THEN DELETE " +
		"WHEN MATCHED THEN UPDATE SET firstName = updates.firstName, salary = updates.salary " +
		"WHEN NOT MATCHED AND updates.op <> 'delete' THEN INSERT (id, firstName, gender, salary) VALUES (updates.id, updates.firstName, updates.gender, updates.salary) " +
		"WHEN NOT MATCHED BY SOURCE AND people.salary > 4500 THEN UPDATE SET salary = 4500", "rows"},
	{"SELECT * FROM {T} ORDER BY id", "rows"},
	{"SELECT gender, COUNT(*) AS n, SUM(salary) AS total, MIN(firstName) AS first, MAX(salary) AS top, AVG(salary) AS mean FROM {T} GROUP BY gender ORDER BY gender", "rows"},
	{"SELECT COUNT(*), SUM(salary), MIN(id), MAX(firstName) FROM {T} WHERE id > 100", "rows"},
	{"SELECT id, firstName, salary, _change_type, _commit_version FROM table_changes_by_path('{P}', 3, 6) ORDER BY _commit_version, id, _change_type", "rows"},
	{"DESCRIBE HISTORY {T}", "history"},
	{"RESTORE TABLE {T} TO VERSION AS OF 3", "columns"},
	{"SELECT * FROM {T} ORDER BY id", "rows"},
	{"OPTIMIZE {T} ZORDER BY (salary)", "shape"},
	{"SELECT COUNT(*) AS n FROM {T}", "rows"},
	{"ALTER TABLE {T} SET TBLPROPERTIES ('team' = 'ops')", "rows"},
	// (Spark lists a table for VACUUM with 10,000 tasks unless told
	// otherwise; the setting changes no answer.)
	{"SET spark.databricks.delta.retentionDurationCheck.enabled = false; {SPARK:SET spark.sql.sources.parallelPartitionDiscovery.parallelism = 2; }VACUUM {T} RETAIN 0 HOURS DRY RUN", "columns"},
	// INSERT ... SELECT matches by position, whatever the names; BY NAME
	// by name.
	{"INSERT INTO {T} SELECT id + 100 AS id, gender AS firstName, firstName AS gender, salary FROM {T} WHERE id = 1", "rows"},
	{"INSERT INTO {T} BY NAME SELECT salary, gender, firstName, id + 200 AS id FROM {T} WHERE id = 1", "rows"},
	{"INSERT INTO {T} SELECT id, firstName FROM {T}", "error"},
	{"SELECT * FROM {T} WHERE id > 100 ORDER BY id", "rows"},
	// ALTER TABLE's column and constraint forms.
	{"ALTER TABLE {T} ADD COLUMNS (note STRING COMMENT 'free text', score INT AFTER id)", "rows"},
	{"ALTER TABLE {T} ALTER COLUMN firstName COMMENT 'given name'", "rows"},
	{"ALTER TABLE {T} ALTER COLUMN id DROP NOT NULL", "rows"},
	{"ALTER TABLE {T} ALTER COLUMN firstName SET NOT NULL", "error"},
	{"ALTER TABLE {T} ADD CONSTRAINT paid CHECK (salary IS NULL OR salary >= 0)", "rows"},
	{"INSERT INTO {T} (id, firstName, gender, salary) VALUES (9, 'Ivy', 'F', -1)", "error"},
	{"ALTER TABLE {T} DROP CONSTRAINT paid", "rows"},
	{"ALTER TABLE {T} SET TBLPROPERTIES ('delta.enableTypeWidening' = 'true')", "rows"},
	{"ALTER TABLE {T} ALTER COLUMN score TYPE BIGINT", "rows"},
	{"ALTER TABLE {T} SET TBLPROPERTIES ('delta.columnMapping.mode' = 'name')", "rows"},
	{"ALTER TABLE {T} RENAME COLUMN note TO remark", "rows"},
	{"ALTER TABLE {T} DROP COLUMN remark", "rows"},
	{"SELECT * FROM {T} WHERE id > 100 ORDER BY id", "rows"},
	// Spark's functions and literals, and the statement forms of the
	// docs lakelog added.
	{"UPDATE {T} SET firstName = concat(upper(firstName), '-', CAST(id AS STRING)) WHERE id < 5", "rows"},
	{"INSERT INTO {T} (id, firstName, gender, salary) VALUES (50, 'tab\\there', \"F\", 1), (51, 'O\\'Brien', 'M', 2)", "rows"},
	{"SELECT id, firstName AS f, length(firstName) AS n, coalesce(salary, -1) AS s, CASE WHEN salary > 4000 THEN 'high' ELSE 'low' END AS band, " +
		"year(DATE '2024-02-29') + CAST(id AS INT) % 3 AS y, md5(firstName) AS h, hash(id, firstName) AS mm FROM {T} ORDER BY id", "rows"},
	{"SELECT * FROM delta.`{P}@v1` ORDER BY id", "rows"},
	{"INSERT INTO {T} REPLACE WHERE id >= 50 SELECT 52 AS id, 0 AS score, 'Zed' AS firstName, 'M' AS gender, 9 AS salary", "rows"},
	{"SELECT * FROM {T} WHERE id >= 50 ORDER BY id", "rows"},
	{"SHOW TBLPROPERTIES {T}", "columns"},
	{"DESCRIBE HISTORY '{P}' LIMIT 1", "history"},
	// Moving and replacing columns, the table's description, the
	// symlink manifest (refused on a column-mapped table by both).
	{"ALTER TABLE {T} ALTER COLUMN salary FIRST", "rows"},
	{"ALTER TABLE {T} ALTER COLUMN gender AFTER id", "rows"},
	{"SELECT * FROM {T} WHERE id >= 50 ORDER BY id", "rows"},
	{"ALTER TABLE {T} REPLACE COLUMNS (id BIGINT, firstName STRING COMMENT 'name', gender STRING, salary INT, bonus DOUBLE)", "error"},
	{"ALTER TABLE {T} REPLACE COLUMNS (id BIGINT, gender STRING, score BIGINT, firstName STRING COMMENT 'name', salary INT, bonus DOUBLE)", "rows"},
	{"SELECT * FROM {T} WHERE id >= 50 ORDER BY id", "rows"},
	{"ALTER TABLE {T} REPLACE COLUMNS (id BIGINT, gender STRING, firstName STRING, salary INT, bonus DOUBLE)", "rows"},
	{"SELECT * FROM {T} WHERE id >= 50 ORDER BY id", "rows"},
	{"DESCRIBE TABLE EXTENDED {T}", "columns"},
	{"GENERATE symlink_format_manifest FOR TABLE {T}", "error"},
	{"DESCRIBE HISTORY {T}", "history"},
	// A shallow clone: the source's files by absolute path, written to
	// apart from the source.
	{"CREATE TABLE delta.`{P}_clone` SHALLOW CLONE {T} VERSION AS OF 3", "count"},
	{"SELECT * FROM delta.`{P}_clone` ORDER BY id", "rows"},
	{"UPDATE delta.`{P}_clone` SET salary = 1 WHERE id = 1", "rows"},
	{"SELECT * FROM delta.`{P}_clone` ORDER BY id", "rows"},
	{"SELECT * FROM {T} VERSION AS OF 3 ORDER BY id", "rows"},
	{"DESCRIBE HISTORY delta.`{P}_clone`", "history"},
	// A table replaced in one commit: schema, partitioning, properties
	// and rows. (Of a table named by its path, Spark's CREATE OR REPLACE
	// refuses another schema and with the same one keeps the rows and
	// commits nothing, delta-io/delta#827; lakelog replaces it as REPLACE
	// does, so the steps use REPLACE, and CREATE OR REPLACE where there is
	// no table.)
	{"REPLACE TABLE {T} (a INT, b STRING) USING DELTA PARTITIONED BY (b) TBLPROPERTIES ('team' = 'data')", "rows"},
	{"SELECT * FROM {T}", "rows"},
	{"INSERT INTO {T} VALUES (1, 'x'), (2, 'y')", "rows"},
	{"CREATE OR REPLACE TABLE delta.`{P}_new` (a INT, b STRING) USING DELTA", "rows"},
	{"SELECT * FROM delta.`{P}_new`", "rows"},
	{"REPLACE TABLE {T} USING DELTA AS SELECT a * 10 AS a, b FROM {T}", "rows"},
	{"SELECT * FROM {T} ORDER BY a", "rows"},
	{"DESCRIBE HISTORY {T} LIMIT 4", "history"},
}

// sparkOnly marks a statement only Spark runs: {SPARK:statement; }.
var sparkOnly = regexp.MustCompile(`\{SPARK:([^}]*)\}`)

// buildLakelog builds the lakelog command into dir.
func buildLakelog(t *testing.T, dir string) string {
	t.Helper()
	bin := filepath.Join(dir, "bin", "lakelog")
	cmd := exec.Command("go", "build", "-o", bin, "github.com/lakelog/lakelog/cmd/lakelog")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// TestSQLGoldenAgainstSpark runs Delta's documented SQL with lakelog sql
// and with Spark, each on its own fresh table, and compares the answers:
// the rows of every query and DML statement, the counts, the shape of
// OPTIMIZE's metrics, history's operations and metric names, and the
// statements both refuse. Spark runs every statement in one request (the
// JVM's time is the test's cost); lakelog runs each step as a user
// would, one process per step.
func TestSQLGoldenAgainstSpark(t *testing.T) {
	sp := requirePeer(t, spark)
	dir := t.TempDir()
	bin := buildLakelog(t, dir)
	updates := filepath.Join(dir, "updates.jsonl")
	if err := os.WriteFile(updates, []byte(`{"id": 1, "firstName": "ANN", "gender": "Female", "salary": 3100, "op": "update"}
{"id": 2, "firstName": "Bob", "gender": "M", "salary": 0, "op": "delete"}
{"id": 6, "firstName": "Fay", "gender": "F", "salary": 6000, "op": "insert"}
{"id": 7, "firstName": "Gus", "gender": "M", "salary": 7000, "op": "delete"}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	lakeTable, sparkTable := filepath.Join(dir, "lakelog", "people"), filepath.Join(dir, "spark", "people")
	fill := func(s, table string) string {
		return strings.NewReplacer("{T}", "delta.`"+table+"`", "{P}", table, "{U}", updates).Replace(s)
	}
	// Spark: every statement of every step, in one request; last[i] is
	// the index of step i's last statement.
	var stmts []string
	last := make([]int, len(sqlGoldenSteps))
	for i, step := range sqlGoldenSteps {
		stmts = append(stmts, strings.Split(sparkOnly.ReplaceAllString(fill(step.sql, sparkTable), "$1"), "; ")...)
		last[i] = len(stmts) - 1
	}
	begin := time.Now()
	// A statement takes Spark a second or more (three or more on a loaded
	// machine): the batch gets a minute a statement.
	res, err := sp.doWithin(request{Op: "sql_rows", Statements: stmts, KeepGoing: true}, time.Duration(len(stmts))*time.Minute)
	if err != nil {
		t.Fatalf("interop: %v", err)
	}
	if len(res.StatementRows) != len(stmts) {
		t.Fatalf("Spark answered %d statements of %d", len(res.StatementRows), len(stmts))
	}
	sparkTime := time.Since(begin)
	begin = time.Now()
	for i, step := range sqlGoldenSteps {
		what := fmt.Sprintf("step %d: %s", i+1, step.sql)
		sp := res.StatementRows[last[i]]
		cmd := exec.Command(bin, "sql", "--format", "json", "--catalog", filepath.Join(dir, "catalog.json"), sparkOnly.ReplaceAllString(fill(step.sql, lakeTable), ""))
		out, err := cmd.Output()
		var stderr string
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		if step.compare == "error" {
			switch {
			case err == nil:
				t.Errorf("%s: lakelog ran it; Spark: %s", what, orNone(sp.Error))
			case sp.Error == "":
				t.Errorf("%s: Spark ran it; lakelog: %v\n%s", what, err, stderr)
			default:
				t.Logf("%s: both refuse it\nlakelog: %s\nspark:   %s", what, strings.TrimSpace(stderr), sp.Error)
			}
			continue
		}
		if sp.Error != "" {
			t.Fatalf("%s: Spark: %s", what, sp.Error)
		}
		if err != nil {
			t.Fatalf("%s: lakelog: %v\n%s", what, err, stderr)
		}
		lakeRows, err := lakelogRows(out)
		if err != nil {
			t.Fatalf("%s: lakelog's output: %v\n%s", what, err, out)
		}
		compareSQL(t, what, step.compare, lakeRows, sp.Columns, sp.Rows)
	}
	// What the test costs, for CI's budget: the slowest Spark statements.
	order := make([]int, len(stmts))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return cmp.Compare(res.StatementRows[b].Seconds, res.StatementRows[a].Seconds) })
	var slow []string
	for _, i := range order[:min(3, len(order))] {
		slow = append(slow, fmt.Sprintf("%.1fs %.60s", res.StatementRows[i].Seconds, stmts[i]))
	}
	t.Logf("Spark: %d statements in %s (the worker started in %s); lakelog: %d steps in %s; slowest in Spark:\n  %s",
		len(stmts), sparkTime.Round(time.Millisecond), sp.started.Round(time.Millisecond), len(sqlGoldenSteps), time.Since(begin).Round(time.Millisecond), strings.Join(slow, "\n  "))
}

// lakelogRows are the rows of the last statement of lakelog sql's json
// output, which holds one document per statement: an array of rows, or
// for a statement that changes a table its record (statement, operation,
// version, operationMetrics), whose other keys are the columns of the
// row Spark returns for it, or whose "rows" are Spark's rows.
func lakelogRows(out []byte) ([]map[string]any, error) {
	d := json.NewDecoder(strings.NewReader(string(out)))
	var last json.RawMessage
	for d.More() {
		if err := d.Decode(&last); err != nil {
			return nil, err
		}
	}
	if last == nil {
		return nil, nil
	}
	var rows []map[string]any
	if err := json.Unmarshal(last, &rows); err == nil {
		return rows, nil
	}
	var rec map[string]any
	if err := json.Unmarshal(last, &rec); err != nil {
		return nil, err
	}
	if _, ok := rec["statement"]; !ok {
		return nil, fmt.Errorf("neither rows nor a statement's record")
	}
	if rs, ok := rec["rows"].([]any); ok {
		for _, r := range rs {
			rows = append(rows, r.(map[string]any))
		}
		return rows, nil
	}
	row := map[string]any{}
	for k, v := range rec {
		switch k {
		case "statement", "operation", "version", "operationMetrics":
		default:
			row[k] = v
		}
	}
	if len(row) == 0 {
		return nil, nil
	}
	return []map[string]any{row}, nil
}

func orNone(s string) string {
	if s == "" {
		return "(no error)"
	}
	return s
}

// compareSQL compares lakelog's rows (JSON objects) with Spark's.
func compareSQL(t *testing.T, what, mode string, lake []map[string]any, columns []string, spark [][]any) {
	t.Helper()
	if mode == "history" {
		compareHistory(t, what, lake, columns, spark)
		return
	}
	if len(spark) > 0 || len(lake) > 0 {
		var lakeCols []string
		if len(lake) > 0 {
			for k := range lake[0] {
				lakeCols = append(lakeCols, k)
			}
		}
		if !slices.Equal(slices.Sorted(slices.Values(lakeCols)), slices.Sorted(slices.Values(columns))) {
			t.Errorf("%s: lakelog's columns %v, Spark's %v", what, lakeCols, columns)
			return
		}
	}
	if mode == "columns" {
		return
	}
	if len(lake) != len(spark) {
		t.Errorf("%s: lakelog returned %d rows, Spark %d\nlakelog: %v\nspark: %v", what, len(lake), len(spark), lake, spark)
		return
	}
	if mode == "count" {
		return
	}
	if mode == "shape" {
		for i, row := range spark {
			for j, c := range columns {
				if got, want := shapeOf(lake[i][c]), shapeOf(row[j]); got != want {
					t.Errorf("%s: row %d, column %s: lakelog's shape\n  %s\nSpark's\n  %s", what, i+1, c, got, want)
				}
			}
		}
		return
	}
	for i, row := range spark {
		for j, c := range columns {
			if got, want := norm(lake[i][c]), norm(row[j]); got != want {
				t.Errorf("%s: row %d, column %s: lakelog %s, Spark %s", what, i+1, c, got, want)
			}
		}
	}
}

// norm is a value as comparable text.
func norm(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// compareHistory compares DESCRIBE HISTORY: the same versions with the
// same operations, and the same operationMetrics names.
func compareHistory(t *testing.T, what string, lake []map[string]any, columns []string, spark [][]any) {
	t.Helper()
	col := func(name string) int { return slices.Index(columns, name) }
	vi, oi, mi := col("version"), col("operation"), col("operationMetrics")
	if vi < 0 || oi < 0 || mi < 0 {
		t.Fatalf("%s: Spark's history lacks version, operation or operationMetrics: %v", what, columns)
	}
	if len(lake) != len(spark) {
		t.Errorf("%s: lakelog's history has %d versions, Spark's %d", what, len(lake), len(spark))
		return
	}
	for i, row := range spark {
		l := lake[i]
		if norm(l["version"]) != norm(row[vi]) || l["operation"] != row[oi] {
			t.Errorf("%s: entry %d: lakelog version %v %v, Spark %v %v", what, i, l["version"], l["operation"], row[vi], row[oi])
			continue
		}
		lakeNames := metricNames(l["operationMetrics"])
		sparkNames := metricNames(row[mi])
		if !slices.Equal(lakeNames, sparkNames) {
			t.Errorf("%s: version %v %v: operationMetrics names differ\nlakelog: %v\nspark:   %v", what, row[vi], row[oi], lakeNames, sparkNames)
		}
	}
}

// metricNames are the keys of an operationMetrics map, in lakelog's
// canonical form ([[k, v], ...]) or Spark's (an object), sorted.
func metricNames(v any) []string {
	var out []string
	switch m := v.(type) {
	case map[string]any:
		for k := range m {
			out = append(out, k)
		}
	case []any:
		for _, kv := range m {
			if p, ok := kv.([]any); ok && len(p) == 2 {
				out = append(out, fmt.Sprint(p[0]))
			}
		}
	}
	slices.Sort(out)
	return out
}

// shapeOf is a value's shape: the field names of a struct (an object),
// sorted, each with its own shape; "value" for anything else.
func shapeOf(v any) string {
	m, ok := v.(map[string]any)
	if !ok {
		return "value"
	}
	keys := slices.Sorted(maps.Keys(m))
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k
		if s := shapeOf(m[k]); s != "value" {
			parts[i] += ":" + s
		}
	}
	return "{" + strings.Join(parts, ", ") + "}"
}
