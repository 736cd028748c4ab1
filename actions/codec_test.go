package actions

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// Every commit of every golden table parses. The golden cases that expect
// an error (expect_error in expected.json) fail at the snapshot level:
// missing protocol or metadata, a bad protocol version, a gap in the
// versions, no _delta_log at all. None of them has a corrupt commit line,
// so none is exempt here.
func TestGoldenCommitsParseAndRoundTrip(t *testing.T) {
	kinds := map[string]int{}
	for _, f := range goldenCommits(t) {
		name, _ := filepath.Rel(goldenDir, f)
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		as, err := ParseCommit(bytes.NewReader(b))
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if len(as) == 0 {
			t.Errorf("%s: no actions", name)
		}
		for _, a := range as {
			kinds[a.Kind()]++
		}
		out, err := MarshalCommit(as)
		if err != nil {
			t.Errorf("%s: marshal: %v", name, err)
			continue
		}
		again, err := ParseCommit(bytes.NewReader(out))
		if err != nil {
			t.Errorf("%s: reparse: %v\n%s", name, err, out)
			continue
		}
		if !reflect.DeepEqual(as, again) {
			for i := range as {
				if i < len(again) && !reflect.DeepEqual(as[i], again[i]) {
					x, _ := MarshalCommit(as[i : i+1])
					t.Errorf("%s: action %d (%s) changed in a round trip:\n%s", name, i, as[i].Kind(), x)
					break
				}
			}
			if len(as) != len(again) {
				t.Errorf("%s: %d actions became %d", name, len(as), len(again))
			}
		}
	}
	for _, k := range []string{"protocol", "metaData", "add", "remove", "cdc", "commitInfo", "txn", "checkpointMetadata"} {
		if kinds[k] == 0 {
			t.Errorf("no %s action in the golden commits; the corpus changed?", k)
		}
	}
}

func TestCommitInfoKeepsUnknownFields(t *testing.T) {
	line := `{"commitInfo":{"timestamp":1700000000000,"operation":"WRITE","operationParameters":{"mode":"Append","partitionBy":"[]"},"clusterId":"0101-abc","notebook":{"notebookId":"123"},"big":12345678901234567890,"predicate":"a < 3 && b > 2"}}` + "\n"
	as, err := ParseCommit(strings.NewReader(line))
	if err != nil {
		t.Fatal(err)
	}
	ci := as[0].CommitInfo
	if ci == nil || ci.Operation != "WRITE" || *ci.Timestamp != 1700000000000 {
		t.Fatalf("commitInfo = %+v", ci)
	}
	for _, k := range []string{"clusterId", "notebook", "big", "predicate"} {
		if _, ok := ci.Extra[k]; !ok {
			t.Errorf("Extra lacks %q", k)
		}
	}
	out, err := MarshalCommit(as)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"clusterId":"0101-abc"`, `"notebook":{"notebookId":"123"}`, `"big":12345678901234567890`, `"predicate":"a < 3 && b > 2"`} {
		if !strings.Contains(string(out), want) {
			t.Errorf("output lacks %s:\n%s", want, out)
		}
	}
}

func TestCommitInfoFieldNamesAreExact(t *testing.T) {
	// encoding/json alone matches keys case-insensitively, so "Timestamp"
	// would fill Timestamp; it must stay an extra field instead.
	as, err := ParseCommit(strings.NewReader(`{"commitInfo":{"Timestamp":2,"timestamp":1}}`))
	if err != nil {
		t.Fatal(err)
	}
	ci := as[0].CommitInfo
	if *ci.Timestamp != 1 || string(ci.Extra["Timestamp"]) != "2" {
		t.Fatalf("timestamp %d, extra %q", *ci.Timestamp, ci.Extra)
	}
}

func TestUnknownActionKept(t *testing.T) {
	as, err := ParseCommit(strings.NewReader("{\"newThing\": {\"x\": [1, 2]}}\n\n{\"txn\":{\"appId\":\"a\",\"version\":3}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(as) != 2 || as[0].Kind() != "" || as[1].Txn == nil {
		t.Fatalf("actions = %+v", as)
	}
	out, err := MarshalCommit(as)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"newThing":{"x":[1,2]}}` + "\n" + `{"txn":{"appId":"a","version":3}}` + "\n"
	if string(out) != want {
		t.Fatalf("got %s want %s", out, want)
	}
}

func TestParseCommitErrors(t *testing.T) {
	for _, tc := range []struct {
		text string
		line int
	}{
		{"{\"txn\":{\"appId\":\"a\",\"version\":1}}\n{bad\n", 2},
		{"{\"add\":null}", 1},
		{"\n\n{\"add\":{\"path\":\"a\"},\"remove\":{\"path\":\"a\"}}", 3},
		{"[1]", 1},
		{"{\"add\":{\"path\":\"a\",\"size\":\"big\"}}", 1},
	} {
		_, err := ParseCommit(strings.NewReader(tc.text))
		var le *LineError
		if !errors.As(err, &le) || le.Line != tc.line {
			t.Errorf("%q: err = %v, want a LineError on line %d", tc.text, err, tc.line)
			continue
		}
		if !strings.HasPrefix(err.Error(), "actions: line ") {
			t.Errorf("%q: message %q", tc.text, err)
		}
	}
}

func TestRequiredCollectionsAreWritten(t *testing.T) {
	as := []Action{
		{Protocol: &Protocol{MinReaderVersion: 3, MinWriterVersion: 7}},
		{Metadata: &Metadata{ID: "x", Format: Format{Provider: "parquet"}, SchemaString: `{"type":"struct","fields":[]}`}},
		{Add: &Add{Path: "a.parquet", Size: 1, DataChange: true}},
		{CDC: &AddCDCFile{Path: "_change_data/c.parquet", Size: 1}},
		{Remove: &Remove{Path: "b.parquet", DataChange: true, PartitionValues: map[string]*string{}}},
	}
	out, err := MarshalCommit(as)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"protocol":{"minReaderVersion":3,"minWriterVersion":7,"readerFeatures":[],"writerFeatures":[]}}
{"metaData":{"id":"x","format":{"provider":"parquet","options":{}},"schemaString":"{\"type\":\"struct\",\"fields\":[]}","partitionColumns":[],"configuration":{}}}
{"add":{"path":"a.parquet","partitionValues":{},"size":1,"modificationTime":0,"dataChange":true}}
{"cdc":{"path":"_change_data/c.parquet","partitionValues":{},"size":1,"dataChange":false}}
{"remove":{"path":"b.parquet","dataChange":true,"partitionValues":{}}}
`
	if string(out) != want {
		t.Fatalf("got\n%s\nwant\n%s", out, want)
	}
}

func FuzzParseCommit(f *testing.F) {
	for _, file := range goldenCommits(f) {
		b, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		if len(b) <= 16<<10 {
			f.Add(b)
		}
	}
	f.Add([]byte(`{"commitInfo":{"Timestamp":2,"timestamp":1,"x":[1, 2],"y":"<&>"}}`))
	f.Add([]byte("{\"unknown\": {\"a\": 1}}\n{\"protocol\":{\"minReaderVersion\":3,\"minWriterVersion\":7}}"))
	f.Add([]byte("{\"commitInfo\":{\"x\":\"\xff\u2028\",\"x\":2,\"operationParameters\":{\"a\":1.0e5}}}\n{\"new\":\"\xfe\"}"))
	f.Add([]byte(`{"add":{"path":"a","Path":"b","partitionValues":null,"tags":{},"deletionVector":{"storageType":"u","pathOrInlineDv":"x","offset":1,"sizeInBytes":3,"cardinality":1}}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		as, err := ParseCommit(bytes.NewReader(b))
		if err != nil {
			return
		}
		out, err := MarshalCommit(as)
		if err != nil {
			t.Fatalf("parsed but does not marshal: %v", err)
		}
		again, err := ParseCommit(bytes.NewReader(out))
		if err != nil {
			t.Fatalf("marshalled commit does not parse: %v\n%s", err, out)
		}
		if !reflect.DeepEqual(as, again) {
			t.Fatalf("round trip changed the actions:\n%q\n%s", b, out)
		}
		out2, err := MarshalCommit(again)
		if err != nil || !bytes.Equal(out, out2) {
			t.Fatalf("marshalling is not stable:\n%s\n%s", out, out2)
		}
	})
}
