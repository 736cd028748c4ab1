package checkpoint

import (
	"fmt"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/lakelog/lakelog/actions"
)

// This file appends actions to Arrow builders laid out as checkpointSchema.
// Each row holds one action: its kind's struct is set and every other
// top-level struct is null.

// structB wraps a struct builder with its children by name.
type structB struct {
	b      *array.StructBuilder
	fields map[string]array.Builder
}

func newStructB(b array.Builder) structB {
	sb := b.(*array.StructBuilder)
	st := sb.Type().(*arrow.StructType)
	m := make(map[string]array.Builder, st.NumFields())
	for i, f := range st.Fields() {
		m[f.Name] = sb.FieldBuilder(i)
	}
	return structB{sb, m}
}

func (s structB) child(name string) structB { return newStructB(s.fields[name]) }

func (s structB) str(name string) *array.StringBuilder {
	return s.fields[name].(*array.StringBuilder)
}

func (s structB) i64(name string) *array.Int64Builder { return s.fields[name].(*array.Int64Builder) }
func (s structB) i32(name string) *array.Int32Builder { return s.fields[name].(*array.Int32Builder) }
func (s structB) boolean(name string) *array.BooleanBuilder {
	return s.fields[name].(*array.BooleanBuilder)
}
func (s structB) mapB(name string) *array.MapBuilder { return s.fields[name].(*array.MapBuilder) }
func (s structB) list(name string) *array.ListBuilder {
	return s.fields[name].(*array.ListBuilder)
}

func appendOptI64(b *array.Int64Builder, v *int64) {
	if v == nil {
		b.AppendNull()
		return
	}
	b.Append(*v)
}

func appendOptStr(b *array.StringBuilder, v *string) {
	if v == nil {
		b.AppendNull()
		return
	}
	b.Append(*v)
}

// appendStrMap appends m with its keys sorted, or null for a nil m when
// nullIfNil is set (an empty map otherwise).
func appendStrMap(b *array.MapBuilder, m map[string]string, nullIfNil bool) {
	if m == nil && nullIfNil {
		b.AppendNull()
		return
	}
	b.Append(true)
	kb := b.KeyBuilder().(*array.StringBuilder)
	ib := b.ItemBuilder().(*array.StringBuilder)
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		kb.Append(k)
		ib.Append(m[k])
	}
}

// appendPartitionValues appends a partition value map (null values kept).
func appendPartitionValues(b *array.MapBuilder, m map[string]*string, nullIfNil bool) {
	if m == nil && nullIfNil {
		b.AppendNull()
		return
	}
	b.Append(true)
	kb := b.KeyBuilder().(*array.StringBuilder)
	ib := b.ItemBuilder().(*array.StringBuilder)
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		kb.Append(k)
		appendOptStr(ib, m[k])
	}
}

func appendStrList(b *array.ListBuilder, l []string, null bool) {
	if null {
		b.AppendNull()
		return
	}
	b.Append(true)
	vb := b.ValueBuilder().(*array.StringBuilder)
	for _, s := range l {
		vb.Append(s)
	}
}

func appendDV(s structB, dv *actions.DeletionVector) {
	if dv == nil {
		s.b.AppendNull()
		return
	}
	s.b.Append(true)
	s.str("storageType").Append(dv.StorageType)
	s.str("pathOrInlineDv").Append(dv.PathOrInlineDv)
	if dv.Offset != nil {
		s.i32("offset").Append(*dv.Offset)
	} else {
		s.i32("offset").AppendNull()
	}
	s.i32("sizeInBytes").Append(dv.SizeInBytes)
	s.i64("cardinality").Append(dv.Cardinality)
	appendOptI64(s.i64("maxRowIndex"), dv.MaxRowIndex)
}

// encoder appends actions to a record builder in checkpointSchema's layout.
type encoder struct {
	rb   *array.RecordBuilder
	tops map[string]structB
	// Nested structs, looked up once.
	addDV, removeDV, format structB
	// parsed appends add.partitionValues_parsed and add.stats_parsed; nil
	// when they are not written.
	parsed *parsedEncoder
	buf    []byte // stats rendered from columns
}

func newEncoder(rb *array.RecordBuilder, parsed *parsedEncoder) *encoder {
	e := &encoder{rb: rb, tops: map[string]structB{}, parsed: parsed}
	for i, f := range rb.Schema().Fields() {
		e.tops[f.Name] = newStructB(rb.Field(i))
	}
	if add, ok := e.tops[KindAdd]; ok {
		e.addDV = add.child("deletionVector")
		if parsed != nil {
			parsed.bind(add)
		}
	}
	e.removeDV = e.tops[KindRemove].child("deletionVector")
	if md, ok := e.tops[KindMetadata]; ok {
		e.format = md.child("format")
	}
	return e
}

// append adds one action as a row. It reports false for kinds a
// checkpoint does not hold (commitInfo, cdc, unknown), which it skips.
func (e *encoder) append(a *actions.Action) (bool, error) {
	kind := a.Kind()
	top, ok := e.tops[kind]
	if !ok {
		return false, nil
	}
	for name, s := range e.tops {
		if name != kind {
			s.b.AppendNull()
		}
	}
	top.b.Append(true)
	switch kind {
	case KindTxn:
		t := a.Txn
		top.str("appId").Append(t.AppID)
		top.i64("version").Append(t.Version)
		appendOptI64(top.i64("lastUpdated"), t.LastUpdated)
	case KindAdd:
		ad := a.Add
		top.str("path").Append(ad.Path)
		appendPartitionValues(top.mapB("partitionValues"), ad.PartitionValues, false)
		top.i64("size").Append(ad.Size)
		top.i64("modificationTime").Append(ad.ModificationTime)
		top.boolean("dataChange").Append(ad.DataChange)
		if b, ok := top.fields["stats"]; ok {
			if ad.Stats == "" {
				b.AppendNull()
			} else {
				b.(*array.StringBuilder).Append(ad.Stats)
			}
		}
		appendStrMap(top.mapB("tags"), ad.Tags, true)
		appendDV(e.addDV, ad.DeletionVector)
		appendOptI64(top.i64("baseRowId"), ad.BaseRowID)
		appendOptI64(top.i64("defaultRowCommitVersion"), ad.DefaultRowCommitVersion)
		appendOptStr(top.str("clusteringProvider"), ad.ClusteringProvider)
		if e.parsed != nil {
			if err := e.parsed.appendAdd(ad); err != nil {
				return false, fmt.Errorf("add %s: %w", ad.Path, err)
			}
		}
	case KindRemove:
		r := a.Remove
		top.str("path").Append(r.Path)
		appendOptI64(top.i64("deletionTimestamp"), r.DeletionTimestamp)
		top.boolean("dataChange").Append(r.DataChange)
		if r.ExtendedFileMetadata != nil {
			top.boolean("extendedFileMetadata").Append(*r.ExtendedFileMetadata)
		} else {
			top.boolean("extendedFileMetadata").AppendNull()
		}
		appendPartitionValues(top.mapB("partitionValues"), r.PartitionValues, true)
		appendOptI64(top.i64("size"), r.Size)
		appendDV(e.removeDV, r.DeletionVector)
		appendOptI64(top.i64("baseRowId"), r.BaseRowID)
		appendOptI64(top.i64("defaultRowCommitVersion"), r.DefaultRowCommitVersion)
	case KindMetadata:
		m := a.Metadata
		top.str("id").Append(m.ID)
		appendOptStr(top.str("name"), m.Name)
		appendOptStr(top.str("description"), m.Description)
		f := e.format
		f.b.Append(true)
		f.str("provider").Append(m.Format.Provider)
		appendStrMap(f.mapB("options"), m.Format.Options, false)
		top.str("schemaString").Append(m.SchemaString)
		appendStrList(top.list("partitionColumns"), m.PartitionColumns, false)
		appendStrMap(top.mapB("configuration"), m.Configuration, false)
		appendOptI64(top.i64("createdTime"), m.CreatedTime)
	case KindProtocol:
		p := a.Protocol
		top.i32("minReaderVersion").Append(int32(p.MinReaderVersion))
		top.i32("minWriterVersion").Append(int32(p.MinWriterVersion))
		// PROTOCOL.md "Checkpoint Schema": the feature lists are non-null
		// exactly from reader version 3 and writer version 7 on.
		appendStrList(top.list("readerFeatures"), p.ReaderFeatures, p.MinReaderVersion < 3)
		appendStrList(top.list("writerFeatures"), p.WriterFeatures, p.MinWriterVersion < 7)
	case KindDomainMetadata:
		d := a.DomainMetadata
		top.str("domain").Append(d.Domain)
		top.str("configuration").Append(d.Configuration)
		top.boolean("removed").Append(d.Removed)
	case KindCheckpointMetadata:
		m := a.CheckpointMetadata
		top.i64("version").Append(m.Version)
		appendStrMap(top.mapB("tags"), m.Tags, true)
	case KindSidecar:
		s := a.Sidecar
		top.str("path").Append(s.Path)
		top.i64("sizeInBytes").Append(s.SizeInBytes)
		top.i64("modificationTime").Append(s.ModificationTime)
		appendStrMap(top.mapB("tags"), s.Tags, true)
	}
	return true, nil
}

// appendFile adds row i of c as an add action, from its columns.
func (e *encoder) appendFile(c *FileColumns, i int) error {
	top, ok := e.tops[KindAdd]
	if !ok {
		return nil
	}
	if s := c.Stats(); s != nil {
		if _, raw := s.raw[i]; raw {
			// Stats kept as written: the add as Write writes one.
			a := actions.Action{Add: c.Add(i)}
			_, err := e.append(&a)
			return err
		}
	}
	for name, s := range e.tops {
		if name != KindAdd {
			s.b.AppendNull()
		}
	}
	top.b.Append(true)
	top.str("path").Append(c.Path(i))
	e.appendPartitionValuesOf(top.mapB("partitionValues"), c, i)
	top.i64("size").Append(c.Size(i))
	top.i64("modificationTime").Append(c.ModificationTime(i))
	top.boolean("dataChange").Append(c.DataChange(i))
	if b, ok := top.fields["stats"]; ok {
		sb := b.(*array.StringBuilder)
		if st := c.Stats(); st == nil || !st.present.Value(i) {
			sb.AppendNull()
		} else {
			e.buf = st.render(c.layout, i, e.buf[:0])
			sb.BinaryBuilder.Append(e.buf)
		}
	}
	appendStrMap(top.mapB("tags"), c.Tags(i), true)
	appendDV(e.addDV, c.DeletionVector(i))
	appendOptI64(top.i64("baseRowId"), optInt(c.baseRowID, i))
	appendOptI64(top.i64("defaultRowCommitVersion"), optInt(c.defaultRowVersion, i))
	if c.clustering != nil && c.clustering.IsValid(i) {
		top.str("clusteringProvider").Append(c.clustering.Value(i))
	} else {
		top.str("clusteringProvider").AppendNull()
	}
	if e.parsed != nil {
		if err := e.parsed.appendFile(c, i); err != nil {
			return fmt.Errorf("add %s: %w", c.Path(i), err)
		}
	}
	return nil
}

// appendPartitionValuesOf appends file i's partition values, keys
// sorted, from the dictionary columns.
func (e *encoder) appendPartitionValuesOf(b *array.MapBuilder, c *FileColumns, i int) {
	if m, odd := c.oddParts[i]; odd {
		appendPartitionValues(b, m, false)
		return
	}
	b.Append(true)
	kb := b.KeyBuilder().(*array.StringBuilder)
	ib := b.ItemBuilder().(*array.StringBuilder)
	for _, j := range c.layout.sortedParts {
		kb.Append(c.layout.Partitions[j])
		d := c.parts[j]
		if d.IsNull(i) {
			ib.AppendNull()
			continue
		}
		ib.Append(d.Dictionary().(*array.String).Value(d.GetValueIndex(i)))
	}
}
