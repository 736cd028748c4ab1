package writer_test

import (
	"context"
	"strings"
	"testing"

	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/test/tabletest"
	"github.com/lakelog/lakelog/writer"
)

func TestResolveRefusesBadOptions(t *testing.T) {
	for name, opt := range map[string]writer.Option{
		"codec":          writer.WithCompression("brotli9"),
		"target size":    writer.WithTargetFileSize(0),
		"open files":     writer.WithMaxOpenFiles(0),
		"buffer size":    writer.WithBufferSize(-1),
		"app without id": writer.WithAppTransaction("", 3),
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
	base, err := writer.Resolve(writer.WithOperationParameters(map[string]any{"a": "1"}), writer.WithTxnOptions(deltalog.WithMaxAttempts(3)))
	if err != nil {
		t.Fatal(err)
	}
	derived, err := base.With(writer.WithAppTransaction("app", 7), writer.WithOperationParameters(map[string]any{"b": "2"}), writer.WithTxnOptions(deltalog.WithMaxAttempts(4)))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, ok := base.AppTransaction(); ok {
		t.Error("With gave the original an app transaction")
	}
	if app, v, ok := derived.AppTransaction(); !ok || app != "app" || v != 7 {
		t.Errorf("derived app transaction = %q %d %v, want app 7 true", app, v, ok)
	}
	if p := base.OperationParameters(); len(p) != 1 || p["a"] != "1" {
		t.Errorf("base parameters = %v, want only a=1", p)
	}
	if p := derived.OperationParameters(); len(p) != 2 || p["a"] != "1" || p["b"] != "2" {
		t.Errorf("derived parameters = %v, want a=1 b=2", p)
	}
	if n, m := len(base.TxnOptions()), len(derived.TxnOptions()); n != 1 || m != 2 {
		t.Errorf("txn options: base %d, derived %d, want 1 and 2", n, m)
	}
	// The accessors hand out copies.
	base.OperationParameters()["c"] = "3"
	if _, ok := base.OperationParameters()["c"]; ok {
		t.Error("OperationParameters returned the settings' own map")
	}
}

func TestWithSettingsThenOptions(t *testing.T) {
	store := objstore.NewMem()
	tabletest.Create(t, store, "id long, v string", nil)
	s, err := writer.Resolve(writer.WithCompression("zstd"), writer.WithOperationParameters(map[string]any{"from": "settings"}))
	if err != nil {
		t.Fatal(err)
	}
	// Options after WithSettings apply on top of it.
	tabletest.AppendTo(t, store, `[{"id":1,"v":"a"}]`, writer.WithSettings(s), writer.WithOperationParameters(map[string]any{"also": "option"}))
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
	s2, err := s.With(writer.WithAppTransaction("app", 1))
	if err != nil {
		t.Fatal(err)
	}
	tabletest.AppendTo(t, store, `[{"id":2,"v":"b"}]`, writer.WithSettings(s2))
	if _, done := s2.AlreadyApplied(tabletest.Open(t, store)); !done {
		t.Error("AlreadyApplied: the committed app transaction is not seen")
	}
	if _, err := writer.Append(context.Background(), tabletest.Open(t, store), tabletest.Batches(t), writer.WithSettings(s2)); err != nil {
		t.Errorf("an applied app transaction should commit nothing and succeed: %v", err)
	}
}
