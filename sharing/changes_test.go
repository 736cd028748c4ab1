package sharing_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/deletionvector"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/dml"
	"github.com/lakelog/lakelog/expr"
	"github.com/lakelog/lakelog/test/tabletest"
)

const dvPath = "/delta-sharing/shares/share_a/schemas/sales/tables/dv"

func deleteWhere(t *testing.T, snap *deltalog.Snapshot, pred string, opts ...dml.Option) *deltalog.Snapshot {
	t.Helper()
	e, err := expr.Parse(pred)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := dml.Delete(context.Background(), snap, e, opts...); err != nil {
		t.Fatal(err)
	}
	return tabletest.Open(t, snap.Store())
}

func TestChangeDataFeed(t *testing.T) {
	f := newFixture(t)
	// Version 3 deletes id 1 by rewriting its file (change data files).
	deleteWhere(t, f.tables["events"], "id = 1", dml.WithoutDeletionVectors())
	r := f.do("GET", tablePath+"/changes?startingVersion=1", tokenA, "")
	if r.status != 200 || r.header.Get("Delta-Table-Version") != "1" {
		t.Fatalf("changes: %d %v %s", r.status, r.header, r.body)
	}
	adds, removes, cdfs := files(t, r, "add"), files(t, r, "remove"), files(t, r, "cdf")
	if len(adds) != 3 || len(removes) != 0 || len(cdfs) != 1 {
		t.Fatalf("changes 1..3: %d adds, %d removes, %d cdf; want 3 adds (versions 1, 2), 1 cdf (version 3): %s", len(adds), len(removes), len(cdfs), r.body)
	}
	for _, a := range adds {
		if a.Version == nil || *a.Version > 2 || a.Timestamp == nil || a.ExpirationTimestamp == 0 {
			t.Errorf("add %+v", a)
		}
	}
	if *cdfs[0].Version != 3 || !strings.Contains(cdfs[0].URL, "_change_data") {
		t.Errorf("cdf file %+v", cdfs[0])
	}
	// Bounds: an ending version, a range by time, bad bounds.
	r = f.do("GET", tablePath+"/changes?startingVersion=1&endingVersion=1", tokenA, "")
	if n := len(files(t, r, "add")); r.status != 200 || n != 1 {
		t.Errorf("changes 1..1: %d, %d adds", r.status, n)
	}
	r = f.do("GET", tablePath+"/changes?startingTimestamp=2000-01-01T00:00:00Z", tokenA, "")
	if n := len(files(t, r, "add")); r.status != 200 || n != 3 || r.header.Get("Delta-Table-Version") != "0" {
		t.Errorf("changes from a time before the table: %d %v, %d adds", r.status, r.header, n)
	}
	r = f.do("GET", tablePath+"/changes?startingVersion=0&endingVersion=99", tokenA, "")
	if r.status != 200 {
		t.Errorf("ending version beyond the latest: %d %s", r.status, r.body)
	}
	for _, q := range []string{"", "?startingVersion=9", "?startingVersion=2&endingVersion=1", "?startingVersion=x",
		"?startingVersion=0&startingTimestamp=2026-01-01T00:00:00Z", "?startingTimestamp=2999-01-01T00:00:00Z", "?startingVersion=0&maxFiles=0"} {
		if r := f.do("GET", tablePath+"/changes"+q, tokenA, ""); r.status != 400 {
			t.Errorf("changes%s: %d %s, want 400", q, r.status, r.body)
		}
	}
	// Pages of one file, following the tokens, give the same files.
	var paged []string
	token := ""
	for range 10 {
		q := "?startingVersion=1&maxFiles=1"
		if token != "" {
			q += "&pageToken=" + token
		}
		r := f.do("GET", tablePath+"/changes"+q, tokenA, "")
		if r.status != 200 {
			t.Fatalf("page: %d %s", r.status, r.body)
		}
		for _, k := range []string{"add", "remove", "cdf"} {
			for _, fl := range files(t, r, k) {
				paged = append(paged, k+fl.ID)
			}
		}
		ls := r.lines(t)
		var end struct{ NextPageToken string }
		json.Unmarshal(ls[len(ls)-1]["endStreamAction"], &end)
		if token = end.NextPageToken; token == "" {
			break
		}
	}
	if len(paged) != 4 {
		t.Errorf("paged changes: %v, want 4 files", paged)
	}
}

func TestChangeFeedNotRecorded(t *testing.T) {
	f := newFixture(t)
	// The dv table records change data; the other table does not.
	f.start(strings.Replace(baseConfig(f.dir, ""), "location: "+fmt.Sprintf("%q", location(f.dir, "other"))+"\n",
		"location: "+fmt.Sprintf("%q", location(f.dir, "other"))+"\n      historyShared: true\n", 1))
	r := f.do("GET", "/delta-sharing/shares/share_b/schemas/secret/tables/other/changes?startingVersion=0", tokenB, "")
	if r.status != 400 || !strings.Contains(string(r.body), "enableChangeDataFeed") {
		t.Errorf("changes of a table without the feed: %d %s", r.status, r.body)
	}
}

// deltaFile is a delta-format file line.
type deltaFile struct {
	ID                   string
	DeletionVectorFileID string
	Version              *int64
	Timestamp            *int64
	ExpirationTimestamp  int64
	DeltaSingleAction    actions.Action
}

func deltaFiles(t *testing.T, r response) []deltaFile {
	t.Helper()
	var out []deltaFile
	for _, l := range r.lines(t) {
		if raw, ok := l["file"]; ok {
			var df deltaFile
			if err := json.Unmarshal(raw, &df); err != nil {
				t.Fatalf("file line %s: %v", raw, err)
			}
			out = append(out, df)
		}
	}
	return out
}

// TestDeletionVectorsDeltaFormat: a table with deletion vectors is
// refused to parquet clients and served to delta clients, its vectors
// (inline or in files) readable through the URLs given.
func TestDeletionVectorsDeltaFormat(t *testing.T) {
	f := newFixture(t)
	snap := f.tables["dv"]
	// 3,000 more rows, then delete every 7th: a vector too large to
	// inline, in a .bin file; and id 2 of the first file: inline.
	var rows []string
	for i := 10; i < 3010; i++ {
		rows = append(rows, fmt.Sprintf(`{"id":%d,"s":"r%d"}`, i, i))
	}
	snap = tabletest.Append(t, snap, "["+strings.Join(rows, ",")+"]")
	snap = deleteWhere(t, snap, "id % 7 = 0 AND id >= 10")
	snap = deleteWhere(t, snap, "id = 2")
	kinds := map[string]bool{}
	for a := range snap.Files() {
		if a.DeletionVector != nil {
			kinds[a.DeletionVector.StorageType] = true
		}
	}
	if !kinds["u"] || !kinds["i"] {
		t.Fatalf("the table's vectors are %v; the test needs one in a file and one inline", kinds)
	}

	r := f.do("POST", dvPath+"/query", tokenA, `{}`)
	if r.status != 400 || r.errorCode(t) != "UNSUPPORTED_OPERATION" {
		t.Errorf("parquet query of a table with deletion vectors: %d %s", r.status, r.body)
	}
	r = f.do("POST", dvPath+"/query", tokenA, `{}`, "delta-sharing-capabilities", "responseformat=delta")
	if r.status != 400 || !strings.Contains(string(r.body), "readerfeatures=deletionvectors") {
		t.Errorf("delta query without the reader feature: %d %s", r.status, r.body)
	}
	caps := "responseformat=delta,parquet;readerfeatures=deletionvectors,columnmapping"
	r = f.do("POST", dvPath+"/query", tokenA, `{}`, "delta-sharing-capabilities", caps)
	if r.status != 200 || r.header.Get("delta-sharing-capabilities") != "responseformat=delta" {
		t.Fatalf("delta query: %d %v %s", r.status, r.header, r.body)
	}
	ls := r.lines(t)
	var proto struct{ DeltaProtocol actions.Protocol }
	json.Unmarshal(ls[0]["protocol"], &proto)
	if !proto.DeltaProtocol.HasReaderFeature(actions.FeatureDeletionVectors) {
		t.Errorf("protocol line %s lacks deletionVectors", ls[0]["protocol"])
	}
	got := deltaFiles(t, r)
	if len(got) != snap.NumFiles() {
		t.Fatalf("%d files, the table has %d", len(got), snap.NumFiles())
	}
	var want []*actions.Add
	for a := range snap.Files() {
		want = append(want, a)
	}
	for i, df := range got {
		add, orig := df.DeltaSingleAction.Add, want[i]
		if add == nil || !strings.HasPrefix(add.Path, f.http.URL) || add.Size != orig.Size || add.Stats != orig.Stats {
			t.Fatalf("file %d: %+v", i, add)
		}
		if body := get(t, add.Path); body.status != 200 || int64(len(body.body)) != orig.Size {
			t.Errorf("file %d: %d, %d bytes", i, body.status, len(body.body))
		}
		dv := add.DeletionVector
		switch {
		case orig.DeletionVector == nil:
			if dv != nil {
				t.Errorf("file %d: a vector appeared", i)
			}
		case orig.DeletionVector.StorageType == "i":
			if *dv != *orig.DeletionVector || df.DeletionVectorFileID != "" {
				t.Errorf("file %d: inline vector %+v, want %+v", i, dv, orig.DeletionVector)
			}
		default:
			if dv.StorageType != "p" || !strings.HasPrefix(dv.PathOrInlineDv, f.http.URL) || dv.Cardinality != orig.DeletionVector.Cardinality ||
				df.DeletionVectorFileID == "" {
				t.Fatalf("file %d: vector %+v, want storage p at this server", i, dv)
			}
			// The vector read through its URL is the table's.
			body := get(t, dv.PathOrInlineDv)
			key, err := deletionvector.Key(snap.Store(), snap.Root(), orig.DeletionVector)
			if err != nil {
				t.Fatal(err)
			}
			if body.status != 200 || !bytes.Equal(body.body, readFile(t, f.dir, "dv", strings.TrimPrefix(key, tabletest.Root+"/"))) {
				t.Errorf("file %d: vector file %d, %d bytes", i, body.status, len(body.body))
			}
		}
	}
	// The data changes since version 3 in delta format: the removes and
	// adds of the deletes carry their vectors. The feed has the deletes'
	// change data files.
	r = f.do("POST", dvPath+"/query", tokenA, `{"startingVersion":3}`, "delta-sharing-capabilities", caps)
	if r.status != 200 {
		t.Fatalf("delta startingVersion query: %d %s", r.status, r.body)
	}
	var dvs int
	for _, df := range deltaFiles(t, r) {
		if a := df.DeltaSingleAction.Add; a != nil && a.DeletionVector != nil {
			dvs++
		}
		if df.Version == nil || df.Timestamp == nil {
			t.Errorf("change file without version or timestamp: %+v", df)
		}
	}
	if dvs != 2 {
		t.Errorf("%d adds carry vectors, want 2: %s", dvs, r.body)
	}
	r = f.do("GET", dvPath+"/changes?startingVersion=3&includeHistoricalMetadata=true", tokenA, "", "delta-sharing-capabilities", caps)
	var cdcs int
	for _, df := range deltaFiles(t, r) {
		if df.DeltaSingleAction.CDC != nil {
			cdcs++
		}
	}
	if r.status != 200 || cdcs != 2 {
		t.Errorf("delta changes from version 3: %d, %d cdc files: %s", r.status, cdcs, r.body)
	}
	// The parquet feed cannot carry them.
	if r := f.do("GET", dvPath+"/changes?startingVersion=2", tokenA, ""); r.status != 400 {
		t.Errorf("parquet changes with vectors: %d %s", r.status, r.body)
	}
}

func TestStartingVersionQuery(t *testing.T) {
	f := newFixture(t)
	snap := deleteWhere(t, f.tables["events"], "day = '2026-01-03'") // version 3 removes a file
	_ = snap
	r := f.do("POST", tablePath+"/query", tokenA, `{"startingVersion":2}`)
	if r.status != 200 || r.header.Get("Delta-Table-Version") != "2" {
		t.Fatalf("startingVersion 2: %d %v %s", r.status, r.header, r.body)
	}
	adds, removes := files(t, r, "add"), files(t, r, "remove")
	if len(adds) != 2 || len(removes) != 1 || *removes[0].Version != 3 {
		t.Errorf("startingVersion 2: %d adds, %d removes: %s", len(adds), len(removes), r.body)
	}
	r = f.do("POST", tablePath+"/query", tokenA, `{"startingVersion":1,"endingVersion":2}`)
	var versions []int64
	for _, a := range files(t, r, "add") {
		versions = append(versions, *a.Version)
	}
	if !slices.Equal(versions, []int64{1, 2, 2}) || len(files(t, r, "remove")) != 0 {
		t.Errorf("versions 1..2: adds of %v", versions)
	}
	r = f.do("POST", tablePath+"/query", tokenA, `{"startingVersion":9}`)
	if r.status != 400 {
		t.Errorf("startingVersion after the latest: %d %s", r.status, r.body)
	}
}
