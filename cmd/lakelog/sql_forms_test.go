package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// genericOrInternal matches what no message of `lakelog sql` may say: a
// bare "expected a statement", a Go value or type, a file of the source,
// an issue number, a panic.
var genericOrInternal = regexp.MustCompile(`expected a statement|<nil>|%!|\.go:|\*[a-z]+\.[A-Z]|goroutine|panic|runtime error|issue [0-9]|deltasql:|expr: bind|unsupported node`)

// Every statement form Spark users type from Delta's and Databricks'
// docs runs, or is refused with a message that says what to do instead;
// and malformed statements get a message about their own mistake, never
// a generic parse error or a name from inside lakelog.
func TestSQLStatementForms(t *testing.T) {
	dir, people := newPeople(t)
	tp := "delta.`" + people + "`"
	parquetDir := filepath.Join(dir, "pq")
	if err := os.MkdirAll(parquetDir, 0o755); err != nil {
		t.Fatal(err)
	}
	// A folder of Parquet files to convert: the table's own data files.
	entries, _ := filepath.Glob(filepath.Join(people, "country=nl", "*.parquet"))
	for i, e := range entries {
		b, err := os.ReadFile(e)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(parquetDir, "part-"+string(rune('a'+i))+".parquet"), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	src := writeFile(t, dir, "src.jsonl", `{"id": 2, "name": "BOB", "amount": "21.00", "country": "nl", "extra": "x"}`+"\n")
	csvFile := writeFile(t, dir, "typed.csv", "id;d;amount\n1;2024-01-15;1.5\n2;2024-02-29;2.25\n")
	runs := []string{
		"SELECT SUM(id), max(d), sum(amount) FROM read_files('" + csvFile + "', format => 'csv', header => true, inferSchema => true, delimiter => ';')",
		"SELECT _c0 FROM read_files('" + csvFile + "', header => 'false', sep => ';')",
		"SELECT id + 1, d FROM read_files('" + csvFile + "', sep => ';', schema => 'id INT, d DATE, amount DECIMAL(5,2)')",
		"UPDATE " + tp + " SET name = upper(name) WHERE id = 1",
		"UPDATE " + tp + " SET name = concat_ws('-', name, CAST(id AS STRING)), amount = round(amount * 1.1, 2) WHERE country = 'de'",
		"INSERT INTO " + tp + " VALUES (10, 'tab\\there', 1.50, 'fr'), (11, \"O'Brien\", 2, 'fr'), (12, 'O\\'Brien', 3L, 'fr')",
		"INSERT INTO " + tp + " PARTITION (country = 'be') VALUES (20, 'eve', 5.00)",
		"INSERT INTO " + tp + " PARTITION (country = 'be') SELECT id + 100, name, amount FROM " + tp + " WHERE id = 1",
		"INSERT INTO " + tp + " REPLACE WHERE country = 'be' SELECT 30 AS id, 'finn' AS name, 7.00 AS amount, 'be' AS country",
		"SELECT id, upper(name) AS n, length(name), year(current_date()) > 2000, coalesce(amount, 0) FROM " + tp + " ORDER BY id",
		"SELECT id, CASE WHEN amount > 20 THEN 'big' ELSE 'small' END AS size FROM " + tp + " WHERE name RLIKE '^[a-z]' ORDER BY id",
		"SELECT * FROM " + tp + " WHERE date_add(current_date(), 1) > current_date() AND id IN (1, 2)",
		"SELECT * FROM delta.`" + people + "@v1`",
		"SELECT array(1, 2)[0], map('k', 1)['k'], named_struct('a', 1).a, element_at(array(1, 2), -1), size(array(1))",
		"SELECT md5('x'), sha2('x', 256), crc32('x'), hash('x'), xxhash64('x'), uuid() IS NOT NULL",
		"SELECT to_json(named_struct('id', id, 'name', name)), get_json_object('{\"a\":{\"b\":[1,2]}}', '$.a.b[1]') FROM " + tp,
		"DESCRIBE HISTORY '" + people + "'",
		"DESCRIBE TABLE EXTENDED " + tp,
		"SHOW TBLPROPERTIES " + tp,
		"SHOW TBLPROPERTIES " + tp + " ('delta.minReaderVersion')",
		"SHOW COLUMNS IN " + tp,
		"SHOW CREATE TABLE " + tp,
		"MERGE WITH SCHEMA EVOLUTION INTO " + tp + " AS t USING json.`" + src + "` AS s ON t.id = s.id WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *",
		"SET spark.databricks.delta.schema.autoMerge.enabled = true",
		"SET spark.sql.session.timeZone = America/Los_Angeles",
		"SET TIME ZONE 'Europe/Paris'",
		"SELECT hour(TIMESTAMP '2024-03-10 12:00:00'), date_format(current_timestamp(), 'yyyy') FROM " + tp + " LIMIT 1",
		"CONVERT TO DELTA parquet.`" + parquetDir + "`",
		"SET spark.databricks.delta.retentionDurationCheck.enabled = false; VACUUM '" + people + "' RETAIN 0 HOURS DRY RUN",
		"VACUUM " + tp + " FULL DRY RUN",
		"ALTER TABLE " + tp + " ALTER COLUMN name FIRST",
		"ALTER TABLE " + tp + " CHANGE COLUMN name AFTER amount",
		"CREATE OR REPLACE TABLE delta.`" + filepath.Join(dir, "r") + "` (a INT, b STRING) USING DELTA",
		"CREATE OR REPLACE TABLE delta.`" + filepath.Join(dir, "r") + "` USING DELTA PARTITIONED BY (b) AS SELECT 1 AS a, 'x' AS b",
		"REPLACE TABLE delta.`" + filepath.Join(dir, "r") + "` (z DOUBLE) USING DELTA TBLPROPERTIES ('delta.logRetentionDuration' = 'interval 60 days')",
		"CREATE TABLE delta.`" + filepath.Join(dir, "clone") + "` SHALLOW CLONE " + tp + " TBLPROPERTIES ('team' = 'qa')",
		"SELECT COUNT(*) FROM delta.`" + filepath.Join(dir, "clone") + "`",
		"CREATE OR REPLACE TABLE delta.`" + filepath.Join(dir, "clone") + "` SHALLOW CLONE " + tp + " VERSION AS OF 1",
		"GENERATE symlink_format_manifest FOR TABLE delta.`" + filepath.Join(dir, "r") + "`",
	}
	for _, s := range runs {
		code, _, errOut := lakelog(t, "sql", s)
		if code != exitOK {
			t.Errorf("%s: exit %d: %s", s, code, errOut)
		}
	}
	refused := []string{
		"OPTIMIZE " + tp + " FULL",
		"VACUUM " + tp + " LITE",
		"REORG TABLE " + tp + " APPLY (PURGE)",
		"DROP TABLE " + tp,
		"TRUNCATE TABLE " + tp,
		"USE default",
		"EXPLAIN SELECT * FROM " + tp,
		"SHOW TABLES",
		"SET spark.sql.ansi.enabled = false",
		"SET spark.some.unknown = 1",
		"WITH x AS (SELECT 1) SELECT * FROM x",
		"CACHE TABLE " + tp,
		// After the latest version: refused, as Spark refuses it.
		"SELECT * FROM " + tp + " TIMESTAMP AS OF current_timestamp() + INTERVAL 1 DAY",
	}
	malformed := []string{
		"SELEC * FROM " + tp,
		"SELECT * FORM " + tp,
		"SELECT upper(name FROM " + tp,
		"SELECT nosuchfn(name) FROM " + tp,
		"SELECT upper(name, 1) FROM " + tp,
		"SELECT 'unterminated FROM " + tp,
		"SELECT CASE WHEN id > 1 THEN 'a' FROM " + tp,
		"SELECT id + FROM " + tp,
		"SELECT * FROM " + tp + " WHERE",
		"SELECT * FROM " + tp + " WHERE id =",
		"SELECT * FROM " + tp + " WHERE nosuch = 1",
		"SELECT * FROM " + tp + " WHERE name = 1 +",
		"SELECT * FROM " + tp + " VERSION AS OF -1",
		"SELECT * FROM " + tp + "@x1",
		"SELECT INTERVAL 1 FORTNIGHT",
		"SELECT INTERVAL 1 MONTH 2 DAYS",
		"SELECT CAST(1 AS nosuchtype)",
		"SELECT date_add('x')",
		"SELECT array(1)[",
		"SELECT map(1)",
		"INSERT INTO " + tp + " VALUES (1, 'a')",
		"INSERT INTO " + tp + " VALUES",
		"INSERT " + tp + " VALUES (1, 'a', 1, 'x')",
		"INSERT INTO " + tp + " PARTITION (nosuch = 1) VALUES (1, 'a', 1)",
		"UPDATE " + tp + " SET = 1",
		"UPDATE " + tp + " SET name = lower() WHERE id = 1",
		"DELETE " + tp + " WHERE id = 1",
		"DELETE FROM " + tp + " WHERE id = = 1",
		"MERGE INTO " + tp + " USING " + tp + " ON",
		"MERGE INTO " + tp + " t USING " + tp + " s ON t.id = s.id WHEN MATCHED THEN",
		"ALTER TABLE " + tp + " ADD COLUMNS",
		"ALTER TABLE " + tp + " REPLACE COLUMNS (id long)",
		"ALTER TABLE " + tp + " ALTER COLUMN nosuch FIRST",
		"ALTER TABLE " + tp + " ALTER COLUMN name AFTER name",
		"ALTER TABLE " + tp + " REPLACE COLUMNS (id string)",
		"REPLACE TABLE delta.`" + filepath.Join(dir, "nosuch") + "` (a INT) USING DELTA",
		"CREATE OR REPLACE TABLE IF NOT EXISTS " + tp + " (a INT) USING DELTA",
		"CREATE TABLE c DEEP CLONE " + tp,
		"CREATE TABLE c SHALLOW CLONE",
		"CREATE TABLE delta.`" + filepath.Join(dir, "c2") + "` SHALLOW CLONE " + tp + " VERSION AS OF 99",
		"CREATE TABLE c SHALLOW CLONE csv.`/x.csv`",
		"GENERATE FOR TABLE " + tp,
		"GENERATE nosuch FOR TABLE " + tp,
		"GENERATE symlink_format_manifest " + tp,
		"ALTER TABLE " + tp + " REPLACE COLUMNS ()",
		"REPLACE " + tp,
		"ALTER TABLE " + tp + " DROP FEATURE deletionVectors",
		"SELECT from_json(name, 'a NOSUCHTYPE') FROM " + tp,
		"SELECT from_json(name, name) FROM " + tp,
		"SELECT json_tuple(name, 'a') FROM " + tp,
		"SELECT get_json_object(name, '$.a[*]') FROM " + tp,
		"ALTER TABLE " + tp + " DROP FEATURE deletionVectors TRUNCATE HISTORY",
		"CREATE TABLE",
		"CONVERT TO DELTA csv.`/x.csv`",
		"SHOW TBLPROPERTIES",
		"DESCRIBE HISTORY",
		"VACUUM " + tp + " RETAIN HOURS",
		"RESTORE " + tp,
		"SET TIME ZONE 'Mars/Olympus'",
		"SELECT * FROM read_files('" + csvFile + "', header => maybe)",
		"SELECT * FROM read_files('" + csvFile + "', nosuch => 'x')",
		"SELECT * FROM read_files('" + csvFile + "', delimiter => ';;')",
		"SELECT * FROM read_files('" + csvFile + "', schema => 'id NOSUCHTYPE')",
		"SELECT * FROM read_files('" + csvFile + "', sep => ';', schema => 'nosuch INT')",
	}
	if len(malformed) < 30 {
		t.Fatalf("only %d malformed statements", len(malformed))
	}
	for _, s := range append(refused, malformed...) {
		code, out, errOut := lakelog(t, "sql", s)
		if code == exitOK {
			t.Errorf("%s: ran (stdout %q)", s, out)
			continue
		}
		if strings.TrimSpace(errOut) == "" {
			t.Errorf("%s: exit %d with no message", s, code)
			continue
		}
		if m := genericOrInternal.FindString(errOut); m != "" {
			t.Errorf("%s: the message says %q:\n%s", s, m, errOut)
		}
	}
}
