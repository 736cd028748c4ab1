package interop

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lakelog/lakelog/cdf"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/dml"
	"github.com/lakelog/lakelog/expr"
	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/reader"
	"github.com/lakelog/lakelog/sharing"
	"github.com/lakelog/lakelog/writer"
)

// requireSharingPython is the python of the venv holding the Delta
// Sharing connector (LAKELOG_SHARING_PYTHON, set by peers_env), or ends
// the test as requirePeer does: fails under CI, skips with
// LAKELOG_SKIP_PEERS=1.
func requireSharingPython(t *testing.T) string {
	t.Helper()
	py := os.Getenv("LAKELOG_SHARING_PYTHON")
	if py != "" {
		if _, err := exec.LookPath(py); err == nil {
			return py
		}
	}
	switch {
	case os.Getenv("CI") == "true":
		t.Fatalf("interop: the delta-sharing connector is missing under CI (LAKELOG_SHARING_PYTHON=%q): .ci/run must install it (source .ci/peers.sh; peers_install; peers_env)", py)
	case os.Getenv("LAKELOG_SKIP_PEERS") == "1":
		t.Skipf("interop: the delta-sharing connector is missing and LAKELOG_SKIP_PEERS=1: skipping")
	default:
		t.Fatalf("interop: the delta-sharing connector is missing (LAKELOG_SHARING_PYTHON=%q): source .ci/peers.sh; peers_install; peers_env, or LAKELOG_SKIP_PEERS=1", py)
	}
	return ""
}

// sharingPeer runs the connector against one server.
type sharingPeer struct {
	t       *testing.T
	py      string
	profile string
}

type sharingReq struct {
	Op                string `json:"op"`
	Profile           string `json:"profile"`
	Table             string `json:"table,omitempty"`
	Version           *int64 `json:"version,omitempty"`
	Timestamp         string `json:"timestamp,omitempty"`
	Limit             *int64 `json:"limit,omitempty"`
	JSONPredicate     string `json:"json_predicate,omitempty"`
	UseDeltaFormat    *bool  `json:"use_delta_format,omitempty"`
	StartingVersion   *int64 `json:"starting_version,omitempty"`
	EndingVersion     *int64 `json:"ending_version,omitempty"`
	StartingTimestamp string `json:"starting_timestamp,omitempty"`
	Ref               string `json:"ref,omitempty"`
	Out               string `json:"out,omitempty"`
}

type sharingResp struct {
	OK        bool     `json:"ok"`
	Error     string   `json:"error"`
	Traceback string   `json:"traceback"`
	Rows      int64    `json:"rows"`
	Version   int64    `json:"version"`
	Tables    []string `json:"tables"`
}

func (p *sharingPeer) call(req sharingReq) (*sharingResp, error) {
	p.t.Helper()
	req.Profile = p.profile
	b, _ := json.Marshal(req)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, p.py, "sharing_client.py", string(b))
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	start := time.Now()
	err := cmd.Run()
	p.t.Logf("connector %s %s: %.1fs", req.Op, req.Table, time.Since(start).Seconds())
	var resp sharingResp
	if jerr := json.Unmarshal(out.Bytes(), &resp); jerr != nil {
		return nil, fmt.Errorf("connector %s: %v; stdout %q stderr %s", req.Op, err, out.String(), tail(errb.String()))
	}
	if !resp.OK {
		return &resp, fmt.Errorf("connector %s: %s\n%s", req.Op, resp.Error, resp.Traceback)
	}
	return &resp, nil
}

func tail(s string) string {
	if len(s) > 3000 {
		return "..." + s[len(s)-3000:]
	}
	return s
}

// rows asks the connector for rows (load or changes), written with the
// columns and types of want's reference file, and returns them as sorted
// canonical lines.
func (p *sharingPeer) rows(req sharingReq, ref []arrow.RecordBatch) []string {
	p.t.Helper()
	dir := p.t.TempDir()
	req.Ref, req.Out = filepath.Join(dir, "ref.parquet"), filepath.Join(dir, "out.parquet")
	writeRef(p.t, req.Ref, ref)
	resp, err := p.call(req)
	if err != nil {
		p.t.Fatal(err)
	}
	lines := parquetLines(p.t, req.Out)
	if int64(len(lines)) != resp.Rows {
		p.t.Fatalf("connector wrote %d rows, the file holds %d", resp.Rows, len(lines))
	}
	return nanAsNull(lines)
}

// nanAsNull replaces NaN values by null in canonical lines: pandas holds
// a missing float as NaN, so the connector's frames cannot tell the two
// apart, and both sides are compared with NaN read as null.
func nanAsNull(lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = strings.ReplaceAll(l, `:"NaN"`, `:null`)
	}
	slices.Sort(out)
	return out
}

// writeRef writes the schema of recs (an empty file of it when there are
// no rows) for the connector to cast its frame to.
func writeRef(t *testing.T, path string, recs []arrow.RecordBatch) {
	t.Helper()
	writeParquet(t, path, recs...)
}

// lakelogRecs reads a scan of snap and returns its batches (retained)
// and canonical lines.
func lakelogRecs(t *testing.T, snap *deltalog.Snapshot, opts ...reader.Option) ([]arrow.RecordBatch, []string) {
	t.Helper()
	sc, err := reader.NewScan(snap, opts...)
	if err != nil {
		t.Fatal(err)
	}
	var recs []arrow.RecordBatch
	for rec, err := range sc.Records(context.Background()) {
		if err != nil {
			t.Fatal(err)
		}
		rec.Retain()
		recs = append(recs, rec)
	}
	if len(recs) == 0 {
		recs = append(recs, array.NewRecordBatch(sc.Schema(), emptyColumns(sc.Schema()), 0))
	}
	return recs, nanAsNull(canonical(t, recs...))
}

func emptyColumns(sc *arrow.Schema) []arrow.Array {
	var cols []arrow.Array
	for _, f := range sc.Fields() {
		cols = append(cols, array.MakeArrayOfNull(memory.DefaultAllocator, f.Type, 0))
	}
	return cols
}

// lakelogFeed reads the change data feed from..to with lakelog.
func lakelogFeed(t *testing.T, store objstore.Store, from, to int64) ([]arrow.RecordBatch, []string) {
	t.Helper()
	f, err := cdf.Open(context.Background(), store, "", cdf.Versions(from, to))
	if err != nil {
		t.Fatal(err)
	}
	var recs []arrow.RecordBatch
	for rec, err := range f.Records(context.Background()) {
		if err != nil {
			t.Fatal(err)
		}
		rec.Retain()
		recs = append(recs, rec)
	}
	return recs, nanAsNull(canonical(t, recs...))
}

// sharedTables builds the two tables the connector reads: "plain" (every
// common type, partitioned by day, the change feed, copy-on-write DELETE
// and UPDATE) and "dv" (deletion vectors: DELETE and UPDATE mark rows),
// each over five versions.
func sharedTables(t *testing.T, newStore func(name string) (objstore.Store, string)) (plain, dv objstore.Store, plainDir, dvDir string) {
	ctx := context.Background()
	schema, asc := tableSchema(t, "id long not null, name string, score double, day date, at timestamp, amount decimal(12,3), ok boolean")
	g := newGen(38)
	build := func(name string, props map[string]string, opts ...dml.Option) (objstore.Store, string) {
		store, dir := newStore(name)
		createTable(t, store, "", schema, []string{"day"}, props, g.batch(memory.DefaultAllocator, asc, 60))
		for range 2 {
			if _, err := writer.Append(ctx, open(t, store, ""), seq(g.batch(memory.DefaultAllocator, asc, 40)), writer.WithCommitOptions(noHooks)); err != nil {
				t.Fatal(err)
			}
		}
		del, _ := expr.Parse("score > 0.5")
		if _, err := dml.Delete(ctx, open(t, store, ""), del, opts...); err != nil {
			t.Fatal(err)
		}
		set, err := expr.ParseAssignment("name = 'updated'")
		if err != nil {
			t.Fatal(err)
		}
		upd, _ := expr.Parse("id % 3 = 0")
		if _, err := dml.Update(ctx, open(t, store, ""), upd, []*expr.Assignment{set}, opts...); err != nil {
			t.Fatal(err)
		}
		return store, dir
	}
	cdfOn := map[string]string{"delta.enableChangeDataFeed": "true"}
	plain, plainDir = build("plain", cdfOn, dml.WithoutDeletionVectors())
	dv, dvDir = build("dv", map[string]string{"delta.enableChangeDataFeed": "true", "delta.enableDeletionVectors": "true"})
	return plain, dv, plainDir, dvDir
}

// startSharing serves the two tables over httptest and writes the
// recipient's profile.
func startSharing(t *testing.T, plainDir, dvDir string) string {
	token, _ := sharing.NewToken()
	text := fmt.Sprintf(`version: 1
accessLog: off
shares:
- name: share
  schemas:
  - name: db
    tables:
    - name: plain
      location: %q
      historyShared: true
    - name: dv
      location: %q
      historyShared: true
recipients:
- name: r
  token: %s
  shares: [share]
`, plainDir, dvDir, token)
	cfg, err := sharing.ParseConfig("shares.yaml", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	srv, err := sharing.New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(func() { hs.Close(); srv.Close() })
	p, err := cfg.Profile("r", hs.URL+"/delta-sharing", "")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(p)
	path := filepath.Join(t.TempDir(), "r.share")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestSharingPython: the delta-sharing Python connector (PyPI) loads
// lakelog's shared tables as pandas: the latest version, a version, a
// timestamp, with a JSON predicate on the partition column and with a
// limit, in the parquet format; the change feed of the table with
// change data files; and, in the delta format (the connector reads
// through delta-kernel-rs), the table with deletion vectors and its feed.
// Rows equal lakelog's own reads.
//
// Spark's connector is not tested: the Maven Central this CI reaches
// serves no io.delta delta-sharing-spark artifact (tried on 2026-12-07:
// delta-sharing-spark_2.13 3.1.0, 3.2.0, 3.2.1, 3.3.0, 3.3.2, 4.0.0,
// 4.4.0; delta-sharing-spark_2.12 1.0.5, 3.2.0, 3.3.0; the Spark-suffixed
// names _4.0_2.13, _4.1_2.13 and _4.2_2.13 at 4.0.0-4.4.0; all 404,
// while delta-spark_4.2_2.13 4.4.0 resolves).
func TestSharingPython(t *testing.T) {
	py := requireSharingPython(t)
	plain, dv, plainDir, dvDir := sharedTables(t, func(string) (objstore.Store, string) { return newLocal(t) })
	p := &sharingPeer{t: t, py: py, profile: startSharing(t, plainDir, dvDir)}
	resp, err := p.call(sharingReq{Op: "list"})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(resp.Tables, ",") != "share.db.plain,share.db.dv" {
		t.Errorf("list_all_tables: %v", resp.Tables)
	}
	latest := open(t, plain, "")
	t.Run("latest", func(t *testing.T) {
		recs, want := lakelogRecs(t, latest)
		sameRows(t, "connector latest", p.rows(sharingReq{Op: "load", Table: "share.db.plain"}, recs), want)
	})
	t.Run("version", func(t *testing.T) {
		v1 := open(t, plain, "", deltalog.AtVersion(1))
		recs, want := lakelogRecs(t, v1)
		sameRows(t, "connector version 1", p.rows(sharingReq{Op: "load", Table: "share.db.plain", Version: ptr(int64(1))}, recs), want)
	})
	t.Run("timestamp", func(t *testing.T) {
		v2 := open(t, plain, "", deltalog.AtVersion(2))
		ts := v2.Timestamp().UTC().Format("2006-01-02T15:04:05.000Z")
		recs, want := lakelogRecs(t, v2)
		sameRows(t, "connector at "+ts, p.rows(sharingReq{Op: "load", Table: "share.db.plain", Timestamp: ts}, recs), want)
		got, err := p.call(sharingReq{Op: "version", Table: "share.db.plain", StartingTimestamp: ts})
		if err != nil || got.Version != 2 {
			t.Errorf("get_table_version at %s: %v %v", ts, got, err)
		}
	})
	t.Run("predicate", func(t *testing.T) {
		var day string
		for a := range latest.Files() {
			day = *a.PartitionValues["day"]
			break
		}
		pred := fmt.Sprintf(`{"op":"equal","children":[{"op":"column","name":"day","valueType":"date"},{"op":"literal","value":"%s","valueType":"date"}]}`, day)
		e, _ := expr.Parse("day = DATE '" + day + "'")
		recs, want := lakelogRecs(t, latest, reader.WithFilter(e))
		if len(want) == 0 || len(want) == int(mustCount(t, latest)) {
			t.Fatalf("the predicate keeps %d rows: a poor test", len(want))
		}
		sameRows(t, "connector with day = "+day, p.rows(sharingReq{Op: "load", Table: "share.db.plain", JSONPredicate: pred}, recs), want)
	})
	t.Run("limit", func(t *testing.T) {
		recs, all := lakelogRecs(t, latest)
		got := p.rows(sharingReq{Op: "load", Table: "share.db.plain", Limit: ptr(int64(7))}, recs)
		if len(got) != 7 {
			t.Fatalf("limit 7: %d rows", len(got))
		}
		if only, _ := diffSorted(got, all); len(only) > 0 {
			t.Errorf("limit 7: rows not in the table: %v", only)
		}
	})
	t.Run("changes", func(t *testing.T) {
		recs, want := lakelogFeed(t, plain, 1, 4)
		sameRows(t, "connector changes 1..4", p.rows(sharingReq{Op: "changes", Table: "share.db.plain", StartingVersion: ptr(int64(1)), EndingVersion: ptr(int64(4))}, recs), want)
	})
	t.Run("delta format with deletion vectors", func(t *testing.T) {
		snap := open(t, dv, "")
		withDV := 0
		for a := range snap.Files() {
			if a.DeletionVector != nil {
				withDV++
			}
		}
		if withDV == 0 {
			t.Fatal("the dv table has no deletion vectors")
		}
		recs, want := lakelogRecs(t, snap)
		sameRows(t, "connector delta format", p.rows(sharingReq{Op: "load", Table: "share.db.dv", UseDeltaFormat: ptr(true)}, recs), want)
		// Autoresolved: the server answers delta for this table.
		sameRows(t, "connector autoresolved", p.rows(sharingReq{Op: "load", Table: "share.db.dv"}, recs), want)
		v2 := open(t, dv, "", deltalog.AtVersion(2))
		recs, want = lakelogRecs(t, v2)
		sameRows(t, "connector delta format version 2", p.rows(sharingReq{Op: "load", Table: "share.db.dv", Version: ptr(int64(2)), UseDeltaFormat: ptr(true)}, recs), want)
	})
	t.Run("delta format changes", func(t *testing.T) {
		// The connector's kernel path stamps a change with its local log
		// file's modification time, which it sets in whole seconds
		// (reader.py: os.utime(..., timestamp // 1000)); lakelog's
		// timestamps are compared in seconds there. From version 0: from
		// a later version the connector writes a placeholder checkpoint
		// that its own delta-kernel-rs refuses (unmasked nulls in
		// schemaString), whatever the server.
		recs, want := lakelogFeed(t, dv, 0, 4)
		got := p.rows(sharingReq{Op: "changes", Table: "share.db.dv", StartingVersion: ptr(int64(0)), EndingVersion: ptr(int64(4)), UseDeltaFormat: ptr(true)}, recs)
		sameRows(t, "connector delta changes 0..4", got, wholeSeconds(want))
	})
	t.Run("parquet refused for deletion vectors", func(t *testing.T) {
		_, err := p.call(sharingReq{Op: "load", Table: "share.db.dv", UseDeltaFormat: ptr(false), Ref: "x", Out: "y"})
		if err == nil || !strings.Contains(err.Error(), "UNSUPPORTED_OPERATION") {
			t.Errorf("parquet load of the dv table: %v", err)
		}
	})
}

// wholeSeconds truncates the _commit_timestamp of canonical change lines
// to whole seconds.
func wholeSeconds(lines []string) []string {
	re := regexp.MustCompile(`("_commit_timestamp":"[^".]*)\.\d+Z"`)
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = re.ReplaceAllString(l, `$1.000000Z"`)
	}
	slices.Sort(out)
	return out
}

func mustCount(t *testing.T, snap *deltalog.Snapshot) int64 {
	sc, err := reader.NewScan(snap)
	if err != nil {
		t.Fatal(err)
	}
	n, err := sc.Count(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestSharingPythonS3: the same tables on MinIO: the server gives out
// MinIO's presigned URLs (SigV4 in the query, no key of the store), and
// the connector reads them in both formats, with rows equal to lakelog's.
func TestSharingPythonS3(t *testing.T) {
	py := requireSharingPython(t)
	bucket := minioBucket(t)
	plain, dv, plainLoc, dvLoc := sharedTables(t, func(name string) (objstore.Store, string) {
		loc := "s3://" + bucket + "/tables/" + name
		st, err := objstore.Open(t.Context(), loc)
		if err != nil {
			t.Fatal(err)
		}
		return st, loc
	})
	p := &sharingPeer{t: t, py: py, profile: startSharing(t, plainLoc, dvLoc)}
	var prof sharing.Profile
	b, _ := os.ReadFile(p.profile)
	json.Unmarshal(b, &prof)
	req, _ := http.NewRequest("POST", prof.Endpoint+"/shares/share/schemas/db/tables/plain/query", strings.NewReader("{}"))
	req.Header.Set("Authorization", "Bearer "+prof.BearerToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if n := strings.Count(string(body), `"url":"`+os.Getenv("AWS_ENDPOINT_URL")); n == 0 || n != strings.Count(string(body), "X-Amz-Signature=") ||
		strings.Contains(string(body), "/files/") {
		t.Fatalf("the file URLs are not MinIO's presigned URLs: %s", body)
	}
	recs, want := lakelogRecs(t, open(t, plain, ""))
	sameRows(t, "connector on MinIO", p.rows(sharingReq{Op: "load", Table: "share.db.plain"}, recs), want)
	recs, want = lakelogFeed(t, plain, 1, 4)
	sameRows(t, "connector changes on MinIO", p.rows(sharingReq{Op: "changes", Table: "share.db.plain", StartingVersion: ptr(int64(1)), EndingVersion: ptr(int64(4))}, recs), want)
	recs, want = lakelogRecs(t, open(t, dv, ""))
	sameRows(t, "connector delta format on MinIO", p.rows(sharingReq{Op: "load", Table: "share.db.dv", UseDeltaFormat: ptr(true)}, recs), want)
}
