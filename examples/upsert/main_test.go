package main

import (
	"bytes"
	"context"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/lakelog/lakelog/test/tabletest"
)

const want = `batch 0: version 1, already applied false
batch 1: version 2, already applied false
batch 1: version 2, already applied true
batch 2: version 3, already applied false
{"id":1,"balance":100,"_change_type":"insert","_commit_version":1,"_commit_timestamp":T}
{"id":2,"balance":50,"_change_type":"insert","_commit_version":1,"_commit_timestamp":T}
{"id":1,"balance":100,"_change_type":"update_preimage","_commit_version":2,"_commit_timestamp":T}
{"id":1,"balance":70,"_change_type":"update_postimage","_commit_version":2,"_commit_timestamp":T}
{"id":3,"balance":5,"_change_type":"insert","_commit_version":2,"_commit_timestamp":T}
{"id":2,"balance":50,"_change_type":"delete","_commit_version":3,"_commit_timestamp":T}
`

// commitTime is a commit's timestamp, which differs from run to run.
var commitTime = regexp.MustCompile(`"\d{4}-\d\d-\d\dT[0-9:.]+Z"`)

func TestRun(t *testing.T) {
	for name, uri := range map[string]func(t testing.TB) string{
		"local": func(t testing.TB) string { return filepath.Join(t.TempDir(), "accounts") },
		"MinIO": tabletest.MinIOURI,
	} {
		t.Run(name, func(t *testing.T) {
			var out bytes.Buffer
			if err := run(context.Background(), uri(t), &out); err != nil {
				t.Fatal(err)
			}
			if got := commitTime.ReplaceAllString(out.String(), "T"); got != want {
				t.Errorf("got\n%s\nwant\n%s", got, want)
			}
		})
	}
}
