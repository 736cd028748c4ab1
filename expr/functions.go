package expr

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/lakelog/lakelog/actions"
)

// function is one of Spark's built-in functions: how Bind types a call
// and how a row's value is computed. One definition serves EvalRow and
// the Arrow evaluator, so both give the same values.
type function struct {
	names            []string // the first is the canonical name
	minArgs, maxArgs int      // maxArgs < 0: any number
	// nondeterministic functions (uuid, rand) give a new value per row;
	// session ones (current_timestamp) one value per statement. Neither
	// is allowed in a generated column or a CHECK constraint.
	nondeterministic bool
	session          bool
	// generated: Delta accepts the function in generated columns and
	// CHECK constraints (SupportedGenerationExpressions).
	generated bool
	// bind checks and converts the arguments (already bound) and gives
	// the result type.
	bind func(b *binder, c *Call) ([]Expr, actions.DataType, error)
	// eval computes the value from the arguments' values. Unless
	// nullSafe, a NULL argument makes the result NULL without eval.
	eval     func(x *callCtx, args []any) (any, error)
	nullSafe bool
	// lazy functions evaluate their arguments themselves (conditionals):
	// evalLazy gets a function that evaluates argument i on demand.
	lazy func(x *callCtx, arg func(i int) (any, error)) (any, error)
}

// callCtx is what a function's eval sees besides its arguments.
type callCtx struct {
	call *Call
	loc  *time.Location
}

func (x *callCtx) argType(i int) actions.DataType { return x.call.Args[i].Type() }

var registry = map[string]*function{}

func register(fs ...*function) {
	for _, f := range fs {
		for _, n := range f.names {
			if _, dup := registry[n]; dup {
				panic("expr: function registered twice: " + n)
			}
			registry[n] = f
		}
	}
}

// Functions lists the names of the built-in functions Parse and Bind
// know, sorted. Each computes what Spark's function of that name does
// under Spark's defaults (ANSI mode: a value that does not fit is an
// error, not NULL), in the session time zone (see WithTimeZone).
func Functions() []string {
	out := make([]string, 0, len(registry))
	for n := range registry {
		if !strings.HasPrefix(n, "_") {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

// ErrNotAllowed is the error of CheckGenerationExpression and
// CheckConstraintExpression for an expression Delta refuses there.
var ErrNotAllowed = errors.New("expr: not allowed in this position")

// CheckGenerationExpression reports whether e may be a generated
// column's expression or a CHECK constraint, as Delta decides: every
// function it calls must be one Delta allows there (deterministic
// built-ins: no current_timestamp, rand or uuid; no aggregates). The
// error wraps ErrNotAllowed and names the function.
func CheckGenerationExpression(e Expr) error {
	var err error
	Walk(e, func(n Expr) bool {
		c, ok := n.(*Call)
		if !ok {
			return err == nil
		}
		f := registry[c.Name]
		switch {
		case f == nil:
			err = fmt.Errorf("%w: unknown function %s", ErrNotAllowed, c.Name)
		case f.nondeterministic || f.session:
			err = fmt.Errorf("%w: %s() gives a different value each time it runs; generated columns and CHECK constraints must be deterministic", ErrNotAllowed, c.Name)
		case !f.generated:
			err = fmt.Errorf("%w: Delta does not allow %s() in generated columns or CHECK constraints", ErrNotAllowed, c.Name)
		}
		return err == nil
	})
	return err
}

// IsDeterministic reports whether e gives the same value every time it
// runs on the same row: no uuid(), rand(), current_timestamp() and the
// like.
func IsDeterministic(e Expr) bool {
	det := true
	Walk(e, func(n Expr) bool {
		if c, ok := n.(*Call); ok {
			if f := registry[c.Name]; f != nil && (f.nondeterministic || f.session) {
				det = false
			}
		}
		return det
	})
	return det
}

// missingFunctions are Spark functions users reach for that lakelog does
// not have, with what to do instead.
var missingFunctions = map[string]string{
	"json_tuple":     "get_json_object(text, '$.field') reads one field of a JSON text, once per field",
	"schema_of_json": "name the schema yourself",
}

// bindCall binds a call: its arguments, then the function's own checks.
func (b *binder) call(n *Call) (Expr, error) {
	f := registry[n.Name]
	if f == nil {
		if why, ok := missingFunctions[n.Name]; ok {
			return nil, &TypeError{Expr: n.String(), Msg: fmt.Sprintf("Spark's %s is not supported yet: %s", n.Name, why)}
		}
		return nil, &TypeError{Expr: n.String(), Msg: fmt.Sprintf("unknown function %s%s", n.Name, suggestFunction(n.Name))}
	}
	if len(n.Args) < f.minArgs || (f.maxArgs >= 0 && len(n.Args) > f.maxArgs) {
		return nil, typeErr(n, "%s takes %s, not %d", n.Name, argCount(f), len(n.Args))
	}
	out := &Call{Name: n.Name, Args: make([]Expr, len(n.Args)), zone: b.zone}
	for i, a := range n.Args {
		x, err := b.bind(a)
		if err != nil {
			return nil, err
		}
		out.Args[i] = x
	}
	args, t, err := f.bind(b, out)
	if err != nil {
		return nil, err
	}
	out.Args, out.typ = args, t
	if f.session {
		// Spark computes current_timestamp() and the like once per
		// query: the value at binding.
		v, err := evalCallRow(out, noColumns)
		if err != nil {
			return nil, err
		}
		return &Literal{Value: v, DataType: t}, nil
	}
	return foldCall(out, f)
}

// foldCall replaces a deterministic call of constants by its value when
// that value is a scalar (so that pruning can use it).
func foldCall(c *Call, f *function) (Expr, error) {
	if f.nondeterministic || c.typ == nil || isNested(c.typ) || isInterval(c.typ) {
		return c, nil
	}
	for _, a := range c.Args {
		if _, ok := a.(*Literal); !ok {
			return c, nil
		}
	}
	v, err := evalCallRow(c, noColumns)
	if err != nil {
		return c, nil
	}
	return &Literal{Value: v, DataType: c.typ}, nil
}

func argCount(f *function) string {
	switch {
	case f.maxArgs < 0:
		return fmt.Sprintf("at least %d argument%s", f.minArgs, plural(f.minArgs))
	case f.minArgs == f.maxArgs:
		return fmt.Sprintf("%d argument%s", f.minArgs, plural(f.minArgs))
	}
	return fmt.Sprintf("%d to %d arguments", f.minArgs, f.maxArgs)
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// suggestFunction names a known function close to an unknown name.
func suggestFunction(name string) string {
	best, bestD := "", 3
	for n := range registry {
		if strings.HasPrefix(n, "_") {
			continue
		}
		if d := levenshtein(n, name); d < bestD || (d == bestD && best != "" && n < best) {
			best, bestD = n, d
		}
	}
	if best == "" {
		return ""
	}
	return " (did you mean " + best + "?)"
}

// evalCallRow evaluates a bound call on one row.
func evalCallRow(c *Call, row func(string) (any, bool)) (any, error) {
	f := registry[c.Name]
	if f == nil {
		return nil, fmt.Errorf("expr: unknown function %s", c.Name)
	}
	if c.typ == nil && !isBoundCall(c) {
		b, err := bindDynamic(c, row)
		if err != nil {
			return nil, err
		}
		bc, ok := b.(*Call)
		if !ok {
			return evalRow(b, row)
		}
		c = bc
	}
	x := &callCtx{call: c, loc: zoneLoc(c.zone)}
	if f.lazy != nil {
		v, err := f.lazy(x, func(i int) (any, error) { return evalRow(c.Args[i], row) })
		if err != nil {
			return nil, wrapCallErr(c, err)
		}
		return v, nil
	}
	args := make([]any, len(c.Args))
	for i, a := range c.Args {
		v, err := evalRow(a, row)
		if err != nil {
			return nil, err
		}
		if v == nil && !f.nullSafe {
			return nil, nil
		}
		args[i] = v
	}
	v, err := f.eval(x, args)
	if err != nil {
		return nil, wrapCallErr(c, err)
	}
	return v, nil
}

func wrapCallErr(c *Call, err error) error {
	if strings.HasPrefix(err.Error(), "expr: ") {
		return err
	}
	return fmt.Errorf("expr: %s: %w", c, err)
}

func isBoundCall(c *Call) bool { return c.typ != nil }

// bindDynamic binds an unbound call for EvalRow from the values of its
// arguments' columns.
func bindDynamic(e Expr, row func(string) (any, bool)) (Expr, error) {
	schema := &actions.StructType{}
	var err error
	Walk(e, func(n Expr) bool {
		col, ok := n.(*Column)
		if !ok || err != nil {
			return err == nil
		}
		v, ok := row(col.Name())
		if !ok {
			err = fmt.Errorf("expr: no value for column %s", col)
			return false
		}
		t, ok := typeOfValue(normalizeGoValue(v))
		if !ok || t == nil {
			t = actions.TypeString
			if v != nil {
				err = fmt.Errorf("expr: column %s: unsupported value of Go type %T", col, v)
				return false
			}
		}
		addPathField(schema, col.Path, t)
		return true
	})
	if err != nil {
		return nil, err
	}
	return Bind(e, schema)
}

func addPathField(s *actions.StructType, path []string, t actions.DataType) {
	for i, name := range path {
		f := s.Field(name)
		if i == len(path)-1 {
			if f == nil {
				s.Fields = append(s.Fields, &actions.StructField{Name: name, Type: t, Nullable: true})
			}
			return
		}
		if f == nil {
			f = &actions.StructField{Name: name, Type: &actions.StructType{}, Nullable: true}
			s.Fields = append(s.Fields, f)
		}
		st, ok := f.Type.(*actions.StructType)
		if !ok {
			return
		}
		s = st
	}
}

// ---- binding helpers for function signatures ----

// argKind is what a function parameter takes.
type argKind int

const (
	kAny       argKind = iota
	kString            // string; atomic values are cast to string
	kInt               // integer
	kLong              // long
	kDouble            // double
	kNumeric           // any numeric type, kept
	kIntegral          // any integral type, kept
	kBool              // boolean
	kDate              // date; timestamps and strings are cast
	kTimestamp         // timestamp; dates and strings are cast
	kBinary            // binary; strings are cast
	kStrOrBin          // string or binary, kept
	kArray             // an array, kept
	kMap               // a map, kept
	kStringLit         // a constant string
)

// coerceArg converts argument i of c to kind k, or fails naming the
// function and the argument.
func (b *binder) coerceArg(c *Call, i int, k argKind) (Expr, error) {
	a := c.Args[i]
	t := a.Type()
	bad := func(want string) (Expr, error) {
		return nil, typeErr(c, "argument %d of %s must be %s, not %s", i+1, c.Name, want, typeOrNull(t))
	}
	to := func(target actions.DataType) (Expr, error) {
		if t == nil {
			return typedNull(a, target), nil
		}
		if sameType(t, target) {
			return a, nil
		}
		if !canCast(t, target) {
			return bad(aType(target))
		}
		return b.castTo(c, a, target)
	}
	switch k {
	case kAny:
		return a, nil
	case kString:
		if t != nil && !isAtomic(t) {
			return bad("a string")
		}
		return to(actions.TypeString)
	case kInt:
		if t != nil && !isNumeric(t) && t != actions.TypeString {
			return bad("an integer")
		}
		if isIntegral(t) && intRank(t) < intRank(actions.TypeInteger) {
			return to(actions.TypeInteger)
		}
		return to(actions.TypeInteger)
	case kLong:
		if t != nil && !isNumeric(t) && t != actions.TypeString {
			return bad("a long")
		}
		return to(actions.TypeLong)
	case kDouble:
		if t != nil && !isNumeric(t) && t != actions.TypeString {
			return bad("a number")
		}
		return to(actions.TypeDouble)
	case kNumeric:
		switch {
		case t == nil:
			return typedNull(a, actions.TypeDouble), nil
		case isNumeric(t):
			return a, nil
		case t == actions.TypeString:
			return to(actions.TypeDouble)
		}
		return bad("a number")
	case kIntegral:
		switch {
		case t == nil:
			return typedNull(a, actions.TypeLong), nil
		case isIntegral(t):
			return a, nil
		case t == actions.TypeString:
			return to(actions.TypeLong)
		}
		return bad("an integer")
	case kBool:
		if t != nil && t != actions.TypeBoolean && t != actions.TypeString {
			return bad("a boolean")
		}
		return to(actions.TypeBoolean)
	case kDate:
		if t != nil && t != actions.TypeDate && !isTimestamp(t) && t != actions.TypeString {
			return bad("a date")
		}
		return to(actions.TypeDate)
	case kTimestamp:
		if t != nil && t != actions.TypeDate && !isTimestamp(t) && t != actions.TypeString {
			return bad("a timestamp")
		}
		if t == actions.TypeTimestampNTZ {
			return a, nil
		}
		return to(actions.TypeTimestamp)
	case kBinary:
		if t != nil && t != actions.TypeBinary && t != actions.TypeString {
			return bad("binary")
		}
		return to(actions.TypeBinary)
	case kStrOrBin:
		switch {
		case t == nil:
			return typedNull(a, actions.TypeString), nil
		case t == actions.TypeString || t == actions.TypeBinary:
			return a, nil
		case isAtomic(t):
			return to(actions.TypeString)
		}
		return bad("a string or binary")
	case kArray:
		if t == nil {
			return typedNull(a, &actions.ArrayType{ElementType: actions.TypeString, ContainsNull: true}), nil
		}
		if _, ok := t.(*actions.ArrayType); !ok {
			return bad("an array")
		}
		return a, nil
	case kMap:
		if t == nil {
			return typedNull(a, &actions.MapType{KeyType: actions.TypeString, ValueType: actions.TypeString, ValueContainsNull: true}), nil
		}
		if _, ok := t.(*actions.MapType); !ok {
			return bad("a map")
		}
		return a, nil
	case kStringLit:
		lit, ok := a.(*Literal)
		if !ok {
			return nil, typeErr(c, "argument %d of %s must be a constant string", i+1, c.Name)
		}
		if lit.Value == nil {
			return typedNull(a, actions.TypeString), nil
		}
		if _, ok := lit.Value.(string); !ok {
			return bad("a constant string")
		}
		return a, nil
	}
	return a, nil
}

func typeOrNull(t actions.DataType) string {
	if t == nil {
		return "NULL"
	}
	return t.String()
}

// castTo converts e to t: a literal now, anything else with a Cast in
// the binder's time zone.
func (b *binder) castTo(parent, e Expr, t actions.DataType) (Expr, error) {
	if lit, ok := e.(*Literal); ok {
		v, err := castValueIn(lit.Value, t, zoneLoc(b.zone))
		if err != nil {
			return nil, typeErr(parent, "%v", err)
		}
		return &Literal{Value: v, DataType: t, zone: b.zone}, nil
	}
	return &Cast{X: e, To: t, zone: b.zone}, nil
}

// sig binds a call whose parameters take the given kinds (the last kind
// repeats for further arguments) and whose result type is ret, or the
// type of argument retArg when ret is nil.
func sig(ret actions.DataType, kinds ...argKind) func(*binder, *Call) ([]Expr, actions.DataType, error) {
	return func(b *binder, c *Call) ([]Expr, actions.DataType, error) {
		args, err := b.coerceArgs(c, kinds...)
		if err != nil {
			return nil, nil, err
		}
		return args, ret, nil
	}
}

func (b *binder) coerceArgs(c *Call, kinds ...argKind) ([]Expr, error) {
	args := make([]Expr, len(c.Args))
	for i := range c.Args {
		k := kAny
		if len(kinds) > 0 {
			k = kinds[min(i, len(kinds)-1)]
		}
		a, err := b.coerceArg(c, i, k)
		if err != nil {
			return nil, err
		}
		args[i] = a
	}
	return args, nil
}

// commonType is the type values of ts all convert to, as Spark finds one
// for coalesce, CASE, greatest and the like: untyped NULLs take the
// others' type, numbers widen, strings meeting other atomic types stay
// strings only when every operand is one.
func commonType(ts []actions.DataType) (actions.DataType, bool) {
	var out actions.DataType
	for _, t := range ts {
		switch {
		case t == nil:
			continue
		case out == nil:
			out = t
			continue
		case sameType(out, t):
			continue
		}
		if isNested(out) || isNested(t) {
			w, ok := commonNested(out, t)
			if !ok {
				return nil, false
			}
			out = w
			continue
		}
		if w, ok := widerType(out, t); ok {
			out = w
			continue
		}
		if out == actions.TypeString && isAtomic(t) || t == actions.TypeString && isAtomic(out) {
			out = actions.TypeString
			continue
		}
		return nil, false
	}
	return out, true
}

func commonNested(a, b actions.DataType) (actions.DataType, bool) {
	switch x := a.(type) {
	case *actions.ArrayType:
		y, ok := b.(*actions.ArrayType)
		if !ok {
			return nil, false
		}
		e, ok := commonType([]actions.DataType{x.ElementType, y.ElementType})
		if !ok {
			return nil, false
		}
		return &actions.ArrayType{ElementType: e, ContainsNull: x.ContainsNull || y.ContainsNull}, true
	case *actions.MapType:
		y, ok := b.(*actions.MapType)
		if !ok {
			return nil, false
		}
		k, ok1 := commonType([]actions.DataType{x.KeyType, y.KeyType})
		v, ok2 := commonType([]actions.DataType{x.ValueType, y.ValueType})
		if !ok1 || !ok2 {
			return nil, false
		}
		return &actions.MapType{KeyType: k, ValueType: v, ValueContainsNull: x.ValueContainsNull || y.ValueContainsNull}, true
	case *actions.StructType:
		y, ok := b.(*actions.StructType)
		if !ok || len(x.Fields) != len(y.Fields) {
			return nil, false
		}
		out := &actions.StructType{}
		for i, f := range x.Fields {
			if !strings.EqualFold(f.Name, y.Fields[i].Name) {
				return nil, false
			}
			t, ok := commonType([]actions.DataType{f.Type, y.Fields[i].Type})
			if !ok {
				return nil, false
			}
			out.Fields = append(out.Fields, &actions.StructField{Name: f.Name, Type: t, Nullable: f.Nullable || y.Fields[i].Nullable})
		}
		return out, true
	}
	return nil, false
}

// toCommon converts every argument from index from on to one common
// type, for coalesce, greatest and the like.
func (b *binder) toCommon(c *Call, args []Expr, from int) ([]Expr, actions.DataType, error) {
	ts := make([]actions.DataType, 0, len(args))
	for _, a := range args[from:] {
		ts = append(ts, a.Type())
	}
	t, ok := commonType(ts)
	if !ok {
		names := make([]string, len(ts))
		for i, x := range ts {
			names[i] = typeOrNull(x)
		}
		return nil, nil, typeErr(c, "the arguments of %s have no common type (%s)", c.Name, strings.Join(names, ", "))
	}
	out := slices.Clone(args)
	if t == nil {
		return out, nil, nil
	}
	for i := from; i < len(out); i++ {
		x, err := b.convertCommon(c, out[i], t)
		if err != nil {
			return nil, nil, err
		}
		out[i] = x
	}
	return out, t, nil
}

func (b *binder) convertCommon(parent, e Expr, t actions.DataType) (Expr, error) {
	et := e.Type()
	switch {
	case et == nil:
		return typedNull(e, t), nil
	case sameType(et, t):
		return e, nil
	}
	return b.castTo(parent, e, t)
}

func isNested(t actions.DataType) bool {
	switch t.(type) {
	case *actions.ArrayType, *actions.MapType, *actions.StructType:
		return true
	}
	return false
}

// isAtomic: a type that casts to and from string.
func isAtomic(t actions.DataType) bool {
	return isOrdered(t) || isInterval(t)
}

func levenshtein(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}
