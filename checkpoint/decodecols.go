package checkpoint

import (
	"fmt"
	"strings"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// This file decodes a checkpoint's record batch into FileColumns without
// an *actions.Add per file: each add column is appended to its column of
// the batch's FileColumns, the path and stats straight from the Parquet
// pages (rawStrings.each), the stats JSON parsed as it is read.

// decodeColumnar decodes rec: its adds into FileColumns laid out by l
// (nil when the batch has none), the other kinds in kinds into actions.
// raws are the raw string leaves read beside rec (add.path, add.stats);
// each is read for the batch's rows whether used or not.
func decodeColumnar(rec arrow.RecordBatch, kinds kindSet, raws []*rawStrings, l *FileLayout, withStats bool) ([]decoded, *FileColumns, error) {
	n := int(rec.NumRows())
	var acts []decoded
	others := kinds &^ kindBit(KindAdd)
	if others != 0 {
		decs, err := newDecoders(rec, others, nil)
		if err != nil {
			return nil, nil, err
		}
		for i := 0; i < n; i++ {
			for _, d := range decs {
				if !d.present(i) {
					continue
				}
				a, err := d.decode(i)
				if err != nil {
					return nil, nil, fmt.Errorf("row %d: %w", i, err)
				}
				acts = append(acts, newDecoded(a))
			}
		}
	}
	var add col
	if kinds.has(KindAdd) {
		if idx := rec.Schema().FieldIndices(KindAdd); len(idx) > 0 {
			add = col{rec.Column(idx[0])}
			if _, ok := add.arr.(*array.Struct); !ok {
				if _, isNull := add.arr.(*array.Null); !isNull {
					return nil, nil, &typeError{KindAdd, add.arr.DataType()}
				}
				add = col{}
			}
		}
	}
	var pathRaw, statsRaw *rawStrings
	for _, rs := range raws {
		switch rs.path {
		case "add.path":
			pathRaw = rs
		case "add.stats":
			statsRaw = rs
		}
	}
	if add.arr == nil {
		// No adds here; keep the raw readers in step with the batches.
		for _, rs := range raws {
			if err := rs.each(n, func(int, []byte, bool) {}); err != nil {
				return nil, nil, err
			}
		}
		return acts, nil, nil
	}
	b := NewFilesBuilder(l, n, withStats)
	isAdd := make([]bool, n)
	count := 0
	if pathRaw != nil {
		b.path.reserve(pathRaw.estimate(n))
		err := pathRaw.each(n, func(i int, v []byte, ok bool) {
			if ok && add.valid(i) {
				isAdd[i] = true
				b.appendPath(view(v))
				count++
			}
		})
		if err != nil {
			return nil, nil, err
		}
	} else {
		path, err := newStrCol(add.child("path"), "add.path")
		if err != nil {
			return nil, nil, err
		}
		for i := 0; i < n; i++ {
			if p, ok := path(i); ok && add.valid(i) {
				isAdd[i] = true
				b.appendPath(p)
				count++
			}
		}
	}
	if b.stats != nil {
		k := 0
		if statsRaw != nil {
			err := statsRaw.each(n, func(i int, v []byte, ok bool) {
				if isAdd[i] {
					b.stats.appendJSON(k, v, ok)
					k++
				}
			})
			if err != nil {
				return nil, nil, err
			}
		} else {
			stats, err := newStrCol(add.child("stats"), "add.stats")
			if err != nil {
				return nil, nil, err
			}
			if add.child("stats").arr == nil {
				if parsed := statsJSONCol(add.child("stats_parsed")); parsed != nil {
					stats = parsed
				}
			}
			for i := 0; i < n; i++ {
				if isAdd[i] {
					s, ok := stats(i)
					b.stats.appendJSON(k, bytesOf(s), ok)
					k++
				}
			}
		}
	} else if statsRaw != nil {
		if err := statsRaw.each(n, func(int, []byte, bool) {}); err != nil {
			return nil, nil, err
		}
	}
	if count == 0 {
		return acts, nil, nil
	}
	if err := b.appendAddColumns(add, isAdd); err != nil {
		return nil, nil, err
	}
	b.n = count
	return acts, b.Finish(), nil
}

// bytesOf is s's bytes without copying, for readers that keep nothing.
func bytesOf(s string) []byte {
	if s == "" {
		return nil
	}
	return unsafe.Slice(unsafe.StringData(s), len(s))
}

// appendAddColumns appends every add column but path and stats of the
// rows marked in isAdd.
func (b *FilesBuilder) appendAddColumns(add col, isAdd []bool) error {
	var err error
	must := func(e error) {
		if err == nil {
			err = e
		}
	}
	size, e := newIntCol(add.child("size"), "add.size")
	must(e)
	mtime, e := newIntCol(add.child("modificationTime"), "add.modificationTime")
	must(e)
	dataChange, e := newBoolCol(add.child("dataChange"), "add.dataChange")
	must(e)
	baseRowID, e := newIntCol(add.child("baseRowId"), "add.baseRowId")
	must(e)
	defaultVer, e := newIntCol(add.child("defaultRowCommitVersion"), "add.defaultRowCommitVersion")
	must(e)
	clustering, e := newStrCol(add.child("clusteringProvider"), "add.clusteringProvider")
	must(e)
	dv, e := dvDecoder(add.child("deletionVector"), "add.deletionVector")
	must(e)
	pv, e := newMapView(add.child("partitionValues"), "add.partitionValues")
	must(e)
	tags, e := newMapView(add.child("tags"), "add.tags")
	must(e)
	if err != nil {
		return err
	}
	k := 0
	for i, ok := range isAdd {
		if !ok {
			continue
		}
		v, _ := size(i)
		b.size.append(v, true)
		v, _ = mtime(i)
		b.modTime.append(v, true)
		dc, _ := dataChange(i)
		b.dataChange.append(dc, true)
		b.appendPartitionsView(k, pv, i)
		if beg, end := tags.bounds(i); end > beg {
			// Files without tags (null or empty: the same to Delta)
			// cost nothing.
			tb := b.tagBuilder(k)
			tb.Append(true)
			kb := tb.KeyBuilder().(*array.StringBuilder)
			ib := tb.ItemBuilder().(*array.StringBuilder)
			beg, end := tags.m.ValueOffsets(i)
			for j := int(beg); j < int(end); j++ {
				key, _ := tags.key(j)
				val, _ := tags.item(j)
				kb.Append(key)
				ib.Append(val)
			}
		}
		d, err := dv(i)
		if err != nil {
			return fmt.Errorf("row %d: %w", i, err)
		}
		if d != nil {
			b.appendDV(k, d)
		}
		if v, ok := baseRowID(i); ok {
			b.baseRowID = padInt(b.baseRowID, b.capacity, k)
			b.baseRowID.append(v, true)
		}
		if v, ok := defaultVer(i); ok {
			b.defaultVer = padInt(b.defaultVer, b.capacity, k)
			b.defaultVer.append(v, true)
		}
		if s, ok := clustering(i); ok {
			b.clustering = padText(b.clustering, b.capacity, k)
			b.clustering.appendString(s, true)
		}
		k++
	}
	return nil
}

// mapView reads a map<string,string> column's entries without copying.
type mapView struct {
	m    *array.Map
	key  func(j int) (string, bool)
	item func(j int) (string, bool)
}

func (v mapView) valid(i int) bool { return v.m != nil && v.m.IsValid(i) }

// bounds are row i's entries, none when the row is null.
func (v mapView) bounds(i int) (int64, int64) {
	if !v.valid(i) {
		return 0, 0
	}
	beg, end := v.m.ValueOffsets(i)
	return beg, end
}

func newMapView(c col, path string) (mapView, error) {
	if c.arr == nil {
		return mapView{}, nil
	}
	if _, ok := c.arr.(*array.Null); ok {
		return mapView{}, nil
	}
	m, ok := c.arr.(*array.Map)
	if !ok {
		return mapView{}, &typeError{path, c.arr.DataType()}
	}
	key, err := stringView(m.Keys(), path+".key")
	if err != nil {
		return mapView{}, err
	}
	item, err := stringView(m.Items(), path+".value")
	if err != nil {
		return mapView{}, err
	}
	return mapView{m: m, key: key, item: item}, nil
}

// stringView reads a string or binary array's values as views of its
// buffers (valid while the array is).
func stringView(arr arrow.Array, path string) (func(int) (string, bool), error) {
	var get func(int) string
	switch a := arr.(type) {
	case *array.String:
		get = a.Value
	case *array.LargeString:
		get = a.Value
	case *array.StringView:
		get = a.Value
	case *array.Binary:
		get = func(i int) string { return view(a.Value(i)) }
	case *array.LargeBinary:
		get = func(i int) string { return view(a.Value(i)) }
	case *array.BinaryView:
		get = func(i int) string { return view(a.Value(i)) }
	case *array.Null:
		return func(int) (string, bool) { return "", false }, nil
	default:
		return nil, &typeError{path, arr.DataType()}
	}
	return func(i int) (string, bool) {
		if !arr.IsValid(i) {
			return "", false
		}
		return get(i), true
	}, nil
}

// appendPartitionsView appends file k's partition values from row i of
// the partitionValues map column.
func (b *FilesBuilder) appendPartitionsView(k int, pv mapView, i int) {
	keys := b.layout.Partitions
	if !pv.valid(i) {
		if len(keys) > 0 {
			b.odd(k, map[string]*string{})
		}
		return
	}
	beg, end := pv.m.ValueOffsets(i)
	if int(end-beg) != len(keys) {
		b.odd(k, pv.copyRow(i))
		return
	}
	if len(keys) == 0 {
		return
	}
	var slots [16]int
	order := slots[:0]
	if len(keys) > len(slots) {
		order = make([]int, 0, len(keys))
	}
	// order[p] is the entry holding partition p's value.
	for range keys {
		order = append(order, -1)
	}
	for j := int(beg); j < int(end); j++ {
		key, _ := pv.key(j)
		p := b.layout.PartitionIndex(key)
		if p < 0 || order[p] >= 0 {
			b.odd(k, pv.copyRow(i))
			return
		}
		order[p] = j
	}
	for p, j := range order {
		if v, ok := pv.item(j); ok {
			b.parts[p].appendBytes(bytesOf(v))
		} else {
			b.parts[p].codes.append(0, false)
		}
	}
}

// copyRow builds row i's map, copying its strings.
func (v mapView) copyRow(i int) map[string]*string {
	beg, end := v.m.ValueOffsets(i)
	out := make(map[string]*string, end-beg)
	for j := int(beg); j < int(end); j++ {
		k, _ := v.key(j)
		if s, ok := v.item(j); ok {
			s = strings.Clone(s)
			out[strings.Clone(k)] = &s
		} else {
			out[strings.Clone(k)] = nil
		}
	}
	return out
}
