package writer_test

import (
	"context"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/test/tabletest"
	"github.com/lakelog/lakelog/writer"
)

func TestResolveRefusesBadOptions(t *testing.T) {
	for name, opt := range map[string]writer.Option{
		"codec":       writer.WithCompression("brotli9"),
		"target size": writer.WithTargetFileSize(0),
		"open files":  writer.WithMaxOpenFiles(0),
		"buffer size": writer.WithBufferSize(-1),
	} {
		if _, err := writer.Resolve(opt); err == nil {
			t.Errorf("%s: Resolve accepted a bad option", name)
		}
		s, err := writer.Resolve()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.With(opt); err == nil {
			t.Errorf("%s: With accepted a bad option", name)
		}
	}
}

func TestSettingsWithLeavesTheOriginal(t *testing.T) {
	a, b := memory.NewGoAllocator(), memory.NewGoAllocator()
	base, err := writer.Resolve(writer.WithAllocator(a))
	if err != nil {
		t.Fatal(err)
	}
	derived, err := base.With(writer.WithAllocator(b))
	if err != nil {
		t.Fatal(err)
	}
	if base.Allocator() != a || derived.Allocator() != b {
		t.Error("With changed the original's allocator, or did not set the derived one's")
	}
}

// TestBuildingBlocksRefuseCommitOptions: WriteFiles and WriteChangeFiles
// commit nothing, so commit options given to them would be lost: they
// are refused, naming where they go.
func TestBuildingBlocksRefuseCommitOptions(t *testing.T) {
	store := objstore.NewMem()
	snap := tabletest.Create(t, store, "id long", nil)
	opt := writer.WithCommitOptions(deltalog.WithAppTransaction("app", 1))
	if _, err := writer.WriteFiles(context.Background(), snap, tabletest.Batches(t), opt); err == nil || !strings.Contains(err.Error(), "commit options go to the operation") {
		t.Errorf("WriteFiles with commit options: %v", err)
	}
}

// TestAppTransactionNeedsAnID: an app transaction without an id is
// refused when the append commits, and nothing is committed.
func TestAppTransactionNeedsAnID(t *testing.T) {
	store := objstore.NewMem()
	snap := tabletest.Create(t, store, "id long", nil)
	_, err := writer.Append(context.Background(), snap, tabletest.Batches(t, tabletest.Batch(t, memory.DefaultAllocator, snap, `[{"id":1}]`)),
		writer.WithCommitOptions(deltalog.WithAppTransaction("", 3)))
	if err == nil || !strings.Contains(err.Error(), "app id") {
		t.Fatalf("append with an app transaction without an id: %v", err)
	}
	if v := tabletest.Open(t, store).Version(); v != 0 {
		t.Fatalf("version %d committed", v)
	}
}

func TestWithSettingsThenOptions(t *testing.T) {
	store := objstore.NewMem()
	tabletest.Create(t, store, "id long, v string", nil)
	s, err := writer.Resolve(writer.WithCompression("zstd"), writer.WithCommitOptions(deltalog.WithOperationParameters(map[string]any{"from": "settings"})))
	if err != nil {
		t.Fatal(err)
	}
	// Options after WithSettings apply on top of it.
	tabletest.AppendTo(t, store, `[{"id":1,"v":"a"}]`, writer.WithSettings(s), writer.WithCommitOptions(deltalog.WithOperationParameters(map[string]any{"also": "option"})))
	ci, as := lastCommit(t, store)
	if ci.OperationParameters["from"] != "settings" || ci.OperationParameters["also"] != "option" {
		t.Errorf("operationParameters = %v, want from=settings and also=option", ci.OperationParameters)
	}
	for _, a := range as {
		if a.Add != nil && !strings.HasSuffix(a.Add.Path, ".zstd.parquet") {
			t.Errorf("file %s: want the settings' zstd codec", a.Add.Path)
		}
	}
	// The same settings reach Append's app transaction check.
	s2, err := s.With(writer.WithCommitOptions(deltalog.WithAppTransaction("app", 1)))
	if err != nil {
		t.Fatal(err)
	}
	tabletest.AppendTo(t, store, `[{"id":2,"v":"b"}]`, writer.WithSettings(s2))
	if _, done := tabletest.Open(t, store).AlreadyApplied("app", 1); !done {
		t.Error("AlreadyApplied: the committed app transaction is not seen")
	}
	if _, err := writer.Append(context.Background(), tabletest.Open(t, store), tabletest.Batches(t), writer.WithSettings(s2)); err != nil {
		t.Errorf("an applied app transaction should commit nothing and succeed: %v", err)
	}
}
