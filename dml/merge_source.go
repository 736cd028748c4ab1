package dml

import (
	"encoding/binary"
	"errors"
	"fmt"
	"iter"
	"math"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/expr"
	"github.com/lakelog/lakelog/internal/arrowbatch"
	"github.com/lakelog/lakelog/internal/arrowconv"
)

// This file reads a MERGE's source into memory and indexes it by its
// join keys.

// errNoSourceBatch: without a batch, the source has no schema to bind
// the clauses to (a source of no rows is a batch of no rows).
var errNoSourceBatch = errors.New("dml: MERGE: the source yielded no batch, and so no schema (give an empty batch for a source without rows)")

// readSource reads the whole source into one batch.
func (m *merge) readSource(source iter.Seq2[arrow.RecordBatch, error]) error {
	t0 := time.Now()
	defer func() { m.sourceMs = time.Since(t0).Milliseconds() }()
	var recs []arrow.RecordBatch
	defer func() {
		for _, r := range recs {
			r.Release()
		}
	}()
	if source == nil {
		return errNoSourceBatch
	}
	var schema *arrow.Schema
	for rec, err := range source {
		if err != nil {
			return fmt.Errorf("dml: MERGE: source: %w", err)
		}
		if rec == nil {
			continue
		}
		if schema == nil {
			schema = rec.Schema()
		} else if !schema.Equal(rec.Schema()) {
			return fmt.Errorf("dml: MERGE: source batches have different schemas: %s and %s", schema, rec.Schema())
		}
		rec.Retain()
		recs = append(recs, rec)
	}
	if schema == nil {
		return errNoSourceBatch
	}
	src, err := arrowbatch.Concat(recs, m.mem)
	if err != nil {
		return fmt.Errorf("dml: MERGE: source: %w", err)
	}
	m.src = src
	n := src.NumRows()
	if n > math.MaxInt32 {
		return fmt.Errorf("dml: MERGE: the source has %d rows; at most %d are supported", n, math.MaxInt32)
	}
	ss, err := actions.FromArrowSchema(schema)
	if err != nil {
		return fmt.Errorf("dml: MERGE: source: %w", err)
	}
	m.srcSchema = ss
	m.count("sourceRows", n)
	return nil
}

// indexSource builds the hash index of the source's join keys (the
// source rows' keys, sourceKeys).
func (m *merge) indexSource(keys []arrow.Array) {
	n := int(m.src.NumRows())
	m.next = make([]int32, n)
	m.matched = make([]bool, n)
	if ints := intKeys(keys); ints != nil {
		m.firstI = make(map[int64]int32, n)
		for i := n - 1; i >= 0; i-- {
			if keys[0].IsNull(i) {
				m.next[i] = -2
				continue
			}
			v := ints(i)
			if f, ok := m.firstI[v]; ok {
				m.next[i] = f
			} else {
				m.next[i] = -1
			}
			m.firstI[v] = int32(i)
		}
		return
	}
	m.first = make(map[string]int32, n)
	var buf []byte
	for i := n - 1; i >= 0; i-- {
		var ok bool
		buf, ok = appendKey(buf[:0], keys, i)
		if !ok {
			m.next[i] = -2
			continue
		}
		if f, ok := m.first[string(buf)]; ok {
			m.next[i] = f
		} else {
			m.next[i] = -1
		}
		m.first[string(buf)] = int32(i)
	}
}

// sourceKeys evaluates the join keys' source expressions over the source,
// in the target columns' types.
func (m *merge) sourceKeys() ([]arrow.Array, error) {
	j, err := m.joinedBatch(nil, nil, m.src, nil, int(m.src.NumRows()))
	if err != nil {
		return nil, err
	}
	defer j.Release()
	out := make([]arrow.Array, len(m.keys))
	for i, k := range m.keys {
		v, err := expr.EvalScalar(k.source, j, m.mem)
		if err == nil {
			out[i], err = arrowconv.Conform(m.ctx, m.mem, v, k.arrowDT)
			v.Release()
		}
		if err != nil {
			arrowbatch.Release(out)
			return nil, fmt.Errorf("dml: MERGE: source key %s: %w", k.source, err)
		}
	}
	return out, nil
}

// intKeys returns a row's key as an int64 when there is one key of an
// integer, date or timestamp type; else nil.
func intKeys(keys []arrow.Array) func(i int) int64 {
	if len(keys) != 1 {
		return nil
	}
	switch a := keys[0].(type) {
	case *array.Int64:
		return func(i int) int64 { return a.Value(i) }
	case *array.Int32:
		return func(i int) int64 { return int64(a.Value(i)) }
	case *array.Int16:
		return func(i int) int64 { return int64(a.Value(i)) }
	case *array.Int8:
		return func(i int) int64 { return int64(a.Value(i)) }
	case *array.Date32:
		return func(i int) int64 { return int64(a.Value(i)) }
	case *array.Timestamp:
		return func(i int) int64 { return int64(a.Value(i)) }
	}
	return nil
}

// appendKey appends row i's key to dst; false when a key is NULL (which
// equals nothing).
func appendKey(dst []byte, keys []arrow.Array, i int) ([]byte, bool) {
	for _, k := range keys {
		if k.IsNull(i) {
			return dst, false
		}
		switch a := k.(type) {
		case *array.String:
			dst = binary.AppendUvarint(dst, uint64(len(a.Value(i))))
			dst = append(dst, a.Value(i)...)
		case *array.Binary:
			dst = binary.AppendUvarint(dst, uint64(len(a.Value(i))))
			dst = append(dst, a.Value(i)...)
		default:
			v, _ := actions.ArrowValue(k, i)
			s := fmt.Sprint(v)
			dst = binary.AppendUvarint(dst, uint64(len(s)))
			dst = append(dst, s...)
		}
	}
	return dst, true
}
