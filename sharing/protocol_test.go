package sharing_test

import (
	"bytes"
	"encoding/json"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/lakelog/lakelog/actions"
)

const tablePath = "/delta-sharing/shares/share_a/schemas/sales/tables/events"

func TestListings(t *testing.T) {
	f := newFixture(t)
	r := f.do("GET", "/delta-sharing/shares", tokenA, "")
	if r.status != 200 || !strings.Contains(string(r.body), `"items":[{"name":"share_a"}]`) {
		t.Fatalf("list shares: %d %s", r.status, r.body)
	}
	if strings.Contains(string(r.body), "share_b") {
		t.Fatalf("recipient a sees share_b: %s", r.body)
	}
	r = f.do("GET", "/delta-sharing/shares/SHARE_A", tokenA, "")
	if r.status != 200 || !strings.Contains(string(r.body), `"share":{"name":"share_a"}`) {
		t.Fatalf("get share (case-insensitive): %d %s", r.status, r.body)
	}
	r = f.do("GET", "/delta-sharing/shares/share_a/schemas", tokenA, "")
	if r.status != 200 || !strings.Contains(string(r.body), `{"name":"sales","share":"share_a"}`) {
		t.Fatalf("list schemas: %d %s", r.status, r.body)
	}
	// Pagination: one table a page, following nextPageToken.
	for _, path := range []string{"/delta-sharing/shares/share_a/schemas/sales/tables", "/delta-sharing/shares/share_a/all-tables"} {
		var names []string
		token := ""
		for range 5 {
			q := "?maxResults=1"
			if token != "" {
				q += "&pageToken=" + url.QueryEscape(token)
			}
			r = f.do("GET", path+q, tokenA, "")
			if r.status != 200 {
				t.Fatalf("%s%s: %d %s", path, q, r.status, r.body)
			}
			var page struct {
				Items []struct {
					Name, Schema, Share, ID string
				}
				NextPageToken string
			}
			if err := json.Unmarshal(r.body, &page); err != nil {
				t.Fatal(err)
			}
			for _, it := range page.Items {
				if it.Schema != "sales" || it.Share != "share_a" || it.ID == "" {
					t.Errorf("%s: item %+v", path, it)
				}
				names = append(names, it.Name)
			}
			if token = page.NextPageToken; token == "" {
				break
			}
		}
		if !slices.Equal(names, []string{"events", "dv"}) {
			t.Errorf("%s paged: %v, want [events dv]", path, names)
		}
	}
	// maxResults=0: no items, a token for the rest.
	r = f.do("GET", "/delta-sharing/shares/share_a/all-tables?maxResults=0", tokenA, "")
	if r.status != 200 || !strings.Contains(string(r.body), `"items":[]`) || !strings.Contains(string(r.body), "nextPageToken") {
		t.Errorf("maxResults=0: %d %s", r.status, r.body)
	}
	for _, bad := range []string{"?maxResults=-1", "?maxResults=x", "?maxResults=99999999999", "?pageToken=garbage"} {
		r = f.do("GET", "/delta-sharing/shares/share_a/all-tables"+bad, tokenA, "")
		if r.status != 400 || r.errorCode(t) != "INVALID_PARAMETER_VALUE" {
			t.Errorf("%s: %d %s, want 400 INVALID_PARAMETER_VALUE", bad, r.status, r.body)
		}
	}
	// A page token of one listing is refused by another.
	r = f.do("GET", "/delta-sharing/shares/share_a/all-tables?maxResults=1", tokenA, "")
	var page struct{ NextPageToken string }
	json.Unmarshal(r.body, &page)
	r = f.do("GET", "/delta-sharing/shares/share_a/schemas/sales/tables?pageToken="+url.QueryEscape(page.NextPageToken), tokenA, "")
	if r.status != 400 {
		t.Errorf("token of all-tables on tables: %d %s", r.status, r.body)
	}
}

func TestVersionAndMetadata(t *testing.T) {
	f := newFixture(t)
	r := f.do("GET", tablePath+"/version", tokenA, "")
	if r.status != 200 || r.header.Get("Delta-Table-Version") != "2" {
		t.Fatalf("version: %d %v", r.status, r.header)
	}
	r = f.do("HEAD", tablePath, tokenA, "")
	if r.status != 200 || r.header.Get("Delta-Table-Version") != "2" {
		t.Fatalf("HEAD version: %d %v", r.status, r.header)
	}
	r = f.do("GET", tablePath+"/version?startingTimestamp=2000-01-01T00:00:00Z", tokenA, "")
	if r.status != 200 || r.header.Get("Delta-Table-Version") != "0" {
		t.Fatalf("version at a time before the table: %d %v %s", r.status, r.header, r.body)
	}
	r = f.do("GET", tablePath+"/version?startingTimestamp=2999-01-01T00:00:00Z", tokenA, "")
	if r.status != 400 {
		t.Fatalf("version at a time after the latest commit: %d %s", r.status, r.body)
	}
	r = f.do("GET", tablePath+"/metadata", tokenA, "")
	lines := r.lines(t)
	if r.status != 200 || len(lines) != 2 || r.header.Get("Delta-Table-Version") != "2" ||
		r.header.Get("delta-sharing-capabilities") != "responseformat=parquet" {
		t.Fatalf("metadata: %d %v %s", r.status, r.header, r.body)
	}
	if string(lines[0]["protocol"]) != `{"minReaderVersion":1}` {
		t.Errorf("protocol line %s", lines[0]["protocol"])
	}
	var md struct {
		ID               string
		Format           struct{ Provider string }
		SchemaString     string
		PartitionColumns []string
		Configuration    map[string]string
	}
	if err := json.Unmarshal(lines[1]["metaData"], &md); err != nil {
		t.Fatal(err)
	}
	if md.ID != f.tables["events"].Metadata().ID || md.Format.Provider != "parquet" ||
		!slices.Equal(md.PartitionColumns, []string{"day"}) || md.Configuration["enableChangeDataFeed"] != "true" {
		t.Errorf("metadata %+v", md)
	}
	r = f.do("GET", tablePath+"/metadata?version=0", tokenA, "", "delta-sharing-capabilities", "responseformat=delta")
	lines = r.lines(t)
	if r.status != 200 || r.header.Get("Delta-Table-Version") != "0" || len(lines) != 2 ||
		!bytes.Contains(lines[1]["metaData"], []byte(`"deltaMetadata"`)) {
		t.Fatalf("metadata at version 0 in delta: %d %v %s", r.status, r.header, r.body)
	}
	r = f.do("GET", tablePath+"/metadata?version=0&timestamp=2026-01-01T00:00:00Z", tokenA, "")
	if r.status != 400 {
		t.Errorf("version and timestamp: %d %s", r.status, r.body)
	}
}

// fileLine is a parquet-format file line.
type fileLine struct {
	URL                 string
	ID                  string
	PartitionValues     map[string]*string
	Size                int64
	Stats               string
	Version             *int64
	Timestamp           *int64
	ExpirationTimestamp int64
}

func files(t *testing.T, r response, kind string) []fileLine {
	t.Helper()
	var out []fileLine
	for _, l := range r.lines(t) {
		if raw, ok := l[kind]; ok {
			var fl fileLine
			if err := json.Unmarshal(raw, &fl); err != nil {
				t.Fatal(err)
			}
			out = append(out, fl)
		}
	}
	return out
}

func TestQueryLatestAndTimeTravel(t *testing.T) {
	f := newFixture(t)
	snap := f.tables["events"]
	r := f.do("POST", tablePath+"/query", tokenA, `{}`)
	if r.status != 200 {
		t.Fatalf("query: %d %s", r.status, r.body)
	}
	got := files(t, r, "file")
	if len(got) != snap.NumFiles() {
		t.Fatalf("query returned %d files, the table has %d", len(got), snap.NumFiles())
	}
	var want []*actions.Add
	for a := range snap.Files() {
		want = append(want, a)
	}
	for i, fl := range got {
		if fl.Version != nil || fl.Timestamp != nil || fl.ExpirationTimestamp <= f.clock.Now().UnixMilli() {
			t.Errorf("file %d: version %v timestamp %v expiration %d", i, fl.Version, fl.Timestamp, fl.ExpirationTimestamp)
		}
		body := get(t, fl.URL)
		if body.status != 200 || !bytes.Equal(body.body, readFile(t, f.dir, "events", actions.CanonicalPath(want[i].Path))) {
			t.Errorf("file %d (%s): %d, %d bytes; want the file's bytes", i, want[i].Path, body.status, len(body.body))
		}
		if int64(len(body.body)) != fl.Size {
			t.Errorf("file %d: size %d, body %d bytes", i, fl.Size, len(body.body))
		}
		// A Range read, as Parquet readers do.
		tail := get(t, fl.URL, "Range", "bytes=-8")
		if tail.status != 206 || !bytes.Equal(tail.body, body.body[len(body.body)-8:]) {
			t.Errorf("file %d: range read %d %q", i, tail.status, tail.body)
		}
	}
	// Version 1 has one file; its lines carry the version and its time.
	r = f.do("POST", tablePath+"/query", tokenA, `{"version":1}`)
	got = files(t, r, "file")
	if r.status != 200 || len(got) != 1 || r.header.Get("Delta-Table-Version") != "1" {
		t.Fatalf("query at version 1: %d %s", r.status, r.body)
	}
	if got[0].Version == nil || *got[0].Version != 1 || got[0].Timestamp == nil {
		t.Errorf("version 1 file: version %v timestamp %v", got[0].Version, got[0].Timestamp)
	}
	for _, bad := range []string{`{"version":9}`, `{"version":-1}`, `{"version":1,"timestamp":"2026-01-01T00:00:00Z"}`,
		`{"timestamp":"yesterday-ish"}`, `{"startingVersion":2,"endingVersion":1}`, `{"maxFiles":0}`} {
		r = f.do("POST", tablePath+"/query", tokenA, bad)
		if r.status != 400 {
			t.Errorf("query %s: %d %s, want 400", bad, r.status, r.body)
		}
	}
}

func TestQueryHintsAndLimit(t *testing.T) {
	f := newFixture(t)
	count := func(body string) int {
		t.Helper()
		r := f.do("POST", tablePath+"/query", tokenA, body)
		if r.status != 200 {
			t.Fatalf("query %s: %d %s", body, r.status, r.body)
		}
		return len(files(t, r, "file"))
	}
	cases := []struct {
		body string
		want int
	}{
		{`{"predicateHints":["day = '2026-01-02'"]}`, 1},
		{`{"predicateHints":["day >= '2026-01-02'"]}`, 2},
		{`{"predicateHints":["id > 100"]}`, 0},
		{`{"predicateHints":["id <= 2", "day = '2026-01-01'"]}`, 1},
		{`{"predicateHints":["nonsense ((("]}`, 3},     // does not parse: dropped
		{`{"predicateHints":["nosuchcolumn = 1"]}`, 3}, // does not bind: dropped
		{`{"predicateHints":["v IS NULL"]}`, 1},        // only day 2026-01-03 has a null v
		{`{"jsonPredicateHints":"{\"op\":\"equal\",\"children\":[{\"op\":\"column\",\"name\":\"day\",\"valueType\":\"date\"},{\"op\":\"literal\",\"value\":\"2026-01-03\",\"valueType\":\"date\"}]}"}`, 1},
		{`{"jsonPredicateHints":"{\"op\":\"not\",\"children\":[{\"op\":\"isNull\",\"children\":[{\"op\":\"column\",\"name\":\"id\",\"valueType\":\"long\"}]}]}"}`, 3},
		{`{"jsonPredicateHints":"{\"op\":\"lessThan\",\"children\":[{\"op\":\"column\",\"name\":\"id\",\"valueType\":\"long\"},{\"op\":\"literal\",\"value\":\"2\",\"valueType\":\"long\"}]}"}`, 1},
		{`{"jsonPredicateHints":"{not json"}`, 3},
		{`{"limitHint":1}`, 1},                              // the first file holds 2 rows
		{`{"limitHint":3}`, 2},                              // 2 + 1
		{`{"limitHint":0}`, 0},                              // nothing asked
		{`{"limitHint":1, "predicateHints":["id > 0"]}`, 3}, // no limit under a predicate
	}
	for _, c := range cases {
		if got := count(c.body); got != c.want {
			t.Errorf("query %s: %d files, want %d", c.body, got, c.want)
		}
	}
}

func TestQueryPages(t *testing.T) {
	f := newFixture(t)
	var urls []string
	token := ""
	for range 10 {
		body := `{"maxFiles":1}`
		if token != "" {
			body = `{"maxFiles":1,"pageToken":"` + token + `"}`
		}
		r := f.do("POST", tablePath+"/query", tokenA, body)
		if r.status != 200 {
			t.Fatalf("page: %d %s", r.status, r.body)
		}
		for _, fl := range files(t, r, "file") {
			urls = append(urls, fl.ID)
		}
		var end struct{ NextPageToken string }
		ls := r.lines(t)
		json.Unmarshal(ls[len(ls)-1]["endStreamAction"], &end)
		if token = end.NextPageToken; token == "" {
			break
		}
	}
	if len(urls) != 3 || len(slices.Compact(slices.Sorted(slices.Values(urls)))) != 3 {
		t.Fatalf("pages gave files %v, want the 3 files once each", urls)
	}
	// A page token with other parameters is refused.
	r := f.do("POST", tablePath+"/query", tokenA, `{"maxFiles":1}`)
	ls := r.lines(t)
	var end struct{ NextPageToken string }
	json.Unmarshal(ls[len(ls)-1]["endStreamAction"], &end)
	r = f.do("POST", tablePath+"/query", tokenA, `{"maxFiles":1,"predicateHints":["id > 1"],"pageToken":"`+end.NextPageToken+`"}`)
	if r.status != 400 {
		t.Errorf("page token with other hints: %d %s", r.status, r.body)
	}
}
