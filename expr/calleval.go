package expr

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/lakelog/lakelog/actions"
)

// Evaluation of calls, CASE, subscripts and field access over a record
// batch. Arguments are evaluated as vectors (columns, casts and
// arithmetic by their kernels), then the function's value is computed row
// by row from typed values; conditionals evaluate each branch only over
// the rows that take it, so that a branch's error on a row it does not
// decide is no error (as in Spark).

// rowwise computes fn over the rows of args: a NULL argument gives NULL
// unless nullSafe; rows outside mask are NULL and never computed.
func (ev *evaluator) rowwise(t actions.DataType, args []vec, mask []byte, nullSafe bool, fn func(vals []any) (any, error)) (vec, error) {
	at, err := arrowTypeOf(t)
	if err != nil {
		return vec{}, err
	}
	b := array.NewBuilder(ev.mem, at)
	defer b.Release()
	b.Reserve(ev.n)
	vals := make([]any, len(args))
	for i := 0; i < ev.n; i++ {
		if !active(mask, nil, i) {
			b.AppendNull()
			continue
		}
		null := false
		for j, a := range args {
			if a.arr == nil {
				vals[j] = a.c
			} else {
				vals[j] = valueAt(a.arr, i)
			}
			if vals[j] == nil && !nullSafe {
				null = true
			}
		}
		if null {
			b.AppendNull()
			continue
		}
		v, err := fn(vals)
		if err != nil {
			return vec{}, err
		}
		if err := appendValue(b, v); err != nil {
			return vec{}, err
		}
	}
	return vec{arr: b.NewArray(), t: t}, nil
}

func (ev *evaluator) evalArgs(args []Expr, mask []byte) ([]vec, error) {
	out := make([]vec, 0, len(args))
	for _, a := range args {
		v, err := ev.evalVec(a, mask)
		if err != nil {
			releaseAll(out)
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

func releaseAll(vs []vec) {
	for _, v := range vs {
		v.release()
	}
}

// call evaluates a bound call.
func (ev *evaluator) call(c *Call, mask []byte) (vec, error) {
	f := registry[c.Name]
	if f == nil || c.typ == nil && !isBoundCall(c) {
		return vec{}, fmt.Errorf("expr: call %s is not bound", c)
	}
	x := &callCtx{call: c, loc: zoneLoc(c.zone)}
	if f.lazy != nil {
		return ev.lazyCall(c, x, f, mask)
	}
	args, err := ev.evalArgs(c.Args, mask)
	if err != nil {
		return vec{}, err
	}
	defer releaseAll(args)
	out, err := ev.rowwise(c.typ, args, mask, f.nullSafe, func(vals []any) (any, error) {
		return f.eval(x, vals)
	})
	if err != nil {
		return vec{}, wrapCallErr(c, err)
	}
	return out, nil
}

// lazyCall evaluates a conditional function: each argument over only
// the rows that need it, as the row evaluator's on-demand order decides.
// The rows are grouped by the path they take through the function:
// arguments are computed a row at a time from the vectors of the
// arguments already needed.
func (ev *evaluator) lazyCall(c *Call, x *callCtx, f *function, mask []byte) (vec, error) {
	n := ev.n
	// need[i] is the mask of rows that need argument i; found by
	// evaluating in rounds: round k evaluates each argument over the rows
	// that asked for it and have not got it.
	vals := make([]vec, len(c.Args))
	have := make([][]byte, len(c.Args))
	defer func() {
		for _, v := range vals {
			v.release()
		}
	}()
	at, err := arrowTypeOf(c.typ)
	if err != nil {
		return vec{}, err
	}
	results := make([]any, n)
	done := make([]bool, n)
	for round := 0; round <= len(c.Args); round++ {
		want := make([][]byte, len(c.Args))
		pending := false
		for i := 0; i < n; i++ {
			if done[i] || !active(mask, nil, i) {
				continue
			}
			var missing = -1
			v, err := f.lazy(x, func(j int) (any, error) {
				if have[j] != nil && have[j][i>>3]&(1<<(i&7)) != 0 {
					if vals[j].arr == nil {
						return vals[j].c, nil
					}
					return valueAt(vals[j].arr, i), nil
				}
				missing = j
				return nil, errNeedArg
			})
			if missing >= 0 {
				if want[missing] == nil {
					want[missing] = make([]byte, nbytes(n))
				}
				setBit(want[missing], i)
				pending = true
				continue
			}
			if err != nil {
				return vec{}, wrapCallErr(c, err)
			}
			results[i], done[i] = v, true
		}
		if !pending {
			break
		}
		for j, w := range want {
			if w == nil {
				continue
			}
			// Merge with the rows evaluated before.
			prev := have[j]
			m := w
			if prev != nil {
				m = make([]byte, len(w))
				for k := range m {
					m[k] = w[k] | prev[k]
				}
			}
			v, err := ev.evalVec(c.Args[j], m)
			if err != nil {
				return vec{}, err
			}
			vals[j].release()
			vals[j], have[j] = v, m
		}
	}
	b := array.NewBuilder(ev.mem, at)
	defer b.Release()
	b.Reserve(n)
	for i := 0; i < n; i++ {
		if !done[i] {
			b.AppendNull()
			continue
		}
		if err := appendValue(b, results[i]); err != nil {
			return vec{}, err
		}
	}
	return vec{arr: b.NewArray(), t: c.typ}, nil
}

var errNeedArg = fmt.Errorf("expr: argument needed")

// caseWhen evaluates CASE: each condition over the rows no earlier
// branch took, each value over the rows its branch takes.
func (ev *evaluator) caseWhen(c *Case, mask []byte) (vec, error) {
	n := ev.n
	remaining := make([]byte, nbytes(n))
	if mask == nil {
		fill(remaining, 0xFF)
	} else {
		copy(remaining, mask)
	}
	choice := make([]int, n) // branch per row; len(Whens) is ELSE, -1 none
	for i := range choice {
		choice[i] = -1
	}
	var vals []vec
	defer func() { releaseAll(vals) }()
	for k, w := range c.Whens {
		cb, err := ev.evalPred(w.Cond, remaining)
		if err != nil {
			return vec{}, err
		}
		take := make([]byte, nbytes(n))
		for i := range take {
			t := cb.val[i] & remaining[i]
			if cb.valid != nil {
				t &= cb.valid[i]
			}
			take[i] = t
			remaining[i] &^= t
		}
		v, err := ev.evalVec(w.Then, take)
		if err != nil {
			return vec{}, err
		}
		vals = append(vals, v)
		for i := 0; i < n; i++ {
			if take[i>>3]&(1<<(i&7)) != 0 {
				choice[i] = k
			}
		}
	}
	if c.Else != nil {
		v, err := ev.evalVec(c.Else, remaining)
		if err != nil {
			return vec{}, err
		}
		vals = append(vals, v)
		for i := 0; i < n; i++ {
			if remaining[i>>3]&(1<<(i&7)) != 0 {
				choice[i] = len(c.Whens)
			}
		}
	}
	at, err := arrowTypeOf(c.typ)
	if err != nil {
		return vec{}, err
	}
	b := array.NewBuilder(ev.mem, at)
	defer b.Release()
	b.Reserve(n)
	for i := 0; i < n; i++ {
		k := choice[i]
		if k < 0 {
			b.AppendNull()
			continue
		}
		var v any
		if vals[k].arr == nil {
			v = vals[k].c
		} else {
			v = valueAt(vals[k].arr, i)
		}
		if err := appendValue(b, v); err != nil {
			return vec{}, err
		}
	}
	return vec{arr: b.NewArray(), t: c.typ}, nil
}

// byRow evaluates a subscript, a field access or a cast that the kernels
// do not cover from its operands' vectors, a row at a time.
func (ev *evaluator) byRow(e Expr, mask []byte) (vec, error) {
	switch x := e.(type) {
	case *Subscript:
		args, err := ev.evalArgs([]Expr{x.X, x.Index}, mask)
		if err != nil {
			return vec{}, err
		}
		defer releaseAll(args)
		out, err := ev.rowwise(x.typ, args, mask, false, func(v []any) (any, error) {
			return subscriptValue(x, v[0], v[1])
		})
		if err != nil {
			return vec{}, fmt.Errorf("expr: %s: %w", x, err)
		}
		return out, nil
	case *FieldOf:
		args, err := ev.evalArgs([]Expr{x.X}, mask)
		if err != nil {
			return vec{}, err
		}
		defer releaseAll(args)
		return ev.rowwise(x.typ, args, mask, false, func(v []any) (any, error) {
			return fieldValue(x, v[0])
		})
	case *Cast:
		args, err := ev.evalArgs([]Expr{x.X}, mask)
		if err != nil {
			return vec{}, err
		}
		defer releaseAll(args)
		loc := zoneLoc(x.zone)
		out, err := ev.rowwise(x.To, args, mask, false, func(v []any) (any, error) {
			r, err := castTyped(v[0], x.X.Type(), x.To, loc)
			if err != nil && x.Try {
				return nil, nil
			}
			return r, err
		})
		if err != nil {
			return vec{}, fmt.Errorf("expr: %s: %w", x, err)
		}
		return out, nil
	case *Arith:
		args, err := ev.evalArgs([]Expr{x.Left, x.Right}, mask)
		if err != nil {
			return vec{}, err
		}
		defer releaseAll(args)
		loc := zoneLoc(x.zone)
		out, err := ev.rowwise(x.Type(), args, mask, false, func(v []any) (any, error) {
			return intervalArith(x.Op, v[0], v[1], x.Left.Type(), x.Right.Type(), x.Type(), loc)
		})
		if err != nil {
			return vec{}, fmt.Errorf("expr: %s: %w", x, err)
		}
		return out, nil
	}
	return vec{}, fmt.Errorf("expr: cannot evaluate %T", e)
}

// ---- row evaluation ----

func evalCaseRow(c *Case, row func(string) (any, bool)) (any, error) {
	for _, w := range c.Whens {
		b, err := evalBool(c, w.Cond, row)
		if err != nil {
			return nil, err
		}
		if b != nil && *b {
			return evalRow(w.Then, row)
		}
	}
	if c.Else == nil {
		return nil, nil
	}
	return evalRow(c.Else, row)
}

func evalSubscriptRow(s *Subscript, row func(string) (any, bool)) (any, error) {
	x, err := evalRow(s.X, row)
	if err != nil || x == nil {
		return nil, err
	}
	i, err := evalRow(s.Index, row)
	if err != nil || i == nil {
		return nil, err
	}
	v, err := subscriptValue(s, x, i)
	if err != nil {
		return nil, fmt.Errorf("expr: %s: %w", s, err)
	}
	return v, nil
}

func subscriptValue(s *Subscript, x, i any) (any, error) {
	switch c := x.(type) {
	case []any:
		k, ok := asInt64(i)
		if !ok {
			return nil, fmt.Errorf("an array index must be an integer, not %T", i)
		}
		if k < 0 || k >= int64(len(c)) {
			return nil, fmt.Errorf("index %d is out of bounds: the array has %d elements (use try_element_at or get to get NULL instead)", k, len(c))
		}
		return c[k], nil
	case *MapValue:
		return mapLookup(c, i), nil
	}
	return nil, fmt.Errorf("cannot subscript a %T", x)
}

func mapLookup(m *MapValue, k any) any {
	for j, key := range m.Keys {
		if equalValues(key, k) {
			return m.Values[j]
		}
	}
	return nil
}

func evalFieldRow(f *FieldOf, row func(string) (any, bool)) (any, error) {
	x, err := evalRow(f.X, row)
	if err != nil || x == nil {
		return nil, err
	}
	return fieldValue(f, x)
}

func fieldValue(f *FieldOf, x any) (any, error) {
	s, ok := x.(StructValue)
	if !ok {
		return nil, fmt.Errorf("expr: %s: not a struct", f)
	}
	st, ok := f.X.Type().(*actions.StructType)
	if !ok {
		return nil, fmt.Errorf("expr: %s: not bound", f)
	}
	k := st.IndexFold(f.Name)
	if k < 0 || k >= len(s) {
		return nil, fmt.Errorf("expr: %s: no field %s", f, f.Name)
	}
	return s[k], nil
}
