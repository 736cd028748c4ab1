package convert

import (
	"fmt"
	"strings"

	"github.com/lakelog/lakelog/actions"
)

// mergeSchemas merges the files' schemas in listing order, as Spark's
// SchemaMergingUtils.mergeSchemas does for CONVERT: fields matched by
// name without regard to case (the first spelling stays), new fields
// appended, arrays and maps merged element-wise, byte, short and int
// widened to the wider; any other difference is a conflict, reported
// naming the first file of the schema so far that has the field and the
// file that disagrees.
func mergeSchemas(files []*file) (*actions.StructType, error) {
	m := &merger{owner: map[string]string{}}
	merged := &actions.StructType{}
	for _, f := range files {
		t, err := m.merge(merged, f.footer.schema, f.key, "")
		if err != nil {
			return nil, err
		}
		merged = t.(*actions.StructType)
	}
	return merged, nil
}

// merger remembers which file first brought each field, to name it in a
// conflict.
type merger struct {
	owner map[string]string // lower-cased field path -> key
}

func (m *merger) merge(cur, upd actions.DataType, key, path string) (actions.DataType, error) {
	switch c := cur.(type) {
	case *actions.StructType:
		u, ok := upd.(*actions.StructType)
		if !ok {
			break
		}
		out := &actions.StructType{Fields: make([]*actions.StructField, 0, len(c.Fields)+len(u.Fields))}
		used := make([]bool, len(u.Fields))
		for _, cf := range c.Fields {
			nf := *cf
			if i := u.IndexFold(cf.Name); i >= 0 {
				used[i] = true
				t, err := m.merge(cf.Type, u.Fields[i].Type, key, join(path, cf.Name))
				if err != nil {
					return nil, err
				}
				nf.Type = t
			}
			out.Fields = append(out.Fields, &nf)
		}
		for i, uf := range u.Fields {
			if !used[i] {
				m.claim(join(path, uf.Name), uf.Type, key)
				out.Fields = append(out.Fields, uf)
			}
		}
		return out, nil
	case *actions.ArrayType:
		u, ok := upd.(*actions.ArrayType)
		if !ok {
			break
		}
		e, err := m.merge(c.ElementType, u.ElementType, key, join(path, "element"))
		if err != nil {
			return nil, err
		}
		return &actions.ArrayType{ElementType: e, ContainsNull: c.ContainsNull}, nil
	case *actions.MapType:
		u, ok := upd.(*actions.MapType)
		if !ok {
			break
		}
		k, err := m.merge(c.KeyType, u.KeyType, key, join(path, "key"))
		if err != nil {
			return nil, err
		}
		v, err := m.merge(c.ValueType, u.ValueType, key, join(path, "value"))
		if err != nil {
			return nil, err
		}
		return &actions.MapType{KeyType: k, ValueType: v, ValueContainsNull: c.ValueContainsNull}, nil
	default:
		if w, ok := widen(cur, upd); ok {
			return w, nil
		}
	}
	return nil, &FileError{
		Key: m.owner[lower(path)], Other: key,
		Msg: fmt.Sprintf("column %s is %s in the first and %s in the second; their schemas cannot be merged", path, cur, upd),
		Err: ErrSchemaConflict,
	}
}

// claim records key as the first file with path and its nested fields.
func (m *merger) claim(path string, t actions.DataType, key string) {
	if _, ok := m.owner[lower(path)]; !ok {
		m.owner[lower(path)] = key
	}
	switch x := t.(type) {
	case *actions.StructType:
		for _, f := range x.Fields {
			m.claim(join(path, f.Name), f.Type, key)
		}
	case *actions.ArrayType:
		m.claim(join(path, "element"), x.ElementType, key)
	case *actions.MapType:
		m.claim(join(path, "key"), x.KeyType, key)
		m.claim(join(path, "value"), x.ValueType, key)
	}
}

// widen merges two primitive types: equal ones, and byte, short and int
// to the wider (Parquet stores all three as INT32).
func widen(a, b actions.DataType) (actions.DataType, bool) {
	if typesEqual(a, b) {
		return a, true
	}
	rank := func(t actions.DataType) int {
		switch t {
		case actions.TypeByte:
			return 1
		case actions.TypeShort:
			return 2
		case actions.TypeInteger:
			return 3
		}
		return 0
	}
	ra, rb := rank(a), rank(b)
	if ra == 0 || rb == 0 {
		return nil, false
	}
	if ra >= rb {
		return a, true
	}
	return b, true
}

func typesEqual(a, b actions.DataType) bool {
	if da, ok := a.(*actions.DecimalType); ok {
		db, ok := b.(*actions.DecimalType)
		return ok && da.Precision == db.Precision && da.Scale == db.Scale
	}
	pa, ok := a.(actions.PrimitiveType)
	pb, ok2 := b.(actions.PrimitiveType)
	return ok && ok2 && pa == pb
}

func lower(s string) string { return strings.ToLower(s) }

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}
