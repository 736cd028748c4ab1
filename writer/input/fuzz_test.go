package input_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lakelog/lakelog/reader"
	"github.com/lakelog/lakelog/writer/input"
)

const fuzzSchema = "id long not null, amount decimal(10,2), f double, name string, ok boolean, dt date, ts timestamp, bin binary, st struct<x:int,y:array<string>>, m map<string,int>, mi map<int,string>"

// FuzzJSONL: no input panics, and a line that is not valid JSON is always
// an error (the hand-written scanner is at least as strict as
// encoding/json).
func FuzzJSONL(f *testing.F) {
	for _, s := range []string{
		`{"id":1,"amount":"12.50","f":"NaN","name":"a\u00e9","ok":true,"dt":"2026-01-01","ts":"2026-01-01T00:00:00Z","bin":"AQ==","st":{"x":1,"y":["a",null]},"m":{"a":1},"mi":[[1,"x"]]}`,
		`{"id":1,"amount":1e-2}`,
		`{"id":"1"}`,
		`{"id":1,"name":"\ud83d\ude00\ud800"}`,
		`{"id":1,"st":null,"m":[]}`,
		`[1]`,
		`{"id":1,}`,
		`{"id":-0.0e+1}`,
	} {
		f.Add([]byte(s))
	}
	schema := mustDDL(f, fuzzSchema)
	f.Fuzz(func(t *testing.T, line []byte) {
		if bytes.ContainsAny(line, "\n\r") {
			return // one line at a time
		}
		d, err := input.NewDecoder(bytes.NewReader(line), "f.jsonl", schema)
		if err != nil {
			t.Fatal(err)
		}
		rows, derr := canonical(d)
		blank := len(bytes.TrimLeft(line, " \t\ufeff")) == 0 || bytes.Equal(bytes.TrimLeft(line, " \t"), []byte("\xef\xbb\xbf"))
		if derr == nil && !blank && !json.Valid(bytes.TrimPrefix(line, []byte("\xef\xbb\xbf"))) {
			t.Fatalf("invalid JSON %q decoded without error", line)
		}
		if derr != nil || len(rows) == 0 {
			return
		}
		// What scan --format jsonl prints reads back to the same rows.
		d2, err := input.NewDecoder(strings.NewReader(rows[0]), "again.jsonl", schema)
		if err != nil {
			t.Fatal(err)
		}
		again, err := canonical(d2)
		if err != nil || len(again) != 1 || again[0] != rows[0] {
			t.Fatalf("canonical row %s reads back as %q, %v", rows[0], again, err)
		}
	})
}

func canonical(d *input.Decoder) ([]string, error) {
	var out []string
	for rec, err := range d.Records(context.Background()) {
		if err != nil {
			return out, err
		}
		rows, err := reader.CanonicalRows(rec)
		if err != nil {
			return out, err
		}
		for _, r := range rows {
			out = append(out, string(r))
		}
	}
	return out, nil
}

// FuzzMergeSchema: inference never panics, and a file whose schema it
// merged decodes without an unknown column.
func FuzzMergeSchema(f *testing.F) {
	f.Add([]byte("{\"id\":1,\"n\":1}\n{\"N\":2.5,\"s\":\"x\",\"b\":null}\n"))
	f.Add([]byte("{\"x\":[1]}"))
	f.Add([]byte("{\"x\":1}\n{\"x\":\"a\"}"))
	table := mustDDL(f, "id long")
	f.Fuzz(func(t *testing.T, data []byte) {
		p := filepath.Join(t.TempDir(), "f.jsonl")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		merged, err := input.MergeSchema(context.Background(), table, []string{p})
		if err != nil {
			return
		}
		for _, err := range input.ReadFile(context.Background(), p, merged) {
			if errors.Is(err, input.ErrUnknownColumn) {
				t.Fatalf("merged schema %s: %v", merged, err)
			}
		}
	})
}

// FuzzCSV: no input panics.
func FuzzCSV(f *testing.F) {
	f.Add([]byte("id,amount,st,m\n1,12.5,\"{\"\"x\"\":1}\",\n"))
	f.Add([]byte("id\n\"1\n"))
	f.Add([]byte("ID,name\n1,a,b\n"))
	schema := mustDDL(f, fuzzSchema)
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := input.NewDecoder(bytes.NewReader(data), "f.csv", schema)
		if err != nil {
			t.Fatal(err)
		}
		for range d.Records(context.Background()) {
		}
	})
}

// FuzzDecoderBatches: no batch exceeds the batch size, and no input panics.
func FuzzDecoderBatches(f *testing.F) {
	f.Add([]byte("{\"id\":1}\n{\"id\":2}\n\n{\"id\":3}"), uint8(2))
	schema := mustDDL(f, "id long")
	f.Fuzz(func(t *testing.T, data []byte, batch uint8) {
		d, err := input.NewDecoder(bytes.NewReader(data), "f.jsonl", schema, input.WithBatchSize(int(batch)%5+1))
		if err != nil {
			t.Fatal(err)
		}
		for rec, err := range d.Records(context.Background()) {
			if err == nil && rec.NumRows() > int64(batch%5+1) {
				t.Fatalf("batch of %d rows, limit %d", rec.NumRows(), batch%5+1)
			}
		}
	})
}
