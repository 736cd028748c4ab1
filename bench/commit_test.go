package bench

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/objstore"
)

const schema = `{"type":"struct","fields":[{"name":"id","type":"long","nullable":false,"metadata":{}},{"name":"country","type":"string","nullable":true,"metadata":{}}]}`

// commitBody is a typical one-file append commit (~1 KB).
func oneFileAppend(i int) actions.Action {
	nl := "nl"
	return actions.Action{Add: &actions.Add{
		Path:             fmt.Sprintf("country=nl/part-00000-%08d-0000-0000-0000-000000000000-c000.snappy.parquet", i),
		PartitionValues:  map[string]*string{"country": &nl},
		Size:             123456,
		ModificationTime: 1767225600000,
		DataChange:       true,
		Stats:            `{"numRecords":1000,"minValues":{"id":1},"maxValues":{"id":1000},"nullCount":{"id":0}}`,
	}}
}

func newTable(b *testing.B, st objstore.Store) *deltalog.Snapshot {
	b.Helper()
	ctx := context.Background()
	tx, err := deltalog.Create(st, "", &actions.Metadata{SchemaString: schema, PartitionColumns: []string{"country"}})
	if err != nil {
		b.Fatal(err)
	}
	res, err := tx.Commit(ctx)
	if err != nil {
		b.Fatal(err)
	}
	s, err := res.Snapshot()
	if err != nil {
		b.Fatal(err)
	}
	return s
}

// rawDurableCreate is the floor a local commit cannot beat: write a temp
// file, fsync it, link it to the final name (create-if-absent), remove the
// temp, fsync the folder.
func rawDurableCreate(dir, name string, body []byte) error {
	tmp := filepath.Join(dir, "."+name+".tmp")
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(body); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Link(tmp, filepath.Join(dir, name)); err != nil {
		return err
	}
	if err := os.Remove(tmp); err != nil {
		return err
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// BenchmarkCommitLocal compares one lakelog commit on local disk with the
// raw durable create-if-absent it is built on, in the same run.
func BenchmarkCommitLocal(b *testing.B) {
	body, err := actions.MarshalCommit([]actions.Action{oneFileAppend(0)})
	if err != nil {
		b.Fatal(err)
	}
	b.Run("raw-create", func(b *testing.B) {
		dir := b.TempDir()
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			if err := rawDurableCreate(dir, deltalog.CommitName(int64(i)), body); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
	b.Run("lakelog-commit", func(b *testing.B) {
		ctx := context.Background()
		st, err := objstore.NewLocal(b.TempDir())
		if err != nil {
			b.Fatal(err)
		}
		snap := newTable(b, st)
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			// Checkpoints are measured on their own (checkpoint_test.go).
			tx := snap.NewTransaction(deltalog.WithPostCommit("off"))
			tx.Add(oneFileAppend(i))
			tx.SetOperation("WRITE", map[string]any{"mode": "Append"}, nil)
			res, err := tx.Commit(ctx)
			if err != nil {
				b.Fatal(err)
			}
			if snap, err = res.Snapshot(); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
}

// BenchmarkReplay measures loading the latest snapshot of a table with
// 10,000 JSON commits (no checkpoint), one file added per commit.
func BenchmarkReplay(b *testing.B) {
	const commits = 10000
	ctx := context.Background()
	for _, kind := range []string{"mem", "local"} {
		b.Run(fmt.Sprintf("%s/commits=%d", kind, commits), func(b *testing.B) {
			var st objstore.Store = objstore.NewMem()
			if kind == "local" {
				l, err := objstore.NewLocal(b.TempDir())
				if err != nil {
					b.Fatal(err)
				}
				st = l
			}
			newTable(b, st)
			for i := 1; i <= commits; i++ {
				body, err := actions.MarshalCommit([]actions.Action{{CommitInfo: &actions.CommitInfo{Operation: "WRITE"}}, oneFileAppend(i)})
				if err != nil {
					b.Fatal(err)
				}
				if err := st.Put(ctx, "_delta_log/"+deltalog.CommitName(int64(i)), bytes.NewReader(body), objstore.PutOptions{IfAbsent: true}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportAllocs()
			for b.Loop() {
				s, err := deltalog.Open(ctx, st, "")
				if err != nil {
					b.Fatal(err)
				}
				if s.NumFiles() != commits {
					b.Fatalf("%d files", s.NumFiles())
				}
			}
		})
	}
}
