// Package surface_test feeds the exported operations the inputs a Go
// caller gets wrong: nil snapshots, stores and metadata, nil and empty
// row iterators, iterators that panic, cancelled contexts. Each answers
// with an error or an empty result, never a panic (not even on a
// goroutine of the library, which would end the caller's process), and
// an operation that fails commits nothing.
package surface_test

import (
	"context"
	"errors"
	"iter"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lakelog/lakelog/cdf"
	"github.com/lakelog/lakelog/convert"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/dml"
	"github.com/lakelog/lakelog/expr"
	"github.com/lakelog/lakelog/maintenance"
	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/reader"
	"github.com/lakelog/lakelog/schema"
	"github.com/lakelog/lakelog/test/tabletest"
	"github.com/lakelog/lakelog/writer"
)

// input is the rows an operation is given.
type input struct {
	name    string
	batches func(t *testing.T, snap *deltalog.Snapshot) iter.Seq2[arrow.RecordBatch, error]
	// rows: the input holds rows (else it is empty or fails).
	rows bool
}

var inputs = []input{
	{name: "nil iterator", batches: func(*testing.T, *deltalog.Snapshot) iter.Seq2[arrow.RecordBatch, error] { return nil }},
	{name: "empty iterator", batches: func(*testing.T, *deltalog.Snapshot) iter.Seq2[arrow.RecordBatch, error] {
		return func(func(arrow.RecordBatch, error) bool) {}
	}},
	{name: "nil batch", batches: func(*testing.T, *deltalog.Snapshot) iter.Seq2[arrow.RecordBatch, error] {
		return func(yield func(arrow.RecordBatch, error) bool) { yield(nil, nil) }
	}},
	{name: "panicking iterator", batches: func(t *testing.T, snap *deltalog.Snapshot) iter.Seq2[arrow.RecordBatch, error] {
		rec := tabletest.Batch(t, memory.DefaultAllocator, snap, `[{"k":7,"v":"x"}]`)
		return func(yield func(arrow.RecordBatch, error) bool) {
			if !yield(rec, nil) {
				return
			}
			panic("caller's bug")
		}
	}, rows: true},
	{name: "failing iterator", batches: func(t *testing.T, snap *deltalog.Snapshot) iter.Seq2[arrow.RecordBatch, error] {
		return func(yield func(arrow.RecordBatch, error) bool) { yield(nil, errors.New("caller's error")) }
	}, rows: true},
}

// noPanic runs f, failing the test if it panics other than with the
// panic of the caller's own iterator (which an operation running that
// iterator on the caller's goroutine may let through, as the standard
// library does with a panicking less function; run on a goroutine of the
// library, it must come back as an error, or the process would end).
func noPanic(t *testing.T, f func() error) error {
	t.Helper()
	var err error
	func() {
		defer func() {
			if r := recover(); r != nil {
				if r == "caller's bug" {
					err = errors.New("caller's bug")
					return
				}
				t.Fatalf("panicked: %v", r)
			}
		}()
		err = f()
	}()
	return err
}

// table is a fresh table with one row: k long, v string.
func table(t *testing.T) *deltalog.Snapshot {
	snap := tabletest.Create(t, objstore.NewMem(), "k long, v string", nil)
	return tabletest.Append(t, snap, `[{"k":1,"v":"a"}]`)
}

// unchanged fails the test when the table moved past snap's version.
func unchanged(t *testing.T, snap *deltalog.Snapshot) {
	t.Helper()
	if now := tabletest.Open(t, snap.Store()); now.Version() != snap.Version() {
		t.Errorf("committed version %d after a failed operation", now.Version())
	}
}

// TestRowInputs: every operation that takes rows, with each input above:
// a panicking or failing iterator is an error and commits nothing; a
// nil, empty or nil-batch iterator is an input without rows.
func TestRowInputs(t *testing.T) {
	ctx := context.Background()
	on := mustParse("t.k = s.k")
	ops := map[string]func(*deltalog.Snapshot, iter.Seq2[arrow.RecordBatch, error]) error{
		"writer.Append": func(s *deltalog.Snapshot, b iter.Seq2[arrow.RecordBatch, error]) error {
			_, err := writer.Append(ctx, s, b)
			return err
		},
		"writer.Overwrite": func(s *deltalog.Snapshot, b iter.Seq2[arrow.RecordBatch, error]) error {
			_, err := writer.Overwrite(ctx, s, b)
			return err
		},
		"writer.CreateTable": func(s *deltalog.Snapshot, b iter.Seq2[arrow.RecordBatch, error]) error {
			_, err := writer.CreateTable(ctx, s.Store(), "copy", s.Metadata(), b)
			return err
		},
		"dml.ReplaceWhere": func(s *deltalog.Snapshot, b iter.Seq2[arrow.RecordBatch, error]) error {
			_, err := dml.ReplaceWhere(ctx, s, mustParse("k > 5"), b)
			return err
		},
		"dml.Merge": func(s *deltalog.Snapshot, b iter.Seq2[arrow.RecordBatch, error]) error {
			_, err := dml.Merge(ctx, s, b, on, []dml.Clause{dml.WhenMatchedUpdateAll(nil), dml.WhenNotMatchedInsertAll(nil)}, dml.WithAliases("t", "s"))
			return err
		},
	}
	for name, op := range ops {
		for _, in := range inputs {
			t.Run(name+"/"+in.name, func(t *testing.T) {
				snap := table(t)
				err := noPanic(t, func() error { return op(snap, in.batches(t, snap)) })
				if in.rows {
					if err == nil {
						t.Fatal("no error")
					}
					if strings.Contains(in.name, "panicking") && !strings.Contains(err.Error(), "caller's bug") {
						t.Errorf("%v: want the panic's value", err)
					}
					unchanged(t, snap)
					return
				}
				if err != nil {
					unchanged(t, snap) // an error, as long as it commits nothing
				}
				if got := tabletest.ScanLines(t, tabletest.Open(t, snap.Store())); name != "writer.Overwrite" && len(got) != 1 {
					t.Errorf("rows after: %v, want the one row", got)
				}
			})
		}
	}
}

// TestNilArguments: every exported operation given a nil snapshot,
// store or metadata, or a cancelled context, returns an error.
func TestNilArguments(t *testing.T) {
	ctx := context.Background()
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	snap := table(t)
	var none iter.Seq2[arrow.RecordBatch, error]
	errs := map[string]func() error{
		"writer.Append":            func() error { _, err := writer.Append(ctx, nil, none); return err },
		"writer.Overwrite":         func() error { _, err := writer.Overwrite(ctx, nil, none); return err },
		"writer.CreateTable/store": func() error { _, err := writer.CreateTable(ctx, nil, "", snap.Metadata(), none); return err },
		"writer.CreateTable/md":    func() error { _, err := writer.CreateTable(ctx, objstore.NewMem(), "", nil, none); return err },
		"dml.Delete":               func() error { _, err := dml.Delete(ctx, nil, nil); return err },
		"dml.Update":               func() error { _, err := dml.Update(ctx, nil, nil, nil); return err },
		"dml.Merge":                func() error { _, err := dml.Merge(ctx, nil, none, nil, nil); return err },
		"dml.Merge/on":             func() error { _, err := dml.Merge(ctx, snap, none, nil, nil); return err },
		"dml.ReplaceWhere":         func() error { _, err := dml.ReplaceWhere(ctx, nil, nil, none); return err },
		"reader.NewScan":           func() error { _, err := reader.NewScan(nil); return err },
		"maintenance.Optimize":     func() error { _, err := maintenance.Optimize(ctx, nil); return err },
		"maintenance.AutoCompact":  func() error { _, err := maintenance.AutoCompact(ctx, nil, nil); return err },
		"maintenance.Vacuum":       func() error { _, err := maintenance.Vacuum(ctx, nil); return err },
		"maintenance.Restore":      func() error { _, err := maintenance.Restore(ctx, nil, maintenance.ToVersion(0)); return err },
		"maintenance.SetProperties": func() error {
			_, err := maintenance.SetProperties(ctx, nil, map[string]string{"a": "b"})
			return err
		},
		"maintenance.UnsetProperties": func() error { _, err := maintenance.UnsetProperties(ctx, nil, []string{"a"}); return err },
		"schema.AddColumns":           func() error { _, err := schema.AddColumns(ctx, nil, nil); return err },
		"schema.RenameColumn":         func() error { _, err := schema.RenameColumn(ctx, nil, "k", "j"); return err },
		"schema.DropColumns":          func() error { _, err := schema.DropColumns(ctx, nil, []string{"k"}); return err },
		"schema.ChangeColumnType":     func() error { _, err := schema.ChangeColumnType(ctx, nil, "k", nil); return err },
		"schema.ChangeColumnType/to":  func() error { _, err := schema.ChangeColumnType(ctx, snap, "k", nil); return err },
		"schema.DropNotNull":          func() error { _, err := schema.DropNotNull(ctx, nil, "k"); return err },
		"schema.SetComment":           func() error { _, err := schema.SetComment(ctx, nil, "k", ""); return err },
		"schema.AddConstraint":        func() error { _, err := schema.AddConstraint(ctx, nil, "c", "k > 0"); return err },
		"schema.DropConstraint":       func() error { _, err := schema.DropConstraint(ctx, nil, "c"); return err },
		"schema.MoveColumn":           func() error { _, err := schema.MoveColumn(ctx, nil, "k", "", true); return err },
		"schema.ReplaceColumns":       func() error { _, err := schema.ReplaceColumns(ctx, nil, nil); return err },
		"cdf.Open":                    func() error { _, err := cdf.Open(ctx, nil, "", cdf.Versions(0, 1)); return err },
		"cdf.Follow": func() error {
			for _, err := range cdf.Follow(ctx, nil, "", cdf.StartingVersion(0)) {
				return err
			}
			return nil
		},
		"convert.ToDelta":    func() error { _, err := convert.ToDelta(ctx, nil, ""); return err },
		"deltalog.Open":      func() error { _, err := deltalog.Open(ctx, nil, ""); return err },
		"deltalog.Create":    func() error { _, err := deltalog.Create(nil, "", snap.Metadata()); return err },
		"deltalog.Create/md": func() error { _, err := deltalog.Create(objstore.NewMem(), "", nil); return err },
		"expr.NewPruner":     func() error { _, err := expr.NewPruner(nil, snap.Config()); return err },
		// A cancelled context.
		"writer.Append/ctx": func() error {
			_, err := writer.Append(cancelled, snap, tabletest.Batches(t, tabletest.Batch(t, memory.DefaultAllocator, snap, `[{"k":2,"v":"b"}]`)))
			return err
		},
		"dml.Delete/ctx": func() error { _, err := dml.Delete(cancelled, snap, nil); return err },
		"dml.Update/ctx": func() error {
			_, err := dml.Update(cancelled, snap, nil, []*expr.Assignment{{Column: expr.Col("v"), Value: expr.Lit("z")}})
			return err
		},
		"deltalog.Open/ctx": func() error { _, err := deltalog.Open(cancelled, snap.Store(), ""); return err },
	}
	for name, f := range errs {
		t.Run(name, func(t *testing.T) {
			if err := noPanic(t, f); err == nil {
				t.Error("no error")
			} else if !strings.Contains(err.Error(), ": ") && !errors.Is(err, context.Canceled) {
				t.Errorf("%v: the message does not start with its package", err)
			}
		})
	}
	unchanged(t, snap)
}

func mustParse(text string) expr.Expr {
	e, err := expr.Parse(text)
	if err != nil {
		panic(err)
	}
	return e
}
