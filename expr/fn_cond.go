package expr

import (
	"fmt"
	"math"

	"github.com/lakelog/lakelog/actions"
)

// Conditional and null functions: coalesce, if, ifnull, nvl, nvl2,
// nullif, isnull, isnotnull, isnan, nanvl, greatest, least, typeof,
// assert_true.

func init() {
	register(
		&function{names: []string{"coalesce"}, minArgs: 1, maxArgs: -1, generated: true,
			bind: func(b *binder, c *Call) ([]Expr, actions.DataType, error) { return b.toCommon(c, c.Args, 0) },
			lazy: func(x *callCtx, arg func(int) (any, error)) (any, error) {
				for i := range x.call.Args {
					v, err := arg(i)
					if err != nil || v != nil {
						return v, err
					}
				}
				return nil, nil
			}},
		&function{names: []string{"ifnull", "nvl"}, minArgs: 2, maxArgs: 2, generated: true,
			bind: func(b *binder, c *Call) ([]Expr, actions.DataType, error) { return b.toCommon(c, c.Args, 0) },
			lazy: func(x *callCtx, arg func(int) (any, error)) (any, error) {
				v, err := arg(0)
				if err != nil || v != nil {
					return v, err
				}
				return arg(1)
			}},
		&function{names: []string{"nvl2"}, minArgs: 3, maxArgs: 3, generated: true,
			bind: func(b *binder, c *Call) ([]Expr, actions.DataType, error) { return b.toCommon(c, c.Args, 1) },
			lazy: func(x *callCtx, arg func(int) (any, error)) (any, error) {
				v, err := arg(0)
				if err != nil {
					return nil, err
				}
				if v != nil {
					return arg(1)
				}
				return arg(2)
			}},
		&function{names: []string{"if", "iff"}, minArgs: 3, maxArgs: 3, generated: true,
			bind: func(b *binder, c *Call) ([]Expr, actions.DataType, error) {
				cond, err := booleanOperand(c, c.Name, c.Args[0])
				if err != nil {
					return nil, nil, err
				}
				args, t, err := b.toCommon(c, c.Args, 1)
				if err != nil {
					return nil, nil, err
				}
				args[0] = cond
				return args, t, nil
			},
			lazy: func(x *callCtx, arg func(int) (any, error)) (any, error) {
				v, err := arg(0)
				if err != nil {
					return nil, err
				}
				if b, ok := v.(bool); ok && b {
					return arg(1)
				}
				return arg(2)
			}},
		&function{names: []string{"nullif"}, minArgs: 2, maxArgs: 2, generated: true, nullSafe: true,
			bind: func(b *binder, c *Call) ([]Expr, actions.DataType, error) {
				args, t, err := b.toCommon(c, c.Args, 0)
				return args, t, err
			},
			eval: func(x *callCtx, a []any) (any, error) {
				if a[0] == nil || a[1] == nil {
					return a[0], nil
				}
				if equalValues(a[0], a[1]) {
					return nil, nil
				}
				return a[0], nil
			}},
		&function{names: []string{"isnull"}, minArgs: 1, maxArgs: 1, generated: true, nullSafe: true,
			bind: sig(actions.TypeBoolean, kAny),
			eval: func(x *callCtx, a []any) (any, error) { return a[0] == nil, nil }},
		&function{names: []string{"isnotnull"}, minArgs: 1, maxArgs: 1, generated: true, nullSafe: true,
			bind: sig(actions.TypeBoolean, kAny),
			eval: func(x *callCtx, a []any) (any, error) { return a[0] != nil, nil }},
		&function{names: []string{"isnan"}, minArgs: 1, maxArgs: 1, generated: true, nullSafe: true,
			bind: sig(actions.TypeBoolean, kDouble),
			eval: func(x *callCtx, a []any) (any, error) {
				f, ok := a[0].(float64)
				return ok && math.IsNaN(f), nil
			}},
		&function{names: []string{"nanvl"}, minArgs: 2, maxArgs: 2, generated: true, nullSafe: true,
			bind: func(b *binder, c *Call) ([]Expr, actions.DataType, error) {
				args, err := b.coerceArgs(c, kDouble)
				return args, actions.TypeDouble, err
			},
			eval: func(x *callCtx, a []any) (any, error) {
				if f, ok := a[0].(float64); ok && math.IsNaN(f) {
					return a[1], nil
				}
				return a[0], nil
			}},
		&function{names: []string{"greatest"}, minArgs: 2, maxArgs: -1, generated: true, nullSafe: true,
			bind: orderedCommon, eval: extremum(1)},
		&function{names: []string{"least"}, minArgs: 2, maxArgs: -1, generated: true, nullSafe: true,
			bind: orderedCommon, eval: extremum(-1)},
		&function{names: []string{"typeof"}, minArgs: 1, maxArgs: 1, generated: true, nullSafe: true,
			bind: func(b *binder, c *Call) ([]Expr, actions.DataType, error) {
				return c.Args, actions.TypeString, nil
			},
			eval: func(x *callCtx, a []any) (any, error) { return sparkTypeName(x.argType(0)), nil }},
		&function{names: []string{"assert_true"}, minArgs: 1, maxArgs: 2, generated: true, nullSafe: true,
			bind: func(b *binder, c *Call) ([]Expr, actions.DataType, error) {
				args, err := b.coerceArgs(c, kBool, kString)
				if err != nil {
					return nil, nil, err
				}
				return args, nil, nil
			},
			eval: func(x *callCtx, a []any) (any, error) {
				if v, ok := a[0].(bool); ok && v {
					return nil, nil
				}
				if len(a) > 1 && a[1] != nil {
					return nil, fmt.Errorf("%s", a[1])
				}
				return nil, fmt.Errorf("'%s' is not true", x.call.Args[0])
			}},
	)
}

func orderedCommon(b *binder, c *Call) ([]Expr, actions.DataType, error) {
	args, t, err := b.toCommon(c, c.Args, 0)
	if err != nil {
		return nil, nil, err
	}
	if t != nil && !isOrdered(t) {
		return nil, nil, typeErr(c, "%s needs values that can be ordered, not %s", c.Name, t)
	}
	return args, t, nil
}

// extremum is greatest (sign 1) or least (-1): NULLs are skipped.
func extremum(sign int) func(*callCtx, []any) (any, error) {
	return func(x *callCtx, a []any) (any, error) {
		var best any
		for _, v := range a {
			if v == nil {
				continue
			}
			if best == nil {
				best = v
				continue
			}
			c, err := compareScalar(v, best)
			if err != nil {
				return nil, err
			}
			if c*sign > 0 {
				best = v
			}
		}
		return best, nil
	}
}

// sparkTypeName is a type as Spark's typeof prints it.
func sparkTypeName(t actions.DataType) string {
	switch t {
	case nil:
		return "void"
	case actions.TypeLong:
		return "bigint"
	case actions.TypeInteger:
		return "int"
	case actions.TypeShort:
		return "smallint"
	case actions.TypeByte:
		return "tinyint"
	}
	switch x := t.(type) {
	case *actions.ArrayType:
		return "array<" + sparkTypeName(x.ElementType) + ">"
	case *actions.MapType:
		return "map<" + sparkTypeName(x.KeyType) + "," + sparkTypeName(x.ValueType) + ">"
	case *actions.StructType:
		s := "struct<"
		for i, f := range x.Fields {
			if i > 0 {
				s += ","
			}
			s += f.Name + ":" + sparkTypeName(f.Type)
		}
		return s + ">"
	}
	return t.String()
}
