package checkpoint

import (
	"encoding/binary"
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/lakelog/lakelog/actions"
)

// This file turns Arrow record batches read from a checkpoint into actions.
// Columns are found by name, never by position, and a missing column reads
// as null (PROTOCOL.md "Checkpoints": "Any missing column should be treated
// as null"). Strings are copied out of Arrow buffers so that no action
// keeps a batch alive.

// col is one optional column of a batch: nil when the file lacks it.
type col struct{ arr arrow.Array }

func (c col) valid(i int) bool { return c.arr != nil && c.arr.IsValid(i) }

// child returns the field name of the struct column c, or a nil column.
func (c col) child(name string) col {
	s, ok := c.arr.(*array.Struct)
	if !ok {
		return col{}
	}
	st := s.DataType().(*arrow.StructType)
	idx, ok := st.FieldIdx(name)
	if !ok {
		return col{}
	}
	return col{s.Field(idx)}
}

// typeError reports a column whose Arrow type this reader cannot decode.
type typeError struct {
	path string
	typ  arrow.DataType
}

func (e *typeError) Error() string {
	return fmt.Sprintf("column %s has unsupported type %s", e.path, e.typ)
}

// strCol reads a string (or binary) column.
type strCol func(i int) (string, bool)

func newStrCol(c col, path string) (strCol, error) {
	if c.arr == nil {
		return func(int) (string, bool) { return "", false }, nil
	}
	var get func(i int) string
	switch a := c.arr.(type) {
	case *array.String:
		get = a.Value
	case *array.LargeString:
		get = a.Value
	case *array.StringView:
		get = a.Value
	case *array.Binary:
		get = a.ValueString
	case *array.LargeBinary:
		get = a.ValueString
	case *array.BinaryView:
		get = a.ValueString
	case *array.Null:
		get = func(int) string { return "" }
	default:
		return nil, &typeError{path, c.arr.DataType()}
	}
	arr := c.arr
	if offs, data, ok := stringData(arr); ok {
		// One copy of the batch's bytes; each value is a substring of it,
		// so a million paths cost one allocation per batch, not one each.
		blob := string(data)
		base := offs[0]
		return func(i int) (string, bool) {
			if !arr.IsValid(i) {
				return "", false
			}
			return blob[offs[i]-base : offs[i+1]-base], true
		}, nil
	}
	return func(i int) (string, bool) {
		if !arr.IsValid(i) {
			return "", false
		}
		return strings.Clone(get(i)), true
	}, nil
}

// stringData returns the value offsets and bytes of a string or binary
// array with 32-bit offsets (value i is data[offs[i]-offs[0]:offs[i+1]-offs[0]]).
func stringData(arr arrow.Array) (offs []int32, data []byte, ok bool) {
	switch a := arr.(type) {
	case *array.String:
		return a.ValueOffsets(), a.ValueBytes(), true
	case *array.Binary:
		return a.ValueOffsets(), a.ValueBytes(), true
	}
	return nil, nil, false
}

// intCol reads an integer column of any width.
type intCol func(i int) (int64, bool)

func newIntCol(c col, path string) (intCol, error) {
	if c.arr == nil {
		return func(int) (int64, bool) { return 0, false }, nil
	}
	var get func(i int) int64
	switch a := c.arr.(type) {
	case *array.Int64:
		get = a.Value
	case *array.Int32:
		get = func(i int) int64 { return int64(a.Value(i)) }
	case *array.Int16:
		get = func(i int) int64 { return int64(a.Value(i)) }
	case *array.Int8:
		get = func(i int) int64 { return int64(a.Value(i)) }
	case *array.Uint32:
		get = func(i int) int64 { return int64(a.Value(i)) }
	case *array.Uint16:
		get = func(i int) int64 { return int64(a.Value(i)) }
	case *array.Uint8:
		get = func(i int) int64 { return int64(a.Value(i)) }
	case *array.Null:
		get = func(int) int64 { return 0 }
	default:
		return nil, &typeError{path, c.arr.DataType()}
	}
	arr := c.arr
	return func(i int) (int64, bool) {
		if !arr.IsValid(i) {
			return 0, false
		}
		return get(i), true
	}, nil
}

func (f intCol) ptr(i int) *int64 {
	if v, ok := f(i); ok {
		return ptrTo(v)
	}
	return nil
}

// ptrTo returns a new pointer to a copy of v. Decoders use it instead of
// taking the address of a local: an escaping local is allocated on every
// call, also when the value is null and no pointer is returned (two
// allocations per add of a checkpoint that has none).
func ptrTo[T any](v T) *T {
	p := new(T)
	*p = v
	return p
}

// boolCol reads a boolean column.
type boolCol func(i int) (bool, bool)

func newBoolCol(c col, path string) (boolCol, error) {
	switch a := c.arr.(type) {
	case nil:
		return func(int) (bool, bool) { return false, false }, nil
	case *array.Boolean:
		return func(i int) (bool, bool) {
			if !a.IsValid(i) {
				return false, false
			}
			return a.Value(i), true
		}, nil
	case *array.Null:
		return func(int) (bool, bool) { return false, false }, nil
	default:
		return nil, &typeError{path, c.arr.DataType()}
	}
}

// listCol reads a list<string> column.
type listCol func(i int) ([]string, bool)

func newListCol(c col, path string) (listCol, error) {
	if c.arr == nil {
		return func(int) ([]string, bool) { return nil, false }, nil
	}
	if _, ok := c.arr.(*array.Null); ok {
		return func(int) ([]string, bool) { return nil, false }, nil
	}
	l, ok := c.arr.(array.ListLike)
	if !ok {
		return nil, &typeError{path, c.arr.DataType()}
	}
	if _, isMap := c.arr.(*array.Map); isMap {
		return nil, &typeError{path, c.arr.DataType()}
	}
	elem, err := newStrCol(col{l.ListValues()}, path+".element")
	if err != nil {
		return nil, err
	}
	return func(i int) ([]string, bool) {
		if !l.IsValid(i) {
			return nil, false
		}
		beg, end := l.ValueOffsets(i)
		out := make([]string, 0, end-beg)
		for j := beg; j < end; j++ {
			s, _ := elem(int(j))
			out = append(out, s)
		}
		return out, true
	}, nil
}

// mapCol reads a map<string,string> column; a null value is a nil pointer.
type mapCol func(i int) (map[string]*string, bool)

func newMapCol(c col, path string) (mapCol, error) {
	if c.arr == nil {
		return func(int) (map[string]*string, bool) { return nil, false }, nil
	}
	if _, ok := c.arr.(*array.Null); ok {
		return func(int) (map[string]*string, bool) { return nil, false }, nil
	}
	m, ok := c.arr.(*array.Map)
	if !ok {
		return nil, &typeError{path, c.arr.DataType()}
	}
	keys, err := newStrCol(col{m.Keys()}, path+".key")
	if err != nil {
		return nil, err
	}
	items, err := newStrCol(col{m.Items()}, path+".value")
	if err != nil {
		return nil, err
	}
	return func(i int) (map[string]*string, bool) {
		if !m.IsValid(i) {
			return nil, false
		}
		beg, end := m.ValueOffsets(i)
		out := make(map[string]*string, end-beg)
		for j := beg; j < end; j++ {
			k, _ := keys(int(j))
			if v, ok := items(int(j)); ok {
				out[k] = &v
			} else {
				out[k] = nil
			}
		}
		return out, true
	}, nil
}

// maxInterned bounds the distinct maps an interned map column shares in
// one batch; past it (a partition value per file) maps are built per row.
const maxInterned = 1024

// interned returns f with equal maps of one batch shared: a checkpoint's
// partitionValues repeat across the files of each partition, and one map
// per partition instead of per file saves a small map's allocation per
// file. Callers must not modify the maps (actions read from a checkpoint
// are shared).
func (f mapCol) interned(c col) mapCol {
	m, ok := c.arr.(*array.Map)
	if !ok {
		return f
	}
	keys, items := m.Keys(), m.Items()
	kOffs, kData, ok1 := stringData(keys)
	vOffs, vData, ok2 := stringData(items)
	if !ok1 || !ok2 {
		return f
	}
	seen := map[string]map[string]*string{}
	var key []byte
	return func(i int) (map[string]*string, bool) {
		if !m.IsValid(i) {
			return nil, false
		}
		beg, end := m.ValueOffsets(i)
		// The key: each entry's key bytes, then a null or the value bytes.
		key = key[:0]
		for j := beg; j < end; j++ {
			key = binary.AppendUvarint(key, uint64(kOffs[j+1]-kOffs[j]))
			key = append(key, kData[kOffs[j]-kOffs[0]:kOffs[j+1]-kOffs[0]]...)
			if !items.IsValid(int(j)) {
				key = append(key, 0)
				continue
			}
			key = append(key, 1)
			key = binary.AppendUvarint(key, uint64(vOffs[j+1]-vOffs[j]))
			key = append(key, vData[vOffs[j]-vOffs[0]:vOffs[j+1]-vOffs[0]]...)
		}
		if out, ok := seen[string(key)]; ok {
			return out, true
		}
		out, ok := f(i)
		if ok && len(seen) < maxInterned {
			seen[string(key)] = out
		}
		return out, ok
	}
}

// plain returns the map with null values read as "", for string maps whose
// values the protocol does not let be null (tags, configuration, options).
func (f mapCol) plain(i int) (map[string]string, bool) {
	m, ok := f(i)
	if !ok {
		return nil, false
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		if v != nil {
			out[k] = *v
		} else {
			out[k] = ""
		}
	}
	return out, true
}

// decoder turns the rows of one kind of action into actions. present tells
// whether row i holds an action of the kind; decode builds it.
type decoder struct {
	kind    string
	present func(i int) bool
	decode  func(i int) (actions.Action, error)
}

// newDecoders builds a decoder for each top-level action column of rec
// whose kind is in kinds. Columns of other kinds (commitInfo and cdc in
// old checkpoints, anything unknown) are ignored.
func newDecoders(rec arrow.RecordBatch, kinds kindSet, raw map[string]strCol) ([]decoder, error) {
	var out []decoder
	sc := rec.Schema()
	for i, f := range sc.Fields() {
		if !kinds.has(f.Name) {
			continue
		}
		c := col{rec.Column(i)}
		if _, ok := c.arr.(*array.Struct); !ok {
			if _, isNull := c.arr.(*array.Null); isNull {
				continue
			}
			return nil, &typeError{f.Name, c.arr.DataType()}
		}
		var d decoder
		var err error
		switch f.Name {
		case "add":
			d, err = addDecoder(c, raw)
		case "remove":
			d, err = removeDecoder(c)
		case "metaData":
			d, err = metadataDecoder(c)
		case "protocol":
			d, err = protocolDecoder(c)
		case "txn":
			d, err = txnDecoder(c)
		case "domainMetadata":
			d, err = domainMetadataDecoder(c)
		case "checkpointMetadata":
			d, err = checkpointMetadataDecoder(c)
		case "sidecar":
			d, err = sidecarDecoder(c)
		default:
			continue
		}
		if err != nil {
			return nil, err
		}
		d.kind = f.Name
		out = append(out, d)
	}
	return out, nil
}

// presentBy says a row holds an action when the struct is non-null and its
// identifying field is non-null. Like delta-kernel-rs, a struct whose key
// field is null is read as no action: some writers leave empty structs.
func presentBy(c col, key col) func(i int) bool {
	return func(i int) bool { return c.valid(i) && key.valid(i) }
}

func dvDecoder(c col, path string) (func(i int) (*actions.DeletionVector, error), error) {
	st, err := newStrCol(c.child("storageType"), path+".storageType")
	if err != nil {
		return nil, err
	}
	p, err := newStrCol(c.child("pathOrInlineDv"), path+".pathOrInlineDv")
	if err != nil {
		return nil, err
	}
	off, err := newIntCol(c.child("offset"), path+".offset")
	if err != nil {
		return nil, err
	}
	size, err := newIntCol(c.child("sizeInBytes"), path+".sizeInBytes")
	if err != nil {
		return nil, err
	}
	card, err := newIntCol(c.child("cardinality"), path+".cardinality")
	if err != nil {
		return nil, err
	}
	maxRow, err := newIntCol(c.child("maxRowIndex"), path+".maxRowIndex")
	if err != nil {
		return nil, err
	}
	return func(i int) (*actions.DeletionVector, error) {
		if !c.valid(i) {
			return nil, nil
		}
		s, ok := st(i)
		if !ok {
			// A non-null struct with no storage type: no deletion vector.
			return nil, nil
		}
		dv := &actions.DeletionVector{StorageType: s, MaxRowIndex: maxRow.ptr(i)}
		dv.PathOrInlineDv, _ = p(i)
		if o, ok := off(i); ok {
			o32 := int32(o)
			if int64(o32) != o {
				return nil, fmt.Errorf("%s.offset %d out of range", path, o)
			}
			dv.Offset = &o32
		}
		sz, _ := size(i)
		dv.SizeInBytes = int32(sz)
		if int64(dv.SizeInBytes) != sz {
			return nil, fmt.Errorf("%s.sizeInBytes %d out of range", path, sz)
		}
		dv.Cardinality, _ = card(i)
		return dv, nil
	}, nil
}

// addSlab is how many adds one allocation holds.
const addSlab = 256

func addDecoder(c col, raw map[string]strCol) (decoder, error) {
	var err error
	must := func(e error) {
		if err == nil {
			err = e
		}
	}
	path, e := newStrCol(c.child("path"), "add.path")
	must(e)
	present := presentBy(c, c.child("path"))
	if r, ok := raw["add.path"]; ok {
		path = r
		present = func(i int) bool {
			_, ok := r(i)
			return ok && c.valid(i)
		}
	}
	stats, e := newStrCol(c.child("stats"), "add.stats")
	must(e)
	if r, ok := raw["add.stats"]; ok {
		stats = r
	} else if c.child("stats").arr == nil {
		if parsed := statsJSONCol(c.child("stats_parsed")); parsed != nil {
			stats = parsed
		}
	}
	clustering, e := newStrCol(c.child("clusteringProvider"), "add.clusteringProvider")
	must(e)
	size, e := newIntCol(c.child("size"), "add.size")
	must(e)
	mtime, e := newIntCol(c.child("modificationTime"), "add.modificationTime")
	must(e)
	baseRowID, e := newIntCol(c.child("baseRowId"), "add.baseRowId")
	must(e)
	defaultRowVers, e := newIntCol(c.child("defaultRowCommitVersion"), "add.defaultRowCommitVersion")
	must(e)
	dataChange, e := newBoolCol(c.child("dataChange"), "add.dataChange")
	must(e)
	pv, e := newMapCol(c.child("partitionValues"), "add.partitionValues")
	must(e)
	pv = pv.interned(c.child("partitionValues"))
	tags, e := newMapCol(c.child("tags"), "add.tags")
	must(e)
	dv, e := dvDecoder(c.child("deletionVector"), "add.deletionVector")
	must(e)
	if err != nil {
		return decoder{}, err
	}
	var slab []actions.Add
	var noPartitions map[string]*string
	return decoder{
		present: present,
		decode: func(i int) (actions.Action, error) {
			// Adds are allocated a slab at a time: a checkpoint of a
			// million files is a million adds, and the garbage collector
			// handles thousands of slabs faster than a million objects.
			if len(slab) == 0 {
				slab = make([]actions.Add, addSlab)
			}
			a := &slab[0]
			slab = slab[1:]
			a.Path, _ = path(i)
			a.Stats, _ = stats(i)
			if s, ok := clustering(i); ok {
				a.ClusteringProvider = ptrTo(s)
			}
			a.Size, _ = size(i)
			a.ModificationTime, _ = mtime(i)
			a.DataChange, _ = dataChange(i)
			a.BaseRowID = baseRowID.ptr(i)
			a.DefaultRowCommitVersion = defaultRowVers.ptr(i)
			a.PartitionValues, _ = pv(i)
			if a.PartitionValues == nil {
				if noPartitions == nil {
					noPartitions = map[string]*string{}
				}
				a.PartitionValues = noPartitions // shared, as interned maps are
			}
			a.Tags, _ = tags.plain(i)
			d, err := dv(i)
			if err != nil {
				return actions.Action{}, err
			}
			a.DeletionVector = d
			return actions.Action{Add: a}, nil
		},
	}, nil
}

func removeDecoder(c col) (decoder, error) {
	var err error
	must := func(e error) {
		if err == nil {
			err = e
		}
	}
	path, e := newStrCol(c.child("path"), "remove.path")
	must(e)
	stats, e := newStrCol(c.child("stats"), "remove.stats")
	must(e)
	delTS, e := newIntCol(c.child("deletionTimestamp"), "remove.deletionTimestamp")
	must(e)
	size, e := newIntCol(c.child("size"), "remove.size")
	must(e)
	baseRowID, e := newIntCol(c.child("baseRowId"), "remove.baseRowId")
	must(e)
	defaultRowVers, e := newIntCol(c.child("defaultRowCommitVersion"), "remove.defaultRowCommitVersion")
	must(e)
	dataChange, e := newBoolCol(c.child("dataChange"), "remove.dataChange")
	must(e)
	extended, e := newBoolCol(c.child("extendedFileMetadata"), "remove.extendedFileMetadata")
	must(e)
	pv, e := newMapCol(c.child("partitionValues"), "remove.partitionValues")
	must(e)
	tags, e := newMapCol(c.child("tags"), "remove.tags")
	must(e)
	dv, e := dvDecoder(c.child("deletionVector"), "remove.deletionVector")
	must(e)
	if err != nil {
		return decoder{}, err
	}
	return decoder{
		present: presentBy(c, c.child("path")),
		decode: func(i int) (actions.Action, error) {
			r := &actions.Remove{}
			r.Path, _ = path(i)
			r.Stats, _ = stats(i)
			r.DeletionTimestamp = delTS.ptr(i)
			r.Size = size.ptr(i)
			r.BaseRowID = baseRowID.ptr(i)
			r.DefaultRowCommitVersion = defaultRowVers.ptr(i)
			r.DataChange, _ = dataChange(i)
			if b, ok := extended(i); ok {
				r.ExtendedFileMetadata = ptrTo(b)
			}
			r.PartitionValues, _ = pv(i)
			r.Tags, _ = tags.plain(i)
			d, err := dv(i)
			if err != nil {
				return actions.Action{}, err
			}
			r.DeletionVector = d
			return actions.Action{Remove: r}, nil
		},
	}, nil
}

func metadataDecoder(c col) (decoder, error) {
	var err error
	must := func(e error) {
		if err == nil {
			err = e
		}
	}
	id, e := newStrCol(c.child("id"), "metaData.id")
	must(e)
	name, e := newStrCol(c.child("name"), "metaData.name")
	must(e)
	desc, e := newStrCol(c.child("description"), "metaData.description")
	must(e)
	format := c.child("format")
	provider, e := newStrCol(format.child("provider"), "metaData.format.provider")
	must(e)
	options, e := newMapCol(format.child("options"), "metaData.format.options")
	must(e)
	schema, e := newStrCol(c.child("schemaString"), "metaData.schemaString")
	must(e)
	partCols, e := newListCol(c.child("partitionColumns"), "metaData.partitionColumns")
	must(e)
	created, e := newIntCol(c.child("createdTime"), "metaData.createdTime")
	must(e)
	conf, e := newMapCol(c.child("configuration"), "metaData.configuration")
	must(e)
	if err != nil {
		return decoder{}, err
	}
	return decoder{
		present: presentBy(c, c.child("id")),
		decode: func(i int) (actions.Action, error) {
			m := &actions.Metadata{}
			m.ID, _ = id(i)
			if s, ok := name(i); ok {
				m.Name = &s
			}
			if s, ok := desc(i); ok {
				m.Description = &s
			}
			if format.valid(i) {
				m.Format.Provider, _ = provider(i)
				m.Format.Options, _ = options.plain(i)
			}
			m.SchemaString, _ = schema(i)
			m.PartitionColumns, _ = partCols(i)
			m.CreatedTime = created.ptr(i)
			m.Configuration, _ = conf.plain(i)
			// Match the JSON codec: required collections are never nil.
			if m.Format.Options == nil {
				m.Format.Options = map[string]string{}
			}
			if m.PartitionColumns == nil {
				m.PartitionColumns = []string{}
			}
			if m.Configuration == nil {
				m.Configuration = map[string]string{}
			}
			return actions.Action{Metadata: m}, nil
		},
	}, nil
}

func protocolDecoder(c col) (decoder, error) {
	var err error
	must := func(e error) {
		if err == nil {
			err = e
		}
	}
	minR, e := newIntCol(c.child("minReaderVersion"), "protocol.minReaderVersion")
	must(e)
	minW, e := newIntCol(c.child("minWriterVersion"), "protocol.minWriterVersion")
	must(e)
	rf, e := newListCol(c.child("readerFeatures"), "protocol.readerFeatures")
	must(e)
	wf, e := newListCol(c.child("writerFeatures"), "protocol.writerFeatures")
	must(e)
	if err != nil {
		return decoder{}, err
	}
	return decoder{
		present: presentBy(c, c.child("minReaderVersion")),
		decode: func(i int) (actions.Action, error) {
			r, _ := minR(i)
			w, _ := minW(i)
			p := &actions.Protocol{MinReaderVersion: int(r), MinWriterVersion: int(w)}
			p.ReaderFeatures, _ = rf(i)
			p.WriterFeatures, _ = wf(i)
			// Match the JSON codec: feature lists exist from reader
			// version 3 and writer version 7 on.
			if p.MinReaderVersion >= 3 && p.ReaderFeatures == nil {
				p.ReaderFeatures = []string{}
			}
			if p.MinWriterVersion >= 7 && p.WriterFeatures == nil {
				p.WriterFeatures = []string{}
			}
			return actions.Action{Protocol: p}, nil
		},
	}, nil
}

func txnDecoder(c col) (decoder, error) {
	appID, err := newStrCol(c.child("appId"), "txn.appId")
	if err != nil {
		return decoder{}, err
	}
	version, err := newIntCol(c.child("version"), "txn.version")
	if err != nil {
		return decoder{}, err
	}
	last, err := newIntCol(c.child("lastUpdated"), "txn.lastUpdated")
	if err != nil {
		return decoder{}, err
	}
	return decoder{
		present: presentBy(c, c.child("appId")),
		decode: func(i int) (actions.Action, error) {
			t := &actions.Txn{LastUpdated: last.ptr(i)}
			t.AppID, _ = appID(i)
			t.Version, _ = version(i)
			return actions.Action{Txn: t}, nil
		},
	}, nil
}

func domainMetadataDecoder(c col) (decoder, error) {
	domain, err := newStrCol(c.child("domain"), "domainMetadata.domain")
	if err != nil {
		return decoder{}, err
	}
	conf, err := newStrCol(c.child("configuration"), "domainMetadata.configuration")
	if err != nil {
		return decoder{}, err
	}
	removed, err := newBoolCol(c.child("removed"), "domainMetadata.removed")
	if err != nil {
		return decoder{}, err
	}
	return decoder{
		present: presentBy(c, c.child("domain")),
		decode: func(i int) (actions.Action, error) {
			d := &actions.DomainMetadata{}
			d.Domain, _ = domain(i)
			d.Configuration, _ = conf(i)
			d.Removed, _ = removed(i)
			return actions.Action{DomainMetadata: d}, nil
		},
	}, nil
}

func checkpointMetadataDecoder(c col) (decoder, error) {
	version, err := newIntCol(c.child("version"), "checkpointMetadata.version")
	if err != nil {
		return decoder{}, err
	}
	tags, err := newMapCol(c.child("tags"), "checkpointMetadata.tags")
	if err != nil {
		return decoder{}, err
	}
	return decoder{
		present: presentBy(c, c.child("version")),
		decode: func(i int) (actions.Action, error) {
			m := &actions.CheckpointMetadata{}
			m.Version, _ = version(i)
			m.Tags, _ = tags.plain(i)
			return actions.Action{CheckpointMetadata: m}, nil
		},
	}, nil
}

func sidecarDecoder(c col) (decoder, error) {
	path, err := newStrCol(c.child("path"), "sidecar.path")
	if err != nil {
		return decoder{}, err
	}
	size, err := newIntCol(c.child("sizeInBytes"), "sidecar.sizeInBytes")
	if err != nil {
		return decoder{}, err
	}
	mtime, err := newIntCol(c.child("modificationTime"), "sidecar.modificationTime")
	if err != nil {
		return decoder{}, err
	}
	tags, err := newMapCol(c.child("tags"), "sidecar.tags")
	if err != nil {
		return decoder{}, err
	}
	return decoder{
		present: presentBy(c, c.child("path")),
		decode: func(i int) (actions.Action, error) {
			s := &actions.Sidecar{}
			s.Path, _ = path(i)
			s.SizeInBytes, _ = size(i)
			s.ModificationTime, _ = mtime(i)
			s.Tags, _ = tags.plain(i)
			return actions.Action{Sidecar: s}, nil
		},
	}, nil
}
