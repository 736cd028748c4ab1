package expr

import (
	"fmt"
	"slices"
	"strings"

	"github.com/lakelog/lakelog/actions"
)

// Functions that build and take apart arrays, maps and structs. Array
// positions of element_at and slice count from 1 (negative from the
// end); an index outside the array is an error (ANSI mode), a missing map
// key is NULL. A map may not hold NULL or duplicate keys (Spark's
// default mapKeyDedupPolicy EXCEPTION).

func init() {
	register(
		&function{names: []string{"array"}, minArgs: 0, maxArgs: -1, generated: true, nullSafe: true,
			bind: func(b *binder, c *Call) ([]Expr, actions.DataType, error) {
				args, t, err := b.toCommon(c, c.Args, 0)
				if err != nil {
					return nil, nil, err
				}
				if t == nil {
					t = actions.TypeString
					for i := range args {
						args[i] = typedNull(args[i], t)
					}
				}
				return args, &actions.ArrayType{ElementType: t, ContainsNull: true}, nil
			},
			eval: func(x *callCtx, a []any) (any, error) { return slices.Clone(a), nil }},
		&function{names: []string{"map"}, minArgs: 0, maxArgs: -1, generated: true, nullSafe: true,
			bind: func(b *binder, c *Call) ([]Expr, actions.DataType, error) {
				if len(c.Args)%2 != 0 {
					return nil, nil, typeErr(c, "map takes keys and values in pairs, not %d arguments", len(c.Args))
				}
				var keys, vals []Expr
				for i := 0; i < len(c.Args); i += 2 {
					keys = append(keys, c.Args[i])
					vals = append(vals, c.Args[i+1])
				}
				keys, kt, err := b.toCommon(c, keys, 0)
				if err != nil {
					return nil, nil, err
				}
				vals, vt, err := b.toCommon(c, vals, 0)
				if err != nil {
					return nil, nil, err
				}
				if kt == nil {
					kt = actions.TypeString
				}
				if vt == nil {
					vt = actions.TypeString
				}
				args := make([]Expr, 0, len(c.Args))
				for i := range keys {
					args = append(args, typedNull(keys[i], kt), typedNull(vals[i], vt))
				}
				return args, &actions.MapType{KeyType: kt, ValueType: vt, ValueContainsNull: true}, nil
			},
			eval: func(x *callCtx, a []any) (any, error) {
				m := &MapValue{Keys: []any{}, Values: []any{}}
				for i := 0; i < len(a); i += 2 {
					if err := mapPut(m, a[i], a[i+1]); err != nil {
						return nil, err
					}
				}
				return m, nil
			}},
		&function{names: []string{"struct"}, minArgs: 0, maxArgs: -1, nullSafe: true,
			bind: func(b *binder, c *Call) ([]Expr, actions.DataType, error) {
				st := &actions.StructType{}
				for i, a := range c.Args {
					name := fmt.Sprintf("col%d", i+1)
					if col, ok := a.(*Column); ok {
						name = col.Path[len(col.Path)-1]
					}
					t := a.Type()
					if t == nil {
						t = actions.TypeString
					}
					st.Fields = append(st.Fields, &actions.StructField{Name: name, Type: t, Nullable: true})
				}
				return c.Args, st, nil
			},
			eval: func(x *callCtx, a []any) (any, error) { return StructValue(slices.Clone(a)), nil }},
		&function{names: []string{"named_struct"}, minArgs: 0, maxArgs: -1, generated: true, nullSafe: true,
			bind: func(b *binder, c *Call) ([]Expr, actions.DataType, error) {
				if len(c.Args)%2 != 0 {
					return nil, nil, typeErr(c, "named_struct takes names and values in pairs, not %d arguments", len(c.Args))
				}
				st := &actions.StructType{}
				for i := 0; i < len(c.Args); i += 2 {
					name, ok := stringLiteral(c.Args[i])
					if !ok {
						return nil, nil, typeErr(c, "argument %d of named_struct must be a constant string, a field name", i+1)
					}
					t := c.Args[i+1].Type()
					if t == nil {
						t = actions.TypeString
					}
					st.Fields = append(st.Fields, &actions.StructField{Name: name, Type: t, Nullable: true})
				}
				return c.Args, st, nil
			},
			eval: func(x *callCtx, a []any) (any, error) {
				out := make(StructValue, 0, len(a)/2)
				for i := 1; i < len(a); i += 2 {
					out = append(out, a[i])
				}
				return out, nil
			}},
		&function{names: []string{"element_at"}, minArgs: 2, maxArgs: 2, generated: true, bind: elementAtType,
			eval: func(x *callCtx, a []any) (any, error) { return elementAt(a[0], a[1], false) }},
		&function{names: []string{"try_element_at"}, minArgs: 2, maxArgs: 2, bind: elementAtType,
			eval: func(x *callCtx, a []any) (any, error) { return elementAt(a[0], a[1], true) }},
		&function{names: []string{"get"}, minArgs: 2, maxArgs: 2,
			bind: func(b *binder, c *Call) ([]Expr, actions.DataType, error) {
				args, err := b.coerceArgs(c, kArray, kInt)
				if err != nil {
					return nil, nil, err
				}
				return args, args[0].Type().(*actions.ArrayType).ElementType, nil
			},
			eval: func(x *callCtx, a []any) (any, error) {
				l, i := a[0].([]any), int(a[1].(int32))
				if i < 0 || i >= len(l) {
					return nil, nil
				}
				return l[i], nil
			}},
		&function{names: []string{"size", "cardinality", "array_size"}, minArgs: 1, maxArgs: 1, generated: true,
			bind: func(b *binder, c *Call) ([]Expr, actions.DataType, error) {
				switch c.Args[0].Type().(type) {
				case *actions.ArrayType, *actions.MapType, nil:
					return c.Args, actions.TypeInteger, nil
				}
				return nil, nil, typeErr(c, "size needs an array or a map, not %s", c.Args[0].Type())
			},
			eval: func(x *callCtx, a []any) (any, error) {
				switch v := a[0].(type) {
				case []any:
					return int32(len(v)), nil
				case *MapValue:
					return int32(len(v.Keys)), nil
				}
				return nil, nil
			}},
		&function{names: []string{"array_contains"}, minArgs: 2, maxArgs: 2, generated: true, bind: arrayAndElement(actions.TypeBoolean),
			eval: func(x *callCtx, a []any) (any, error) {
				sawNull := false
				for _, e := range a[0].([]any) {
					if e == nil {
						sawNull = true
						continue
					}
					if equalValues(e, a[1]) {
						return true, nil
					}
				}
				if sawNull {
					return nil, nil
				}
				return false, nil
			}},
		&function{names: []string{"array_position"}, minArgs: 2, maxArgs: 2, generated: true, bind: arrayAndElement(actions.TypeLong),
			eval: func(x *callCtx, a []any) (any, error) {
				for i, e := range a[0].([]any) {
					if e != nil && equalValues(e, a[1]) {
						return int64(i + 1), nil
					}
				}
				return int64(0), nil
			}},
		&function{names: []string{"array_remove"}, minArgs: 2, maxArgs: 2, generated: true, bind: arrayAndElement(nil),
			eval: func(x *callCtx, a []any) (any, error) {
				out := []any{}
				for _, e := range a[0].([]any) {
					if e == nil || !equalValues(e, a[1]) {
						out = append(out, e)
					}
				}
				return out, nil
			}},
		&function{names: []string{"array_min"}, minArgs: 1, maxArgs: 1, generated: true, bind: arrayElementType,
			eval: func(x *callCtx, a []any) (any, error) { return arrayExtremum(a[0].([]any), -1) }},
		&function{names: []string{"array_max"}, minArgs: 1, maxArgs: 1, generated: true, bind: arrayElementType,
			eval: func(x *callCtx, a []any) (any, error) { return arrayExtremum(a[0].([]any), 1) }},
		&function{names: []string{"array_distinct"}, minArgs: 1, maxArgs: 1, generated: true, bind: sameArray,
			eval: func(x *callCtx, a []any) (any, error) { return distinct(a[0].([]any)), nil }},
		&function{names: []string{"array_compact"}, minArgs: 1, maxArgs: 1, bind: sameArray,
			eval: func(x *callCtx, a []any) (any, error) {
				out := []any{}
				for _, e := range a[0].([]any) {
					if e != nil {
						out = append(out, e)
					}
				}
				return out, nil
			}},
		&function{names: []string{"array_repeat"}, minArgs: 2, maxArgs: 2, generated: true, nullSafe: true,
			bind: func(b *binder, c *Call) ([]Expr, actions.DataType, error) {
				args, err := b.coerceArgs(c, kAny, kInt)
				if err != nil {
					return nil, nil, err
				}
				t := args[0].Type()
				if t == nil {
					t = actions.TypeString
				}
				return args, &actions.ArrayType{ElementType: t, ContainsNull: true}, nil
			},
			eval: func(x *callCtx, a []any) (any, error) {
				if a[1] == nil {
					return nil, nil
				}
				n := int(a[1].(int32))
				if n > 1<<24 {
					return nil, fmt.Errorf("array_repeat: %d elements are too many", n)
				}
				out := []any{}
				for i := 0; i < n; i++ {
					out = append(out, a[0])
				}
				return out, nil
			}},
		&function{names: []string{"slice"}, minArgs: 3, maxArgs: 3, generated: true,
			bind: func(b *binder, c *Call) ([]Expr, actions.DataType, error) {
				args, err := b.coerceArgs(c, kArray, kInt, kInt)
				if err != nil {
					return nil, nil, err
				}
				return args, args[0].Type(), nil
			},
			eval: func(x *callCtx, a []any) (any, error) {
				l, start, n := a[0].([]any), int(a[1].(int32)), int(a[2].(int32))
				if start == 0 {
					return nil, fmt.Errorf("slice: the start must not be 0 (positions count from 1, or from -1 at the end)")
				}
				if n < 0 {
					return nil, fmt.Errorf("slice: the length must not be negative, not %d", n)
				}
				i := start - 1
				if start < 0 {
					i = len(l) + start
				}
				if i < 0 || i >= len(l) {
					return []any{}, nil
				}
				return slices.Clone(l[i:min(len(l), i+n)]), nil
			}},
		&function{names: []string{"sort_array"}, minArgs: 1, maxArgs: 2, generated: true,
			bind: func(b *binder, c *Call) ([]Expr, actions.DataType, error) {
				args, err := b.coerceArgs(c, kArray, kBool)
				if err != nil {
					return nil, nil, err
				}
				return args, args[0].Type(), nil
			},
			eval: func(x *callCtx, a []any) (any, error) {
				asc := len(a) < 2 || a[1].(bool)
				return sortElements(a[0].([]any), asc, asc)
			}},
		&function{names: []string{"array_sort"}, minArgs: 1, maxArgs: 1, generated: true, bind: sameArray,
			eval: func(x *callCtx, a []any) (any, error) { return sortElements(a[0].([]any), true, false) }},
		&function{names: []string{"array_join"}, minArgs: 2, maxArgs: 3, generated: true,
			bind: func(b *binder, c *Call) ([]Expr, actions.DataType, error) {
				args, err := b.coerceArgs(c, kArray, kString, kString)
				if err != nil {
					return nil, nil, err
				}
				if et := args[0].Type().(*actions.ArrayType).ElementType; et != actions.TypeString {
					args[0], err = b.castTo(c, args[0], &actions.ArrayType{ElementType: actions.TypeString, ContainsNull: true})
					if err != nil {
						return nil, nil, err
					}
				}
				return args, actions.TypeString, nil
			},
			eval: func(x *callCtx, a []any) (any, error) {
				var parts []string
				for _, e := range a[0].([]any) {
					switch {
					case e != nil:
						parts = append(parts, e.(string))
					case len(a) == 3:
						parts = append(parts, a[2].(string))
					}
				}
				return strings.Join(parts, a[1].(string)), nil
			}},
		&function{names: []string{"arrays_overlap"}, minArgs: 2, maxArgs: 2, generated: true, bind: twoArrays(actions.TypeBoolean),
			eval: func(x *callCtx, a []any) (any, error) {
				sawNull := false
				for _, p := range a[0].([]any) {
					for _, q := range a[1].([]any) {
						if p == nil || q == nil {
							sawNull = true
							continue
						}
						if equalValues(p, q) {
							return true, nil
						}
					}
				}
				if sawNull && len(a[0].([]any)) > 0 && len(a[1].([]any)) > 0 {
					return nil, nil
				}
				return false, nil
			}},
		&function{names: []string{"array_union"}, minArgs: 2, maxArgs: 2, generated: true, bind: twoArrays(nil),
			eval: func(x *callCtx, a []any) (any, error) {
				return distinct(append(slices.Clone(a[0].([]any)), a[1].([]any)...)), nil
			}},
		&function{names: []string{"array_intersect"}, minArgs: 2, maxArgs: 2, generated: true, bind: twoArrays(nil),
			eval: func(x *callCtx, a []any) (any, error) {
				out := []any{}
				for _, e := range distinct(a[0].([]any)) {
					if containsValue(a[1].([]any), e) {
						out = append(out, e)
					}
				}
				return out, nil
			}},
		&function{names: []string{"array_except"}, minArgs: 2, maxArgs: 2, generated: true, bind: twoArrays(nil),
			eval: func(x *callCtx, a []any) (any, error) {
				out := []any{}
				for _, e := range distinct(a[0].([]any)) {
					if !containsValue(a[1].([]any), e) {
						out = append(out, e)
					}
				}
				return out, nil
			}},
		&function{names: []string{"array_append"}, minArgs: 2, maxArgs: 2, nullSafe: true, bind: arrayAndElement(nil),
			eval: func(x *callCtx, a []any) (any, error) {
				if a[0] == nil {
					return nil, nil
				}
				return append(slices.Clone(a[0].([]any)), a[1]), nil
			}},
		&function{names: []string{"array_prepend"}, minArgs: 2, maxArgs: 2, nullSafe: true, bind: arrayAndElement(nil),
			eval: func(x *callCtx, a []any) (any, error) {
				if a[0] == nil {
					return nil, nil
				}
				return append([]any{a[1]}, a[0].([]any)...), nil
			}},
		&function{names: []string{"flatten"}, minArgs: 1, maxArgs: 1, generated: true,
			bind: func(b *binder, c *Call) ([]Expr, actions.DataType, error) {
				at, ok := c.Args[0].Type().(*actions.ArrayType)
				inner, ok2 := func() (*actions.ArrayType, bool) {
					if !ok {
						return nil, false
					}
					x, y := at.ElementType.(*actions.ArrayType)
					return x, y
				}()
				if !ok || !ok2 {
					return nil, nil, typeErr(c, "flatten needs an array of arrays")
				}
				return c.Args, inner, nil
			},
			eval: func(x *callCtx, a []any) (any, error) {
				out := []any{}
				for _, e := range a[0].([]any) {
					if e == nil {
						return nil, nil
					}
					out = append(out, e.([]any)...)
				}
				return out, nil
			}},
		&function{names: []string{"sequence"}, minArgs: 2, maxArgs: 3, generated: true,
			bind: func(b *binder, c *Call) ([]Expr, actions.DataType, error) {
				args, err := b.coerceArgs(c, kIntegral)
				if err != nil {
					return nil, nil, err
				}
				args, t, err := b.toCommon(c, args, 0)
				if err != nil {
					return nil, nil, err
				}
				return args, &actions.ArrayType{ElementType: t, ContainsNull: false}, nil
			},
			eval: func(x *callCtx, a []any) (any, error) {
				start, _ := asInt64(a[0])
				stop, _ := asInt64(a[1])
				step := int64(1)
				if stop < start {
					step = -1
				}
				if len(a) == 3 {
					step, _ = asInt64(a[2])
				}
				if step == 0 || (stop > start && step < 0) || (stop < start && step > 0) {
					return nil, fmt.Errorf("sequence: the step %d does not go from %d to %d", step, start, stop)
				}
				if (stop-start)/step > 1<<24 {
					return nil, fmt.Errorf("sequence: too many elements")
				}
				et := x.call.typ.(*actions.ArrayType).ElementType
				out := []any{}
				for v := start; step > 0 && v <= stop || step < 0 && v >= stop; v += step {
					out = append(out, makeIntegral(v, et))
					if v > 0 && step > 0 && v+step < v || v < 0 && step < 0 && v+step > v {
						break
					}
				}
				return out, nil
			}},
		&function{names: []string{"map_keys"}, minArgs: 1, maxArgs: 1, generated: true,
			bind: func(b *binder, c *Call) ([]Expr, actions.DataType, error) {
				args, err := b.coerceArgs(c, kMap)
				if err != nil {
					return nil, nil, err
				}
				return args, &actions.ArrayType{ElementType: args[0].Type().(*actions.MapType).KeyType}, nil
			},
			eval: func(x *callCtx, a []any) (any, error) { return slices.Clone(a[0].(*MapValue).Keys), nil }},
		&function{names: []string{"map_values"}, minArgs: 1, maxArgs: 1, generated: true,
			bind: func(b *binder, c *Call) ([]Expr, actions.DataType, error) {
				args, err := b.coerceArgs(c, kMap)
				if err != nil {
					return nil, nil, err
				}
				return args, &actions.ArrayType{ElementType: args[0].Type().(*actions.MapType).ValueType, ContainsNull: true}, nil
			},
			eval: func(x *callCtx, a []any) (any, error) { return slices.Clone(a[0].(*MapValue).Values), nil }},
		&function{names: []string{"map_entries"}, minArgs: 1, maxArgs: 1, generated: true,
			bind: func(b *binder, c *Call) ([]Expr, actions.DataType, error) {
				args, err := b.coerceArgs(c, kMap)
				if err != nil {
					return nil, nil, err
				}
				mt := args[0].Type().(*actions.MapType)
				return args, &actions.ArrayType{ElementType: &actions.StructType{Fields: []*actions.StructField{
					{Name: "key", Type: mt.KeyType}, {Name: "value", Type: mt.ValueType, Nullable: true}}}}, nil
			},
			eval: func(x *callCtx, a []any) (any, error) {
				m := a[0].(*MapValue)
				out := make([]any, len(m.Keys))
				for i := range m.Keys {
					out[i] = StructValue{m.Keys[i], m.Values[i]}
				}
				return out, nil
			}},
		&function{names: []string{"map_from_arrays"}, minArgs: 2, maxArgs: 2, generated: true,
			bind: func(b *binder, c *Call) ([]Expr, actions.DataType, error) {
				args, err := b.coerceArgs(c, kArray)
				if err != nil {
					return nil, nil, err
				}
				kt := args[0].Type().(*actions.ArrayType).ElementType
				vt := args[1].Type().(*actions.ArrayType).ElementType
				return args, &actions.MapType{KeyType: kt, ValueType: vt, ValueContainsNull: true}, nil
			},
			eval: func(x *callCtx, a []any) (any, error) {
				ks, vs := a[0].([]any), a[1].([]any)
				if len(ks) != len(vs) {
					return nil, fmt.Errorf("map_from_arrays: %d keys and %d values", len(ks), len(vs))
				}
				m := &MapValue{Keys: []any{}, Values: []any{}}
				for i := range ks {
					if err := mapPut(m, ks[i], vs[i]); err != nil {
						return nil, err
					}
				}
				return m, nil
			}},
		&function{names: []string{"map_from_entries"}, minArgs: 1, maxArgs: 1, generated: true,
			bind: func(b *binder, c *Call) ([]Expr, actions.DataType, error) {
				at, ok := c.Args[0].Type().(*actions.ArrayType)
				var st *actions.StructType
				if ok {
					st, ok = at.ElementType.(*actions.StructType)
				}
				if !ok || len(st.Fields) != 2 {
					return nil, nil, typeErr(c, "map_from_entries needs an array of two-field structs")
				}
				return c.Args, &actions.MapType{KeyType: st.Fields[0].Type, ValueType: st.Fields[1].Type, ValueContainsNull: true}, nil
			},
			eval: func(x *callCtx, a []any) (any, error) {
				m := &MapValue{Keys: []any{}, Values: []any{}}
				for _, e := range a[0].([]any) {
					if e == nil {
						return nil, nil
					}
					s := e.(StructValue)
					if err := mapPut(m, s[0], s[1]); err != nil {
						return nil, err
					}
				}
				return m, nil
			}},
		&function{names: []string{"map_concat"}, minArgs: 0, maxArgs: -1, generated: true,
			bind: func(b *binder, c *Call) ([]Expr, actions.DataType, error) {
				args, err := b.coerceArgs(c, kMap)
				if err != nil {
					return nil, nil, err
				}
				return b.toCommon(c, args, 0)
			},
			eval: func(x *callCtx, a []any) (any, error) {
				m := &MapValue{Keys: []any{}, Values: []any{}}
				for _, v := range a {
					mv := v.(*MapValue)
					for i := range mv.Keys {
						if err := mapPut(m, mv.Keys[i], mv.Values[i]); err != nil {
							return nil, err
						}
					}
				}
				return m, nil
			}},
		&function{names: []string{"map_contains_key"}, minArgs: 2, maxArgs: 2,
			bind: func(b *binder, c *Call) ([]Expr, actions.DataType, error) {
				args, err := b.coerceArgs(c, kMap, kAny)
				if err != nil {
					return nil, nil, err
				}
				if args[1], err = b.convertCommon(c, args[1], args[0].Type().(*actions.MapType).KeyType); err != nil {
					return nil, nil, err
				}
				return args, actions.TypeBoolean, nil
			},
			eval: func(x *callCtx, a []any) (any, error) {
				return containsValue(a[0].(*MapValue).Keys, a[1]), nil
			}},
	)
}

func mapPut(m *MapValue, k, v any) error {
	if k == nil {
		return fmt.Errorf("a map key cannot be NULL")
	}
	if containsValue(m.Keys, k) {
		return fmt.Errorf("duplicate map key %s", formatNested(k, nil))
	}
	m.Keys = append(m.Keys, k)
	m.Values = append(m.Values, v)
	return nil
}

func containsValue(l []any, v any) bool {
	for _, e := range l {
		if e == nil && v == nil || e != nil && v != nil && equalValues(e, v) {
			return true
		}
	}
	return false
}

func distinct(l []any) []any {
	out := []any{}
	for _, e := range l {
		if !containsValue(out, e) {
			out = append(out, e)
		}
	}
	return out
}

func elementAtType(b *binder, c *Call) ([]Expr, actions.DataType, error) {
	switch t := c.Args[0].Type().(type) {
	case *actions.ArrayType:
		args, err := b.coerceArgs(c, kArray, kInt)
		return args, t.ElementType, err
	case *actions.MapType:
		k, err := b.convertCommon(c, c.Args[1], t.KeyType)
		return []Expr{c.Args[0], k}, t.ValueType, err
	}
	return nil, nil, typeErr(c, "%s needs an array or a map, not %s", c.Name, typeOrNull(c.Args[0].Type()))
}

func elementAt(x, k any, try bool) (any, error) {
	if m, ok := x.(*MapValue); ok {
		return mapLookup(m, k), nil
	}
	l := x.([]any)
	i := int(k.(int32))
	switch {
	case i == 0:
		if try {
			return nil, nil
		}
		return nil, fmt.Errorf("element_at: positions count from 1 (or from -1 at the end), not 0")
	case i > len(l) || -i > len(l):
		if try {
			return nil, nil
		}
		return nil, fmt.Errorf("element_at: position %d is out of bounds: the array has %d elements (use try_element_at to get NULL instead)", i, len(l))
	case i < 0:
		return l[len(l)+i], nil
	}
	return l[i-1], nil
}

func arrayAndElement(ret actions.DataType) func(*binder, *Call) ([]Expr, actions.DataType, error) {
	return func(b *binder, c *Call) ([]Expr, actions.DataType, error) {
		args, err := b.coerceArgs(c, kArray, kAny)
		if err != nil {
			return nil, nil, err
		}
		at := args[0].Type().(*actions.ArrayType)
		et, ok := commonType([]actions.DataType{at.ElementType, args[1].Type()})
		if !ok {
			return nil, nil, typeErr(c, "%s: %s does not go with elements of type %s", c.Name, typeOrNull(args[1].Type()), at.ElementType)
		}
		if !sameType(et, at.ElementType) {
			if args[0], err = b.castTo(c, args[0], &actions.ArrayType{ElementType: et, ContainsNull: true}); err != nil {
				return nil, nil, err
			}
		}
		if args[1], err = b.convertCommon(c, args[1], et); err != nil {
			return nil, nil, err
		}
		if ret == nil {
			return args, args[0].Type(), nil
		}
		return args, ret, nil
	}
}

func arrayElementType(b *binder, c *Call) ([]Expr, actions.DataType, error) {
	args, err := b.coerceArgs(c, kArray)
	if err != nil {
		return nil, nil, err
	}
	return args, args[0].Type().(*actions.ArrayType).ElementType, nil
}

func sameArray(b *binder, c *Call) ([]Expr, actions.DataType, error) {
	args, err := b.coerceArgs(c, kArray)
	if err != nil {
		return nil, nil, err
	}
	return args, args[0].Type(), nil
}

func twoArrays(ret actions.DataType) func(*binder, *Call) ([]Expr, actions.DataType, error) {
	return func(b *binder, c *Call) ([]Expr, actions.DataType, error) {
		args, err := b.coerceArgs(c, kArray)
		if err != nil {
			return nil, nil, err
		}
		args, t, err := b.toCommon(c, args, 0)
		if err != nil {
			return nil, nil, err
		}
		if ret == nil {
			return args, t, nil
		}
		return args, ret, nil
	}
}

func arrayExtremum(l []any, sign int) (any, error) {
	var best any
	for _, e := range l {
		if e == nil {
			continue
		}
		if best == nil {
			best = e
			continue
		}
		c, err := compareAny(e, best)
		if err != nil {
			return nil, err
		}
		if c*sign > 0 {
			best = e
		}
	}
	return best, nil
}

// sortElements sorts ascending or descending; nullsFirst puts NULLs
// first (sort_array ascending) or last.
func sortElements(l []any, asc, nullsFirst bool) (any, error) {
	out := slices.Clone(l)
	var err error
	slices.SortStableFunc(out, func(a, b any) int {
		switch {
		case a == nil && b == nil:
			return 0
		case a == nil:
			if nullsFirst {
				return -1
			}
			return 1
		case b == nil:
			if nullsFirst {
				return 1
			}
			return -1
		}
		c, e := compareAny(a, b)
		if e != nil {
			err = e
		}
		if !asc {
			return -c
		}
		return c
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
