package expr

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/lakelog/lakelog/actions"
)

// JSON functions: to_json and get_json_object, as Spark computes them
// (its JacksonGenerator and GetJsonObject): to_json leaves out a
// struct's null fields (spark.sql.jsonGenerator.ignoreNullFields),
// writes maps' null values as null, doubles as Java prints them (NaN and
// the infinities as strings), decimals as Java's BigDecimal prints them,
// dates as yyyy-MM-dd and timestamps as yyyy-MM-dd'T'HH:mm:ss.SSSXXX in
// the session time zone; get_json_object reads the first JSON value of
// its text, follows a path of $, .name, ['name'] and [index] steps, and
// gives a string found as its text and anything else as compact JSON;
// malformed JSON, a path that matches nothing or a null field is NULL.
// Wildcard paths ([*], .*) are refused, as is json_tuple. from_json
// reads a JSON text into the type of its schema (a constant DDL string)
// as Spark's PERMISSIVE mode does: malformed text is a struct of nulls,
// a value that does not convert is null and the others are kept, field
// names match exactly.

func init() {
	register(
		&function{names: []string{"to_json"}, minArgs: 1, maxArgs: 1,
			bind: func(b *binder, c *Call) ([]Expr, actions.DataType, error) {
				switch c.Args[0].Type().(type) {
				case *actions.StructType, *actions.MapType, *actions.ArrayType:
					return c.Args, actions.TypeString, nil
				}
				return nil, nil, typeErr(c, "to_json takes a struct, a map or an array, not %s", typeOrNull(c.Args[0].Type()))
			},
			eval: func(x *callCtx, a []any) (any, error) {
				return string(appendJSONValue(nil, a[0], x.argType(0), x.loc)), nil
			}},
		&function{names: []string{"from_json"}, minArgs: 2, maxArgs: 2,
			bind: func(b *binder, c *Call) ([]Expr, actions.DataType, error) {
				text, err := b.coerceArg(c, 0, kString)
				if err != nil {
					return nil, nil, err
				}
				schema, ok := stringLiteral(c.Args[1])
				if !ok {
					return nil, nil, typeErr(c, "argument 2 of from_json must be the schema as a constant string ('a INT, b STRING')")
				}
				t, err := parseJSONSchema(schema)
				if err != nil {
					return nil, nil, typeErr(c, "from_json schema %q: %v", schema, err)
				}
				return []Expr{text, c.Args[1]}, nullable(t), nil
			},
			eval: func(x *callCtx, a []any) (any, error) {
				return fromJSON(a[0].(string), x.call.Type(), x.loc), nil
			}},
		&function{names: []string{"get_json_object"}, minArgs: 2, maxArgs: 2,
			bind: func(b *binder, c *Call) ([]Expr, actions.DataType, error) {
				args, t, err := sig(actions.TypeString, kString, kString)(b, c)
				if err != nil {
					return nil, nil, err
				}
				if p, ok := stringLiteral(args[1]); ok {
					if _, err := parseJSONPath(p); err == errJSONWildcard {
						return nil, nil, typeErr(c, "get_json_object: %v", err)
					}
				}
				return args, t, nil
			},
			eval: func(x *callCtx, a []any) (any, error) {
				path, err := parseJSONPath(a[1].(string))
				if err != nil {
					if err == errJSONWildcard {
						return nil, fmt.Errorf("get_json_object: %w", err)
					}
					return nil, nil // an invalid path is NULL, as in Spark
				}
				return getJSONObject(a[0].(string), path), nil
			}},
	)
}

// ---- to_json ----

// appendJSONValue appends v, of type t, as Spark's to_json writes it.
func appendJSONValue(b []byte, v any, t actions.DataType, loc *time.Location) []byte {
	if v == nil {
		return append(b, "null"...)
	}
	switch tt := t.(type) {
	case *actions.StructType:
		sv := v.(StructValue)
		b = append(b, '{')
		first := true
		for i, f := range tt.Fields {
			if i >= len(sv) || sv[i] == nil {
				continue // Spark leaves out null fields
			}
			if !first {
				b = append(b, ',')
			}
			first = false
			b = appendJSONString(b, f.Name)
			b = append(b, ':')
			b = appendJSONValue(b, sv[i], f.Type, loc)
		}
		return append(b, '}')
	case *actions.MapType:
		m := v.(*MapValue)
		b = append(b, '{')
		for i, k := range m.Keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(b, jsonKeyText(k, tt.KeyType, loc))
			b = append(b, ':')
			b = appendJSONValue(b, m.Values[i], tt.ValueType, loc)
		}
		return append(b, '}')
	case *actions.ArrayType:
		b = append(b, '[')
		for i, e := range v.([]any) {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONValue(b, e, tt.ElementType, loc)
		}
		return append(b, ']')
	}
	switch x := v.(type) {
	case bool:
		return strconv.AppendBool(b, x)
	case int8, int16, int32, int64:
		return fmt.Append(b, x)
	case float32:
		return appendJSONFloat(b, float64(x), 32)
	case float64:
		return appendJSONFloat(b, x, 64)
	case actions.Decimal:
		return append(b, javaBigDecimalString(x)...)
	case string:
		return appendJSONString(b, x)
	case []byte:
		return appendJSONString(b, base64.StdEncoding.EncodeToString(x))
	case actions.Date:
		return appendJSONString(b, x.String())
	case actions.Timestamp:
		return appendJSONString(b, jsonTimestamp(int64(x), loc, true))
	case actions.TimestampNTZ:
		return appendJSONString(b, jsonTimestamp(int64(x), time.UTC, false))
	}
	return appendJSONString(b, castToString(v))
}

// jsonKeyText is a map key as to_json names it: its text.
func jsonKeyText(k any, t actions.DataType, loc *time.Location) string {
	switch x := k.(type) {
	case string:
		return x
	case actions.Timestamp:
		return jsonTimestamp(int64(x), loc, true)
	}
	if _, nested := t.(actions.PrimitiveType); !nested {
		if _, dec := t.(*actions.DecimalType); !dec {
			return string(appendJSONValue(nil, k, t, loc))
		}
	}
	return castToString(k)
}

// appendJSONFloat writes a float as Jackson does: Java's text, with NaN
// and the infinities as strings.
func appendJSONFloat(b []byte, f float64, bits int) []byte {
	s := javaFloatString(f, bits)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return appendJSONString(b, s)
	}
	return append(b, s...)
}

// javaBigDecimalString is Java's BigDecimal.toString: plain when the
// scale is not negative and the adjusted exponent is -6 or more, else
// scientific (1.5E-7, 0E-10).
func javaBigDecimalString(d actions.Decimal) string {
	u := d.Unscaled
	if u == nil {
		u = new(big.Int)
	}
	neg := u.Sign() < 0
	digits := new(big.Int).Abs(u).String()
	adjusted := -d.Scale + len(digits) - 1
	if d.Scale >= 0 && adjusted >= -6 {
		return d.String()
	}
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	b.WriteString(digits[:1])
	if len(digits) > 1 {
		b.WriteByte('.')
		b.WriteString(digits[1:])
	}
	b.WriteByte('E')
	if adjusted >= 0 {
		b.WriteByte('+')
	}
	b.WriteString(strconv.Itoa(adjusted))
	return b.String()
}

// jsonTimestamp is a timestamp as Spark's JSON writes it:
// yyyy-MM-dd'T'HH:mm:ss.SSS and, zoned, the offset in loc (XXX: Z at
// zero).
func jsonTimestamp(micros int64, loc *time.Location, zoned bool) string {
	if loc == nil {
		loc = time.UTC
	}
	// The day and the time of day first, then the offset: the extreme
	// timestamps stay in range.
	days := floorDiv(micros, microsPerDay)
	tod := micros - days*microsPerDay
	var off int64 // seconds east of UTC
	if zoned {
		_, o := time.UnixMicro(micros).In(loc).Zone()
		off = int64(o)
	}
	tod += off * microsPerSecond
	days += floorDiv(tod, microsPerDay)
	tod -= floorDiv(tod, microsPerDay) * microsPerDay
	y, m, d := civilFromDays(days)
	year := fmt.Sprintf("%04d", y)
	switch {
	case y > 9999:
		year = "+" + year // as Java's yyyy prints a year past 9999
	case y < 0:
		year = fmt.Sprintf("-%04d", -y)
	}
	s := fmt.Sprintf("%s-%02d-%02dT%02d:%02d:%02d.%03d", year, m, d, tod/microsPerHour, tod/microsPerMinute%60, tod/microsPerSecond%60, tod%microsPerSecond/1000)
	if !zoned {
		return s
	}
	if off == 0 {
		return s + "Z"
	}
	sign := "+"
	if off < 0 {
		sign, off = "-", -off
	}
	s += fmt.Sprintf("%s%02d:%02d", sign, off/3600, off/60%60)
	if off%60 != 0 {
		s += fmt.Sprintf(":%02d", off%60)
	}
	return s
}

// appendJSONString writes s as a JSON string as Jackson escapes it: the
// quote and the backslash, \b \f \n \r \t, other control characters as
// \u00XX; everything else as it is.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c >= utf8.RuneSelf {
			_, n := utf8.DecodeRuneInString(s[i:])
			b = append(b, s[i:i+n]...)
			i += n
			continue
		}
		switch c {
		case '"':
			b = append(b, '\\', '"')
		case '\\':
			b = append(b, '\\', '\\')
		case '\b':
			b = append(b, '\\', 'b')
		case '\f':
			b = append(b, '\\', 'f')
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		default:
			if c < 0x20 {
				b = append(b, fmt.Sprintf(`\u%04X`, c)...)
			} else {
				b = append(b, c)
			}
		}
		i++
	}
	return append(b, '"')
}

// ---- get_json_object ----

var errJSONWildcard = fmt.Errorf("wildcard paths ([*], .*) are not supported")

// jsonStep is one step of a JSON path: a field name, or an array index
// (index >= 0).
type jsonStep struct {
	name  string
	index int
}

// parseJSONPath reads $ followed by .name, ['name'] and [n] steps, as
// Spark's JsonPathParser does (a name runs to the next . or [).
func parseJSONPath(p string) ([]jsonStep, error) {
	if !strings.HasPrefix(p, "$") {
		return nil, fmt.Errorf("the path %q does not start with $", p)
	}
	var steps []jsonStep
	rest := p[1:]
	for rest != "" {
		switch {
		case strings.HasPrefix(rest, ".*") || strings.HasPrefix(rest, "[*]"):
			return nil, errJSONWildcard
		case rest[0] == '.':
			rest = rest[1:]
			end := strings.IndexAny(rest, ".[")
			if end < 0 {
				end = len(rest)
			}
			if end == 0 {
				return nil, fmt.Errorf("the path %q has an empty name", p)
			}
			steps = append(steps, jsonStep{name: rest[:end], index: -1})
			rest = rest[end:]
		case strings.HasPrefix(rest, "['"):
			end := strings.Index(rest, "']")
			if end < 0 {
				return nil, fmt.Errorf("the path %q has an unclosed ['", p)
			}
			steps = append(steps, jsonStep{name: rest[2:end], index: -1})
			rest = rest[end+2:]
		case rest[0] == '[':
			end := strings.IndexByte(rest, ']')
			if end < 0 {
				return nil, fmt.Errorf("the path %q has an unclosed [", p)
			}
			n, err := strconv.Atoi(rest[1:end])
			if err != nil || n < 0 {
				return nil, fmt.Errorf("the path %q has a bad index %q", p, rest[1:end])
			}
			steps = append(steps, jsonStep{index: n})
			rest = rest[end+1:]
		default:
			return nil, fmt.Errorf("the path %q is not $ followed by .name, ['name'] or [index] steps", p)
		}
	}
	return steps, nil
}

// jsonNode is a parsed JSON value keeping what Spark's streaming parser
// sees: object fields in order (repeats too) and numbers' text.
type jsonNode struct {
	kind   byte // '{', '[', '"', 'n' (number), 't' (true/false), '0' (null)
	text   string
	keys   []string
	values []*jsonNode
}

// getJSONObject is get_json_object(text, path): nil (NULL) for malformed
// JSON or no match.
func getJSONObject(text string, path []jsonStep) any {
	d := json.NewDecoder(strings.NewReader(text))
	d.UseNumber()
	root, err := readJSONNode(d)
	if err != nil {
		return nil
	}
	n := root.find(path)
	if n == nil {
		return nil
	}
	if n.kind == '"' {
		return n.text
	}
	return string(n.appendCompact(nil))
}

// find follows path from n, as Spark's streaming evaluation does: of an
// object's fields with the step's name (a key may repeat) the first from
// which the rest of the path finds something; a field holding null
// matches nothing (Spark skips it); an array element holding null is
// "null" text at the end of the path. nil when nothing matches.
func (n *jsonNode) find(path []jsonStep) *jsonNode {
	if len(path) == 0 {
		return n
	}
	s := path[0]
	switch {
	case s.index < 0 && n.kind == '{':
		for i, k := range n.keys {
			if k == s.name && n.values[i].kind != '0' {
				if r := n.values[i].find(path[1:]); r != nil {
					return r
				}
			}
		}
	case s.index >= 0 && n.kind == '[':
		if s.index < len(n.values) {
			return n.values[s.index].find(path[1:])
		}
	}
	return nil
}

// appendCompact writes n as Jackson's copyCurrentStructure does: compact,
// integers as integers, other numbers as Java prints the double.
func (n *jsonNode) appendCompact(b []byte) []byte {
	switch n.kind {
	case '{':
		b = append(b, '{')
		for i, k := range n.keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(b, k)
			b = append(b, ':')
			b = n.values[i].appendCompact(b)
		}
		return append(b, '}')
	case '[':
		b = append(b, '[')
		for i, v := range n.values {
			if i > 0 {
				b = append(b, ',')
			}
			b = v.appendCompact(b)
		}
		return append(b, ']')
	case '"':
		return appendJSONString(b, n.text)
	case 'n':
		if !strings.ContainsAny(n.text, ".eE") {
			if v, ok := new(big.Int).SetString(n.text, 10); ok {
				return append(b, v.String()...)
			}
		}
		f, err := strconv.ParseFloat(n.text, 64)
		if err != nil && !math.IsInf(f, 0) {
			return append(b, n.text...)
		}
		return append(b, javaFloatString(f, 64)...)
	}
	return append(b, n.text...)
}

// readJSONNode reads the next value of d.
func readJSONNode(d *json.Decoder) (*jsonNode, error) {
	tok, err := d.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			n := &jsonNode{kind: '{'}
			for d.More() {
				kt, err := d.Token()
				if err != nil {
					return nil, err
				}
				k, ok := kt.(string)
				if !ok {
					return nil, fmt.Errorf("a key that is not a string")
				}
				v, err := readJSONNode(d)
				if err != nil {
					return nil, err
				}
				n.keys, n.values = append(n.keys, k), append(n.values, v)
			}
			if _, err := d.Token(); err != nil { // '}'
				return nil, err
			}
			return n, nil
		case '[':
			n := &jsonNode{kind: '['}
			for d.More() {
				v, err := readJSONNode(d)
				if err != nil {
					return nil, err
				}
				n.values = append(n.values, v)
			}
			if _, err := d.Token(); err != nil { // ']'
				return nil, err
			}
			return n, nil
		}
		return nil, fmt.Errorf("unexpected %v", t)
	case string:
		return &jsonNode{kind: '"', text: t}, nil
	case json.Number:
		return &jsonNode{kind: 'n', text: string(t)}, nil
	case bool:
		return &jsonNode{kind: 't', text: strconv.FormatBool(t)}, nil
	case nil:
		return &jsonNode{kind: '0', text: "null"}, nil
	}
	return nil, io.ErrUnexpectedEOF
}

// ---- from_json ----

// parseJSONSchema reads from_json's schema: a DDL column list
// ('a INT, b STRING') or one type (STRUCT<...>, ARRAY<...>, MAP<...>).
func parseJSONSchema(text string) (actions.DataType, error) {
	lower := strings.ToLower(strings.TrimSpace(text))
	if strings.HasPrefix(lower, "struct<") || strings.HasPrefix(lower, "array<") || strings.HasPrefix(lower, "map<") {
		st, err := actions.ParseDDL("x " + text)
		if err != nil {
			return nil, err
		}
		if len(st.Fields) != 1 {
			return nil, fmt.Errorf("not one type: %s", text)
		}
		return st.Fields[0].Type, nil
	}
	st, err := actions.ParseDDL(text)
	if err != nil {
		return nil, err
	}
	return st, nil
}

// nullable is t with every nested field, element and value nullable, as
// from_json's result is.
func nullable(t actions.DataType) actions.DataType {
	switch x := t.(type) {
	case *actions.StructType:
		out := &actions.StructType{}
		for _, f := range x.Fields {
			g := *f
			g.Nullable, g.Type = true, nullable(f.Type)
			out.Fields = append(out.Fields, &g)
		}
		return out
	case *actions.ArrayType:
		return &actions.ArrayType{ElementType: nullable(x.ElementType), ContainsNull: true}
	case *actions.MapType:
		return &actions.MapType{KeyType: x.KeyType, ValueType: nullable(x.ValueType), ValueContainsNull: true}
	}
	return t
}

// fromJSON is from_json(text, schema) in Spark's PERMISSIVE mode with
// partial results: blank text is NULL; malformed text gives a struct of
// nulls (NULL for an array or map schema); a struct field whose value
// does not convert to its type is null, the others kept; an array or
// map element that does not convert makes the whole array or map so.
func fromJSON(text string, t actions.DataType, loc *time.Location) any {
	if strings.TrimSpace(text) == "" {
		return nil // blank text is NULL, as in Spark
	}
	d := json.NewDecoder(strings.NewReader(text))
	d.UseNumber()
	root, err := readJSONNode(d)
	if err != nil {
		if st, ok := t.(*actions.StructType); ok {
			return make(StructValue, len(st.Fields))
		}
		return nil
	}
	if at, ok := t.(*actions.ArrayType); ok && root.kind == '{' {
		if _, elemStruct := at.ElementType.(*actions.StructType); elemStruct {
			root = &jsonNode{kind: '[', values: []*jsonNode{root}} // an object read as an array of one
		}
	}
	if st, ok := t.(*actions.StructType); ok && root.kind != '{' {
		return make(StructValue, len(st.Fields))
	}
	v, _ := jsonToValue(root, t, loc)
	return v
}

// jsonToValue converts a JSON value to t; ok is false when it does not
// convert (the value is then nil).
func jsonToValue(n *jsonNode, t actions.DataType, loc *time.Location) (any, bool) {
	if n.kind == '0' {
		return nil, true
	}
	switch tt := t.(type) {
	case *actions.StructType:
		if n.kind != '{' {
			return nil, false
		}
		out := make(StructValue, len(tt.Fields))
		for i, k := range n.keys {
			for j, f := range tt.Fields {
				if f.Name == k { // names match exactly, as Spark's JSON reader
					out[j], _ = jsonToValue(n.values[i], f.Type, loc)
				}
			}
		}
		return out, true
	case *actions.ArrayType:
		if n.kind != '[' {
			return nil, false
		}
		// An element that does not convert fails the whole array (the
		// nearest struct field is null), as in Spark.
		out := make([]any, len(n.values))
		for i, e := range n.values {
			var ok bool
			if out[i], ok = jsonToValue(e, tt.ElementType, loc); !ok {
				return nil, false
			}
		}
		return out, true
	case *actions.MapType:
		if n.kind != '{' {
			return nil, false
		}
		m := &MapValue{Keys: []any{}, Values: []any{}}
		for i, k := range n.keys {
			key, err := castValue(k, tt.KeyType)
			if err != nil {
				return nil, false
			}
			val, ok := jsonToValue(n.values[i], tt.ValueType, loc)
			if !ok {
				return nil, false // as an array's element
			}
			// A repeated key is kept twice, as Spark's JSON reader keeps it.
			m.Keys, m.Values = append(m.Keys, key), append(m.Values, val)
		}
		return m, true
	case *actions.DecimalType:
		if n.kind != 'n' && n.kind != '"' {
			return nil, false
		}
		v, err := castValue(n.text, tt)
		if err != nil {
			return nil, false
		}
		return v, true
	}
	switch t {
	case actions.TypeString:
		if n.kind == '"' {
			return n.text, true
		}
		return string(n.appendCompact(nil)), true
	case actions.TypeBoolean:
		if n.kind != 't' {
			return nil, false
		}
		return n.text == "true", true
	case actions.TypeByte, actions.TypeShort, actions.TypeInteger, actions.TypeLong:
		if n.kind != 'n' || strings.ContainsAny(n.text, ".eE") {
			return nil, false
		}
		v, err := castValue(n.text, t)
		if err != nil {
			return nil, false
		}
		return v, true
	case actions.TypeFloat, actions.TypeDouble:
		text := n.text
		if n.kind == '"' {
			switch text {
			case "NaN", "Infinity", "+Infinity", "-Infinity", "+INF", "-INF", "INF":
			default:
				return nil, false
			}
		} else if n.kind != 'n' {
			return nil, false
		}
		v, err := castValue(text, t)
		if err != nil {
			return nil, false
		}
		return v, true
	case actions.TypeDate:
		if n.kind != '"' {
			return nil, false
		}
		v, err := castValue(n.text, t)
		if err != nil {
			return nil, false
		}
		return v, true
	case actions.TypeTimestamp:
		if n.kind != '"' {
			return nil, false
		}
		us, err := parseTimestampIn(n.text, loc)
		if err != nil {
			return nil, false
		}
		return actions.Timestamp(us), true
	case actions.TypeTimestampNTZ:
		if n.kind != '"' {
			return nil, false
		}
		v, err := castValue(n.text, t)
		if err != nil {
			return nil, false
		}
		return v, true
	case actions.TypeBinary:
		if n.kind != '"' {
			return nil, false
		}
		return []byte(n.text), true
	}
	return nil, false
}
