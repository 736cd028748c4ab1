package expr

import (
	"fmt"
	"math/big"
	"strings"
	"time"

	"github.com/lakelog/lakelog/actions"
)

// Binding of CAST, CASE, subscripts, field access and interval
// arithmetic.

func (b *binder) cast(n *Cast) (Expr, error) {
	x, err := b.bind(n.X)
	if err != nil {
		return nil, err
	}
	out := &Cast{X: x, To: n.To, Try: n.Try, zone: b.zone}
	if n.zone != "" {
		out.zone = n.zone
	}
	if !canCastType(x.Type(), n.To) {
		return nil, typeErr(out, "cannot cast %s to %s", x.Type(), sqlTypeName(n.To))
	}
	if x.Type() != nil && sameType(x.Type(), n.To) {
		return x, nil
	}
	if lit, ok := x.(*Literal); ok && !isNested(n.To) {
		v, err := castTyped(lit.Value, lit.DataType, n.To, zoneLoc(out.zone))
		if err != nil {
			if n.Try {
				return &Literal{DataType: n.To}, nil
			}
			return nil, typeErr(out, "%v", err)
		}
		return &Literal{Value: v, DataType: n.To}, nil
	}
	return out, nil
}

// needsRowCast reports whether a cast goes through castTyped a row at a
// time rather than the cast kernels: TRY_CAST, casts that depend on the
// time zone outside UTC, and nested or interval types.
func needsRowCast(c *Cast) bool {
	from := c.X.Type()
	if c.Try || isNested(from) || isNested(c.To) || isInterval(from) || isInterval(c.To) || !canCast(from, c.To) {
		return true
	}
	if c.zone == "" || zoneLoc(c.zone) == time.UTC {
		return false
	}
	zoned := func(t actions.DataType) bool { return t == actions.TypeTimestamp }
	return zoned(from) && (c.To == actions.TypeString || c.To == actions.TypeDate || c.To == actions.TypeTimestampNTZ) ||
		zoned(c.To) && (from == actions.TypeString || from == actions.TypeDate || from == actions.TypeTimestampNTZ)
}

// canCastType is canCast extended to nested and interval types.
func canCastType(from, to actions.DataType) bool {
	if from == nil || sameType(from, to) {
		return true
	}
	switch t := to.(type) {
	case *actions.ArrayType:
		f, ok := from.(*actions.ArrayType)
		return ok && canCastType(f.ElementType, t.ElementType)
	case *actions.MapType:
		f, ok := from.(*actions.MapType)
		return ok && canCastType(f.KeyType, t.KeyType) && canCastType(f.ValueType, t.ValueType)
	case *actions.StructType:
		f, ok := from.(*actions.StructType)
		if !ok || len(f.Fields) != len(t.Fields) {
			return false
		}
		for i := range f.Fields {
			if !canCastType(f.Fields[i].Type, t.Fields[i].Type) {
				return false
			}
		}
		return true
	}
	if to == actions.TypeString && (isNested(from) || isInterval(from)) {
		return true
	}
	if isInterval(from) || isInterval(to) {
		return isInterval(from) && isInterval(to) && isYearMonth(from) == isYearMonth(to) ||
			from == actions.TypeString && isInterval(to)
	}
	if isTimestamp(from) && isNumeric(to) || isNumeric(from) && to == actions.TypeTimestamp {
		return true
	}
	return canCast(from, to)
}

// castValueIn converts v to type to in time zone loc.
func castValueIn(v any, to actions.DataType, loc *time.Location) (any, error) {
	from, _ := typeOfValue(normalizeGoValue(v))
	return castTyped(v, from, to, loc)
}

// castTyped converts v, a value of type from, to type to in time zone
// loc, with Spark's ANSI cast semantics.
func castTyped(v any, from, to actions.DataType, loc *time.Location) (any, error) {
	v = normalizeGoValue(v)
	if v == nil {
		return nil, nil
	}
	if from == nil {
		from, _ = typeOfValue(v)
	}
	if sameType(from, to) {
		return v, nil
	}
	switch t := to.(type) {
	case *actions.ArrayType:
		l, ok := v.([]any)
		ft, ok2 := from.(*actions.ArrayType)
		if !ok || !ok2 {
			return nil, fmt.Errorf("cannot cast %s to %s", from, to)
		}
		out := make([]any, len(l))
		for i, e := range l {
			c, err := castTyped(e, ft.ElementType, t.ElementType, loc)
			if err != nil {
				return nil, err
			}
			out[i] = c
		}
		return out, nil
	case *actions.MapType:
		m, ok := v.(*MapValue)
		ft, ok2 := from.(*actions.MapType)
		if !ok || !ok2 {
			return nil, fmt.Errorf("cannot cast %s to %s", from, to)
		}
		out := &MapValue{Keys: make([]any, len(m.Keys)), Values: make([]any, len(m.Values))}
		for i := range m.Keys {
			k, err := castTyped(m.Keys[i], ft.KeyType, t.KeyType, loc)
			if err != nil {
				return nil, err
			}
			x, err := castTyped(m.Values[i], ft.ValueType, t.ValueType, loc)
			if err != nil {
				return nil, err
			}
			out.Keys[i], out.Values[i] = k, x
		}
		return out, nil
	case *actions.StructType:
		s, ok := v.(StructValue)
		ft, ok2 := from.(*actions.StructType)
		if !ok || !ok2 || len(s) != len(t.Fields) {
			return nil, fmt.Errorf("cannot cast %s to %s", from, to)
		}
		out := make(StructValue, len(s))
		for i, e := range s {
			c, err := castTyped(e, ft.Fields[i].Type, t.Fields[i].Type, loc)
			if err != nil {
				return nil, err
			}
			out[i] = c
		}
		return out, nil
	}
	switch {
	case to == actions.TypeString:
		switch x := v.(type) {
		case actions.Timestamp:
			return sqlTimestamp(actions.TimestampNTZ(toWall(int64(x), loc)).String()), nil
		case []any, *MapValue, StructValue, actions.Interval:
			return formatNestedIn(v, from, loc), nil
		}
	case isInterval(to):
		if iv, ok := v.(actions.Interval); ok {
			return iv, nil
		}
		if s, ok := v.(string); ok {
			return parseIntervalString(s, to)
		}
	case isTimestamp(from) && isNumeric(to):
		micros := timestampMicros(v)
		secs := floorDiv(micros, microsPerSecond)
		if isFloating(to) || isDecimal(to) {
			f := float64(micros) / microsPerSecond
			if isDecimal(to) {
				return castToDecimal(actions.Decimal{Unscaled: bigInt(micros), Scale: 6}, to.(*actions.DecimalType))
			}
			return castValue(f, to)
		}
		return castValue(secs, to)
	case isNumeric(from) && to == actions.TypeTimestamp:
		f, err := castToFloat(v)
		if err != nil {
			return nil, err
		}
		r, ok := toRat(v)
		if !ok {
			return nil, fmt.Errorf("%v out of range for timestamp: %w", f, errOverflow)
		}
		u, _ := ratToUnscaled(r, 6)
		if !u.IsInt64() {
			return nil, fmt.Errorf("%v out of range for timestamp: %w", f, errOverflow)
		}
		return actions.Timestamp(u.Int64()), nil
	case to == actions.TypeDate:
		switch x := v.(type) {
		case actions.Timestamp:
			day, _ := wallDay(int64(x), loc)
			return actions.Date(day), nil
		}
	case to == actions.TypeTimestamp:
		switch x := v.(type) {
		case actions.Date:
			us, ok := dayStart(int64(x), loc)
			if !ok {
				return nil, errTimestampRange()
			}
			return actions.Timestamp(us), nil
		case actions.TimestampNTZ:
			us, ok := fromLocalChecked(int64(x), loc)
			if !ok {
				return nil, errTimestampRange()
			}
			return actions.Timestamp(us), nil
		case string:
			ts, err := parseTimestampIn(x, loc)
			if err != nil {
				return nil, err
			}
			return actions.Timestamp(ts), nil
		}
	case to == actions.TypeTimestampNTZ:
		if x, ok := v.(actions.Timestamp); ok {
			return actions.TimestampNTZ(toWall(int64(x), loc)), nil
		}
	}
	return castValue(v, to)
}

func timestampMicros(v any) int64 {
	switch x := v.(type) {
	case actions.Timestamp:
		return int64(x)
	case actions.TimestampNTZ:
		return int64(x)
	}
	return 0
}

func formatNestedIn(v any, t actions.DataType, loc *time.Location) string {
	if loc == time.UTC {
		return formatNested(v, t)
	}
	// Timestamps inside print in the zone: convert them first.
	var conv func(v any, t actions.DataType) any
	conv = func(v any, t actions.DataType) any {
		switch x := v.(type) {
		case actions.Timestamp:
			return actions.TimestampNTZ(toWall(int64(x), loc))
		case []any:
			at, _ := t.(*actions.ArrayType)
			out := make([]any, len(x))
			for i, e := range x {
				var et actions.DataType
				if at != nil {
					et = at.ElementType
				}
				out[i] = conv(e, et)
			}
			return out
		}
		return v
	}
	return formatNested(conv(v, t), t)
}

// parseIntervalString reads a string cast to an interval type: Spark's
// ANSI form for the type's fields, or the multi-unit form.
func parseIntervalString(s string, to actions.DataType) (any, error) {
	start, end, _ := intervalFields(to)
	text := strings.TrimSpace(s)
	upper := strings.ToUpper(text)
	if strings.HasPrefix(upper, "INTERVAL") {
		text = strings.TrimSpace(text[len("INTERVAL"):])
	}
	if lit, err := qualifiedInterval(strings.Trim(text, "'"), start, end); err == nil {
		return lit.Value, nil
	}
	fields := strings.Fields(text)
	if len(fields)%2 == 0 && len(fields) > 0 {
		var terms []intervalTerm
		for i := 0; i < len(fields); i += 2 {
			terms = append(terms, intervalTerm{num: fields[i], unit: fields[i+1]})
		}
		if lit, err := multiUnitInterval(terms); err == nil && isYearMonth(lit.DataType) == isYearMonth(to) {
			return lit.Value, nil
		}
	}
	return nil, fmt.Errorf("%s is not %s", quoteString(s), aType(to))
}

func (b *binder) caseWhen(n *Case) (Expr, error) {
	out := &Case{Whens: make([]When, len(n.Whens))}
	types := make([]actions.DataType, 0, len(n.Whens)+1)
	for i, w := range n.Whens {
		c, err := b.bind(w.Cond)
		if err != nil {
			return nil, err
		}
		if c, err = booleanOperand(n, "WHEN", c); err != nil {
			return nil, err
		}
		t, err := b.bind(w.Then)
		if err != nil {
			return nil, err
		}
		out.Whens[i] = When{Cond: c, Then: t}
		types = append(types, t.Type())
	}
	if n.Else != nil {
		e, err := b.bind(n.Else)
		if err != nil {
			return nil, err
		}
		out.Else = e
		types = append(types, e.Type())
	}
	t, ok := commonType(types)
	if !ok {
		return nil, typeErr(n, "the branches of CASE have no common type")
	}
	out.typ = t
	if t == nil {
		return out, nil
	}
	for i := range out.Whens {
		x, err := b.convertCommon(out, out.Whens[i].Then, t)
		if err != nil {
			return nil, err
		}
		out.Whens[i].Then = x
	}
	if out.Else != nil {
		x, err := b.convertCommon(out, out.Else, t)
		if err != nil {
			return nil, err
		}
		out.Else = x
	}
	return out, nil
}

func (b *binder) subscript(n *Subscript) (Expr, error) {
	x, err := b.bind(n.X)
	if err != nil {
		return nil, err
	}
	i, err := b.bind(n.Index)
	if err != nil {
		return nil, err
	}
	out := &Subscript{X: x, Index: i}
	switch t := x.Type().(type) {
	case *actions.ArrayType:
		c := &Call{Name: "[]", Args: []Expr{x, i}}
		if out.Index, err = b.coerceArg(c, 1, kInt); err != nil {
			return nil, typeErr(out, "an array index must be an integer")
		}
		out.typ = t.ElementType
	case *actions.MapType:
		if out.Index, err = b.convertCommon(out, i, t.KeyType); err != nil {
			return nil, err
		}
		out.typ = t.ValueType
	case nil:
		return nil, typeErr(out, "cannot subscript NULL")
	default:
		return nil, typeErr(out, "%s is %s: only arrays and maps take [ ]", x, t)
	}
	return out, nil
}

func (b *binder) fieldOf(n *FieldOf) (Expr, error) {
	x, err := b.bind(n.X)
	if err != nil {
		return nil, err
	}
	st, ok := x.Type().(*actions.StructType)
	if !ok {
		return nil, typeErr(n, "%s is %s, not a struct", x, typeOrNull(x.Type()))
	}
	f := st.FieldFold(n.Name)
	if f == nil {
		return nil, typeErr(n, "no field %s (fields: %s)", n.Name, strings.Join(st.Names(), ", "))
	}
	return &FieldOf{X: x, Name: f.Name, typ: f.Type}, nil
}

func isDateTime(t actions.DataType) bool { return t == actions.TypeDate || isTimestamp(t) }

// intervalArith types date/timestamp ± interval, interval ± interval
// and the difference of two dates or timestamps, as Spark does: a date
// plus an interval of whole days is a date, plus any other day-time
// interval a timestamp; the difference of timestamps is an interval of
// days to seconds, of dates an interval of days.
func (b *binder) intervalArith(a *Arith) (Expr, error) {
	lt, rt := a.Left.Type(), a.Right.Type()
	if a.Op != Plus && a.Op != Minus {
		return nil, typeErr(a, "operator %s does not take intervals", a.Op)
	}
	var err error
	switch {
	case isInterval(lt) && isInterval(rt):
		if isYearMonth(lt) != isYearMonth(rt) {
			return nil, typeErr(a, "cannot combine a year-month interval with a day-time interval")
		}
	case isDateTime(lt) && isInterval(rt), a.Op == Plus && isInterval(lt) && isDateTime(rt):
		d, iv := lt, rt
		if isInterval(lt) {
			d, iv = rt, lt
		}
		if d == actions.TypeDate && isDayTime(iv) {
			if s, e, _ := intervalFields(iv); !(s == fieldDay && e == fieldDay) {
				// The date becomes a timestamp (at midnight in the zone).
				if isInterval(lt) {
					a.Right, err = b.castTo(a, a.Right, actions.TypeTimestamp)
				} else {
					a.Left, err = b.castTo(a, a.Left, actions.TypeTimestamp)
				}
				if err != nil {
					return nil, err
				}
			}
		}
	case a.Op == Minus && isDateTime(lt) && isDateTime(rt):
		if lt != rt {
			w, _ := widerType(lt, rt)
			if a.Left, err = b.castTo(a, a.Left, w); err != nil {
				return nil, err
			}
			if a.Right, err = b.castTo(a, a.Right, w); err != nil {
				return nil, err
			}
		}
	default:
		return nil, typeErr(a, "operator %s cannot combine %s and %s", a.Op, lt, rt)
	}
	return foldConstant(a)
}

// intervalResultType is the type of an Arith that intervalArith bound.
func intervalResultType(op ArithOp, lt, rt actions.DataType) (actions.DataType, bool) {
	switch {
	case isInterval(lt) && isInterval(rt):
		ls, le, _ := intervalFields(lt)
		rs, re, _ := intervalFields(rt)
		return intervalType(min(ls, rs), max(le, re)), true
	case isDateTime(lt) && isInterval(rt):
		return lt, true
	case isInterval(lt) && isDateTime(rt):
		return rt, true
	case op == Minus && lt == actions.TypeDate && rt == actions.TypeDate:
		return intervalType(fieldDay, fieldDay), true
	case op == Minus && isTimestamp(lt) && isTimestamp(rt):
		return intervalType(fieldDay, fieldSecond), true
	}
	return nil, false
}

// intervalArith computes a op b for the operand types intervalArith
// bound; loc is the session zone (months are added to the local date).
func intervalArith(op ArithOp, a, b any, lt, rt, res actions.DataType, loc *time.Location) (any, error) {
	if a == nil || b == nil {
		return nil, nil
	}
	if isInterval(lt) && isInterval(rt) {
		x, y := a.(actions.Interval), b.(actions.Interval)
		if op == Minus {
			y = actions.Interval{Months: -y.Months, Micros: -y.Micros}
		}
		m := int64(x.Months) + int64(y.Months)
		us, ok := addInt64(x.Micros, y.Micros)
		if !ok || m > 1<<31-1 || m < -(1<<31) {
			return nil, fmt.Errorf("interval out of range: %w", errOverflow)
		}
		return actions.Interval{Months: int32(m), Micros: us}, nil
	}
	if isInterval(lt) {
		a, b, lt, rt = b, a, rt, lt
	}
	if isDateTime(lt) && isInterval(rt) {
		iv := b.(actions.Interval)
		if op == Minus {
			iv = actions.Interval{Months: -iv.Months, Micros: -iv.Micros}
		}
		switch x := a.(type) {
		case actions.Date:
			if iv.Months != 0 {
				return addMonthsDate(x, int64(iv.Months))
			}
			return addDays(x, iv.Micros/microsPerDay)
		case actions.Timestamp:
			us := int64(x)
			if iv.Months != 0 {
				day, tod := wallDay(us, loc)
				d, err := addMonthsDate(actions.Date(day), int64(iv.Months))
				if err != nil {
					return nil, err
				}
				var ok bool
				us, ok = fromLocalSeconds(int64(d.(actions.Date))*86400+tod/microsPerSecond, loc)
				if ok {
					us, ok = addInt64(us, tod%microsPerSecond)
				}
				if !ok {
					return nil, errTimestampRange()
				}
			}
			r, ok := addInt64(us, iv.Micros)
			if !ok {
				return nil, fmt.Errorf("timestamp out of range: %w", errOverflow)
			}
			return actions.Timestamp(r), nil
		case actions.TimestampNTZ:
			us := int64(x)
			if iv.Months != 0 {
				day := floorDiv(us, microsPerDay)
				d, err := addMonthsDate(actions.Date(day), int64(iv.Months))
				if err != nil {
					return nil, err
				}
				us = int64(d.(actions.Date))*microsPerDay + (us - day*microsPerDay)
			}
			r, ok := addInt64(us, iv.Micros)
			if !ok {
				return nil, fmt.Errorf("timestamp out of range: %w", errOverflow)
			}
			return actions.TimestampNTZ(r), nil
		}
	}
	switch x := a.(type) {
	case actions.Date:
		return actions.Interval{Micros: (int64(x) - int64(b.(actions.Date))) * microsPerDay}, nil
	case actions.Timestamp:
		r, ok := addInt64(int64(x), -int64(b.(actions.Timestamp)))
		if !ok {
			return nil, fmt.Errorf("interval out of range: %w", errOverflow)
		}
		return actions.Interval{Micros: r}, nil
	case actions.TimestampNTZ:
		return actions.Interval{Micros: int64(x) - int64(b.(actions.TimestampNTZ))}, nil
	}
	return nil, fmt.Errorf("cannot compute %T %s %T", a, op, b)
}

// sqlTypeName prints a type as CAST reads it: bigint, decimal(10,2),
// array<string>, struct<`a b`: int>.
func sqlTypeName(t actions.DataType) string {
	switch x := t.(type) {
	case *actions.ArrayType:
		return "array<" + sqlTypeName(x.ElementType) + ">"
	case *actions.MapType:
		return "map<" + sqlTypeName(x.KeyType) + ", " + sqlTypeName(x.ValueType) + ">"
	case *actions.StructType:
		parts := make([]string, len(x.Fields))
		for i, f := range x.Fields {
			parts[i] = quoteIdent(f.Name) + ": " + sqlTypeName(f.Type)
		}
		return "struct<" + strings.Join(parts, ", ") + ">"
	case nil:
		return "null"
	}
	return t.String()
}

// isIntervalArith reports whether a bound Arith is one intervalArith
// typed.
func isIntervalArith(a *Arith) bool {
	lt, rt := a.Left.Type(), a.Right.Type()
	return isInterval(lt) || isInterval(rt) || (a.Op == Minus && isDateTime(lt) && isDateTime(rt))
}

func bigInt(v int64) *big.Int { return big.NewInt(v) }
