package deltasql

import (
	"reflect"
	"unsafe"

	"github.com/lakelog/lakelog/expr"
)

// inTimeZone gives every expression of a statement's tree the session
// time zone (spark.sql.session.timeZone), so that its casts, functions
// and TIMESTAMP literals compute in it as Spark's do. It walks the tree's
// fields by reflection: every Expr found, at any depth, is rewritten in
// place.
func inTimeZone(n node, tz string) error {
	var firstErr error
	exprType := reflect.TypeOf(Expr{})
	var walk func(v reflect.Value)
	walk = func(v reflect.Value) {
		switch v.Kind() {
		case reflect.Pointer, reflect.Interface:
			if !v.IsNil() {
				walk(v.Elem())
			}
		case reflect.Struct:
			if v.Type() == exprType {
				if !v.CanAddr() {
					return // a copy: nothing to rewrite in place
				}
				// The field may be unexported: reach it through its address.
				e := (*Expr)(unsafe.Pointer(v.UnsafeAddr()))
				if e.Expr == nil {
					return
				}
				z, err := expr.WithTimeZone(e.Expr, tz)
				if err != nil {
					if firstErr == nil {
						firstErr = err
					}
					return
				}
				e.Expr = z
				return
			}
			for i := 0; i < v.NumField(); i++ {
				if f := v.Field(i); f.CanAddr() {
					walk(f)
				}
			}
		case reflect.Slice, reflect.Array:
			for i := 0; i < v.Len(); i++ {
				walk(v.Index(i))
			}
		case reflect.Map:
			if !v.CanSet() {
				v = reflect.NewAt(v.Type(), unsafe.Pointer(v.UnsafeAddr())).Elem()
			}
			for _, k := range v.MapKeys() {
				e := reflect.New(v.Type().Elem()).Elem()
				e.Set(v.MapIndex(k))
				walk(e)
				v.SetMapIndex(k, e)
			}
		}
	}
	walk(reflect.ValueOf(n))
	return firstErr
}
