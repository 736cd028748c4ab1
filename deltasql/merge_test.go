package deltasql

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestMergeEmptySource: MERGE from a Delta table without rows runs (its
// schema comes from the table, not from a batch): NOT MATCHED BY SOURCE
// deletes every target row, as in Spark. It failed with "the source
// yielded no batch".
func TestMergeEmptySource(t *testing.T) {
	dir := t.TempDir()
	target := "delta.`" + filepath.Join(dir, "t") + "`"
	source := "delta.`" + filepath.Join(dir, "s") + "`"
	sess := New()
	defer sess.Close()
	runSQL(t, sess, "CREATE TABLE "+target+" (k BIGINT, v STRING) USING delta")
	runSQL(t, sess, "CREATE TABLE "+source+" (k BIGINT, v STRING) USING delta")
	runSQL(t, sess, "INSERT INTO "+target+" VALUES (1, 'a'), (2, 'b')")
	runSQL(t, sess, "MERGE INTO "+target+" AS t USING "+source+" AS s ON t.k = s.k WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT * WHEN NOT MATCHED BY SOURCE AND t.k = 1 THEN DELETE")
	if got := strings.Join(runSQL(t, sess, "SELECT k, v FROM "+target+" ORDER BY k"), "\n"); got != `{"k":2,"v":"b"}` {
		t.Errorf("rows after MERGE from an empty source:\n%s\nwant {\"k\":2,\"v\":\"b\"}", got)
	}
}
