package deltasql

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/objstore"
)

// A SHALLOW CLONE's log names the source's files by absolute path (and
// its deletion vector files likewise); the clone reads them, writes to
// its own folder, and never changes the source. CREATE OR REPLACE ...
// SHALLOW CLONE replaces a clone with the source's latest files.
func TestShallowClone(t *testing.T) {
	dir := t.TempDir()
	src, cl := filepath.Join(dir, "src"), filepath.Join(dir, "clone")
	S, C := "delta.`"+src+"`", "delta.`"+cl+"`"
	sess := New()
	defer sess.Close()
	runSQL(t, sess, "CREATE TABLE "+S+" (id INT, p STRING) USING DELTA PARTITIONED BY (p) TBLPROPERTIES ('delta.enableDeletionVectors' = 'true')")
	runSQL(t, sess, "INSERT INTO "+S+" VALUES (1, 'a'), (2, 'a'), (3, 'b')")
	runSQL(t, sess, "DELETE FROM "+S+" WHERE id = 2")
	row := runSQL(t, sess, "CREATE TABLE "+C+" SHALLOW CLONE "+S+" TBLPROPERTIES ('owner' = 'qa')")
	if len(row) != 1 || !strings.Contains(row[0], `"source_num_of_files":2`) || !strings.Contains(row[0], `"num_copied_files":0`) {
		t.Errorf("CLONE's row: %v", row)
	}
	// The clone's own folder holds only its log.
	entries, _ := os.ReadDir(cl)
	if len(entries) != 1 || entries[0].Name() != "_delta_log" {
		t.Errorf("the clone's folder holds %v", entries)
	}
	ctx := context.Background()
	st, err := objstore.Open(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	defer objstore.Close(st)
	snap, err := deltalog.Open(ctx, st, "")
	if err != nil {
		t.Fatal(err)
	}
	for f := range snap.Files() {
		if !strings.HasPrefix(f.Path, "file://"+src+"/") {
			t.Errorf("the clone's add names %s, not the source's file by absolute path", f.Path)
		}
		if dv := f.DeletionVector; dv != nil && dv.StorageType != "i" && (dv.StorageType != "p" || !strings.HasPrefix(dv.PathOrInlineDv, "file://"+src+"/")) {
			t.Errorf("the clone's deletion vector %+v is not the source's by absolute path", dv)
		}
	}
	if v := snap.Properties(); snap.Metadata().Configuration["owner"] != "qa" || !v.EnableDeletionVectors {
		t.Errorf("the clone's properties %v", snap.Metadata().Configuration)
	}
	want := []string{`{"id":1,"p":"a"}`, `{"id":3,"p":"b"}`}
	if got := runSQL(t, sess, "SELECT * FROM "+C+" ORDER BY id"); !slices.Equal(got, want) {
		t.Errorf("the clone reads %v, want %v", got, want)
	}
	runSQL(t, sess, "UPDATE "+C+" SET id = id * 10 WHERE p = 'a'")
	runSQL(t, sess, "DELETE FROM "+C+" WHERE id = 3")
	if got := runSQL(t, sess, "SELECT * FROM "+C+" ORDER BY id"); !slices.Equal(got, []string{`{"id":10,"p":"a"}`}) {
		t.Errorf("the clone after its writes reads %v", got)
	}
	if got := runSQL(t, sess, "SELECT * FROM "+S+" ORDER BY id"); !slices.Equal(got, want) {
		t.Errorf("the source after the clone's writes reads %v, want %v", got, want)
	}
	// Replace the clone with the source's newer version.
	runSQL(t, sess, "INSERT INTO "+S+" VALUES (4, 'c')")
	runSQL(t, sess, "CREATE OR REPLACE TABLE "+C+" SHALLOW CLONE "+S)
	if got := runSQL(t, sess, "SELECT * FROM "+C+" ORDER BY id"); !slices.Equal(got, append(want, `{"id":4,"p":"c"}`)) {
		t.Errorf("the replaced clone reads %v", got)
	}
	// An existing table is not cloned over; a clone at a version reads
	// that version.
	if _, err := sess.Run(ctx, mustParse(t, "CREATE TABLE "+C+" SHALLOW CLONE "+S)); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Errorf("clone over an existing table: %v", err)
	}
	// A deletion vector in its own file (more than ~110 scattered rows)
	// is named by its absolute path too, and read.
	big, bigClone := "delta.`"+filepath.Join(dir, "big")+"`", "delta.`"+filepath.Join(dir, "bigclone")+"`"
	runSQL(t, sess, "CREATE TABLE "+big+" (id INT) USING DELTA TBLPROPERTIES ('delta.enableDeletionVectors' = 'true')")
	var values []string
	for i := range 1000 {
		values = append(values, "("+strconv.Itoa(i)+")")
	}
	runSQL(t, sess, "INSERT INTO "+big+" VALUES "+strings.Join(values, ", "))
	runSQL(t, sess, "DELETE FROM "+big+" WHERE id % 3 = 0")
	runSQL(t, sess, "CREATE TABLE "+bigClone+" SHALLOW CLONE "+big)
	bst, err := objstore.Open(ctx, filepath.Join(dir, "bigclone"))
	if err != nil {
		t.Fatal(err)
	}
	defer objstore.Close(bst)
	bsnap, err := deltalog.Open(ctx, bst, "")
	if err != nil {
		t.Fatal(err)
	}
	files := 0
	for f := range bsnap.Files() {
		if dv := f.DeletionVector; dv == nil || dv.StorageType != "p" || !strings.HasPrefix(dv.PathOrInlineDv, "file://"+filepath.Join(dir, "big")+"/") {
			t.Errorf("the clone's deletion vector %+v is not the source's file by absolute path", dv)
		}
		files++
	}
	if got := runSQL(t, sess, "SELECT COUNT(*) AS n FROM "+bigClone); files != 1 || !slices.Equal(got, []string{`{"n":666}`}) {
		t.Errorf("%d files; the clone counts %v rows, want 666", files, got)
	}
	runSQL(t, sess, "CREATE TABLE delta.`"+filepath.Join(dir, "v1")+"` SHALLOW CLONE "+S+" VERSION AS OF 1")
	if got := runSQL(t, sess, "SELECT * FROM delta.`"+filepath.Join(dir, "v1")+"` ORDER BY id"); len(got) != 3 {
		t.Errorf("the clone of version 1 reads %v", got)
	}
}

func mustParse(t *testing.T, text string) *Statement {
	t.Helper()
	stmts, err := Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	return stmts[0]
}

// A statement under a session time zone other than UTC: every
// expression of the tree gets the zone, those in unexported fields too
// (this once panicked).
func TestSessionTimeZoneReachesEveryExpression(t *testing.T) {
	sess := New()
	defer sess.Close()
	runSQL(t, sess, "SET TIME ZONE 'Australia/Lord_Howe'")
	got := runSQL(t, sess, "SELECT timestamp_micros(1) AS a, to_json(array(TIMESTAMP '2024-03-10 00:00:00')) AS j")
	want := `{"a":"1970-01-01T00:00:00.000001Z","j":"[\"2024-03-10T00:00:00.000+11:00\"]"}`
	if len(got) != 1 || got[0] != want {
		t.Errorf("got %v, want %s", got, want)
	}
}
