package main

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"

	"github.com/lakelog/lakelog/test/tabletest"
)

func TestRun(t *testing.T) {
	for name, uri := range map[string]func(t testing.TB) string{
		"local": func(t testing.TB) string { return filepath.Join(t.TempDir(), "events") },
		"MinIO": tabletest.MinIOURI,
	} {
		t.Run(name, func(t *testing.T) {
			for range 3 { // the goroutines race differently each time
				var out bytes.Buffer
				if err := run(context.Background(), uri(t), &out); err != nil {
					t.Fatal(err)
				}
				if want := "12 rows left of 20 appended\n"; out.String() != want {
					t.Fatalf("got %q, want %q", out.String(), want)
				}
			}
		})
	}
}
