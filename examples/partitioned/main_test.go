package main

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"

	"github.com/lakelog/lakelog/test/tabletest"
)

const want = `version 1: 2 rows
version 2: 2 rows
version 3: 2 rows
{"id":2,"day":"2026-12-02","amount":"9.99"}
{"id":3,"day":"2026-12-02","amount":null}
files read: 1 of 3
`

func TestRun(t *testing.T) {
	for name, uri := range map[string]func(t testing.TB) string{
		"local": func(t testing.TB) string { return filepath.Join(t.TempDir(), "orders") },
		"MinIO": tabletest.MinIOURI,
	} {
		t.Run(name, func(t *testing.T) {
			var out bytes.Buffer
			if err := run(context.Background(), uri(t), &out); err != nil {
				t.Fatal(err)
			}
			if out.String() != want {
				t.Errorf("got\n%s\nwant\n%s", out.String(), want)
			}
		})
	}
}
