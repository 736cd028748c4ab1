package main

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"

	"github.com/lakelog/lakelog/test/tabletest"
)

const want = `optimize: version 11, 1 files, columns host,cpu, metrics 10
rename cpu to cpu_load: version 12, 1 files, columns host,cpu_load, metrics 0
restore version 5: version 13, 5 files, columns host,cpu, metrics 1
vacuum: version 15, 5 files, columns host,cpu, metrics 6
`

func TestRun(t *testing.T) {
	for name, uri := range map[string]func(t testing.TB) string{
		"local": func(t testing.TB) string { return filepath.Join(t.TempDir(), "metrics") },
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
