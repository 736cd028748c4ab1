package expr

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"regexp"
	"strings"
	"sync"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/lakelog/lakelog/actions"
)

// String functions, over characters (Unicode code points) as Spark's
// UTF8String counts them. trim, ltrim and rtrim remove spaces (U+0020)
// only, as Spark does; regular expressions are Java's as far as Go's
// RE2 syntax agrees (no lookaround or backreferences: those are an
// error naming the pattern).

func init() {
	str1 := func(name string, f func(string) string, names ...string) *function {
		return &function{names: append([]string{name}, names...), minArgs: 1, maxArgs: 1, generated: true,
			bind: sig(actions.TypeString, kString),
			eval: func(x *callCtx, a []any) (any, error) { return f(a[0].(string)), nil }}
	}
	register(
		str1("upper", strings.ToUpper, "ucase"),
		str1("lower", strings.ToLower, "lcase"),
		str1("initcap", initcap),
		str1("soundex", soundex),
		&function{names: []string{"trim"}, minArgs: 1, maxArgs: 2, generated: true,
			bind: sig(actions.TypeString, kString),
			eval: trimWith(true, true)},
		&function{names: []string{"btrim"}, minArgs: 1, maxArgs: 2,
			bind: sig(actions.TypeString, kString),
			eval: trimWith(true, true)},
		&function{names: []string{"ltrim"}, minArgs: 1, maxArgs: 2, generated: true,
			bind: sig(actions.TypeString, kString),
			eval: trimWith(true, false)},
		&function{names: []string{"rtrim"}, minArgs: 1, maxArgs: 2, generated: true,
			bind: sig(actions.TypeString, kString),
			eval: trimWith(false, true)},
		&function{names: []string{"length", "char_length", "character_length", "len"}, minArgs: 1, maxArgs: 1, generated: true,
			bind: sig(actions.TypeInteger, kStrOrBin),
			eval: func(x *callCtx, a []any) (any, error) {
				if b, ok := a[0].([]byte); ok {
					return int32(len(b)), nil
				}
				return int32(utf8.RuneCountInString(a[0].(string))), nil
			}},
		&function{names: []string{"bit_length"}, minArgs: 1, maxArgs: 1, generated: true,
			bind: sig(actions.TypeInteger, kStrOrBin),
			eval: func(x *callCtx, a []any) (any, error) { return int32(8 * byteLen(a[0])), nil }},
		&function{names: []string{"octet_length"}, minArgs: 1, maxArgs: 1, generated: true,
			bind: sig(actions.TypeInteger, kStrOrBin),
			eval: func(x *callCtx, a []any) (any, error) { return int32(byteLen(a[0])), nil }},
		&function{names: []string{"substring", "substr"}, minArgs: 2, maxArgs: 3, generated: true,
			bind: func(b *binder, c *Call) ([]Expr, actions.DataType, error) {
				args, err := b.coerceArgs(c, kStrOrBin, kInt, kInt)
				if err != nil {
					return nil, nil, err
				}
				return args, args[0].Type(), nil
			},
			eval: func(x *callCtx, a []any) (any, error) {
				length := int64(math.MaxInt32)
				if len(a) == 3 {
					length = int64(a[2].(int32))
				}
				return substringSQL(a[0], int64(a[1].(int32)), length), nil
			}},
		&function{names: []string{"left"}, minArgs: 2, maxArgs: 2, generated: true,
			bind: func(b *binder, c *Call) ([]Expr, actions.DataType, error) {
				args, err := b.coerceArgs(c, kStrOrBin, kInt)
				if err != nil {
					return nil, nil, err
				}
				return args, args[0].Type(), nil
			},
			eval: func(x *callCtx, a []any) (any, error) { return substringSQL(a[0], 1, int64(a[1].(int32))), nil }},
		&function{names: []string{"right"}, minArgs: 2, maxArgs: 2, generated: true,
			bind: func(b *binder, c *Call) ([]Expr, actions.DataType, error) {
				args, err := b.coerceArgs(c, kStrOrBin, kInt)
				if err != nil {
					return nil, nil, err
				}
				return args, args[0].Type(), nil
			},
			eval: func(x *callCtx, a []any) (any, error) {
				n := int64(a[1].(int32))
				if n <= 0 {
					return substringSQL(a[0], 1, 0), nil
				}
				return substringSQL(a[0], -n, math.MaxInt32), nil
			}},
		&function{names: []string{"concat", "||"}, minArgs: 0, maxArgs: -1, generated: true, bind: concatType,
			eval: func(x *callCtx, a []any) (any, error) {
				switch x.call.typ.(type) {
				case *actions.ArrayType:
					var out []any
					for _, v := range a {
						out = append(out, v.([]any)...)
					}
					if out == nil {
						out = []any{}
					}
					return out, nil
				}
				if x.call.typ == actions.TypeBinary {
					var out []byte
					for _, v := range a {
						out = append(out, v.([]byte)...)
					}
					if out == nil {
						out = []byte{}
					}
					return out, nil
				}
				var b strings.Builder
				for _, v := range a {
					b.WriteString(v.(string))
				}
				return b.String(), nil
			}},
		&function{names: []string{"concat_ws"}, minArgs: 1, maxArgs: -1, generated: true, nullSafe: true,
			bind: func(b *binder, c *Call) ([]Expr, actions.DataType, error) {
				args := make([]Expr, len(c.Args))
				for i := range c.Args {
					if at, ok := c.Args[i].Type().(*actions.ArrayType); ok && i > 0 {
						if at.ElementType != actions.TypeString {
							return nil, nil, typeErr(c, "concat_ws takes arrays of strings, not %s", at)
						}
						args[i] = c.Args[i]
						continue
					}
					a, err := b.coerceArg(c, i, kString)
					if err != nil {
						return nil, nil, err
					}
					args[i] = a
				}
				return args, actions.TypeString, nil
			},
			eval: func(x *callCtx, a []any) (any, error) {
				if a[0] == nil {
					return nil, nil
				}
				var parts []string
				for _, v := range a[1:] {
					switch s := v.(type) {
					case string:
						parts = append(parts, s)
					case []any:
						for _, e := range s {
							if e != nil {
								parts = append(parts, e.(string))
							}
						}
					}
				}
				return strings.Join(parts, a[0].(string)), nil
			}},
		&function{names: []string{"replace"}, minArgs: 2, maxArgs: 3, generated: true,
			bind: sig(actions.TypeString, kString),
			eval: func(x *callCtx, a []any) (any, error) {
				s, from := a[0].(string), a[1].(string)
				to := ""
				if len(a) == 3 {
					to = a[2].(string)
				}
				if from == "" {
					return s, nil
				}
				return strings.ReplaceAll(s, from, to), nil
			}},
		&function{names: []string{"regexp_replace"}, minArgs: 3, maxArgs: 4, generated: true,
			bind: sig(actions.TypeString, kString, kString, kString, kInt),
			eval: func(x *callCtx, a []any) (any, error) {
				re, err := compileRegex(a[1].(string))
				if err != nil {
					return nil, err
				}
				s := a[0].(string)
				pos := int64(1)
				if len(a) == 4 {
					pos = int64(a[3].(int32))
				}
				if pos < 1 {
					return nil, fmt.Errorf("the position must be at least 1, not %d", pos)
				}
				runes := []rune(s)
				if pos > int64(len(runes)) {
					return s, nil
				}
				head, tail := string(runes[:pos-1]), string(runes[pos-1:])
				return head + re.ReplaceAllString(tail, javaReplacement(a[2].(string))), nil
			}},
		&function{names: []string{"regexp_extract"}, minArgs: 2, maxArgs: 3, generated: true,
			bind: sig(actions.TypeString, kString, kString, kInt),
			eval: func(x *callCtx, a []any) (any, error) {
				re, err := compileRegex(a[1].(string))
				if err != nil {
					return nil, err
				}
				idx := 1
				if len(a) == 3 {
					idx = int(a[2].(int32))
				}
				if idx < 0 || idx > re.NumSubexp() {
					return nil, fmt.Errorf("regexp_extract: the pattern has %d groups, not %d", re.NumSubexp(), idx)
				}
				m := re.FindStringSubmatchIndex(a[0].(string))
				if m == nil || m[2*idx] < 0 {
					return "", nil
				}
				return a[0].(string)[m[2*idx]:m[2*idx+1]], nil
			}},
		&function{names: []string{"regexp_extract_all"}, minArgs: 2, maxArgs: 3,
			bind: sig(&actions.ArrayType{ElementType: actions.TypeString, ContainsNull: true}, kString, kString, kInt),
			eval: func(x *callCtx, a []any) (any, error) {
				re, err := compileRegex(a[1].(string))
				if err != nil {
					return nil, err
				}
				idx := 1
				if len(a) == 3 {
					idx = int(a[2].(int32))
				}
				if idx < 0 || idx > re.NumSubexp() {
					return nil, fmt.Errorf("regexp_extract_all: the pattern has %d groups, not %d", re.NumSubexp(), idx)
				}
				s := a[0].(string)
				out := []any{}
				for _, m := range re.FindAllStringSubmatchIndex(s, -1) {
					if m[2*idx] < 0 {
						out = append(out, "")
						continue
					}
					out = append(out, s[m[2*idx]:m[2*idx+1]])
				}
				return out, nil
			}},
		&function{names: []string{"rlike", "regexp_like", "regexp"}, minArgs: 2, maxArgs: 2, generated: true,
			bind: sig(actions.TypeBoolean, kString),
			eval: func(x *callCtx, a []any) (any, error) {
				re, err := compileRegex(a[1].(string))
				if err != nil {
					return nil, err
				}
				return re.MatchString(a[0].(string)), nil
			}},
		&function{names: []string{"like"}, minArgs: 2, maxArgs: 3, generated: true,
			bind: sig(actions.TypeBoolean, kString),
			eval: func(x *callCtx, a []any) (any, error) {
				esc := '\\'
				if len(a) == 3 {
					r := []rune(a[2].(string))
					if len(r) != 1 {
						return nil, fmt.Errorf("the escape must be one character")
					}
					esc = r[0]
				}
				m, err := compileLike(a[1].(string), esc)
				if err != nil {
					return nil, err
				}
				return m.match(a[0].(string)), nil
			}},
		&function{names: []string{"split"}, minArgs: 2, maxArgs: 3, generated: true,
			bind: sig(&actions.ArrayType{ElementType: actions.TypeString, ContainsNull: true}, kString, kString, kInt),
			eval: func(x *callCtx, a []any) (any, error) {
				limit := -1
				if len(a) == 3 {
					limit = int(a[2].(int32))
				}
				return javaSplit(a[0].(string), a[1].(string), limit)
			}},
		&function{names: []string{"lpad"}, minArgs: 2, maxArgs: 3, generated: true, bind: padType,
			eval: func(x *callCtx, a []any) (any, error) { return pad(a, true), nil }},
		&function{names: []string{"rpad"}, minArgs: 2, maxArgs: 3, generated: true, bind: padType,
			eval: func(x *callCtx, a []any) (any, error) { return pad(a, false), nil }},
		&function{names: []string{"repeat"}, minArgs: 2, maxArgs: 2, generated: true,
			bind: sig(actions.TypeString, kString, kInt),
			eval: func(x *callCtx, a []any) (any, error) {
				n := int(a[1].(int32))
				if n <= 0 {
					return "", nil
				}
				if int64(len(a[0].(string)))*int64(n) > 1<<30 {
					return nil, fmt.Errorf("repeat: the result would be larger than 1 GiB")
				}
				return strings.Repeat(a[0].(string), n), nil
			}},
		&function{names: []string{"space"}, minArgs: 1, maxArgs: 1, generated: true,
			bind: sig(actions.TypeString, kInt),
			eval: func(x *callCtx, a []any) (any, error) {
				n := int(a[0].(int32))
				if n <= 0 {
					return "", nil
				}
				if n > 1<<30 {
					return nil, fmt.Errorf("space: the result would be larger than 1 GiB")
				}
				return strings.Repeat(" ", n), nil
			}},
		&function{names: []string{"reverse"}, minArgs: 1, maxArgs: 1, generated: true,
			bind: func(b *binder, c *Call) ([]Expr, actions.DataType, error) {
				if at, ok := c.Args[0].Type().(*actions.ArrayType); ok {
					return c.Args, at, nil
				}
				args, err := b.coerceArgs(c, kString)
				return args, actions.TypeString, err
			},
			eval: func(x *callCtx, a []any) (any, error) {
				if l, ok := a[0].([]any); ok {
					out := make([]any, len(l))
					for i, v := range l {
						out[len(l)-1-i] = v
					}
					return out, nil
				}
				r := []rune(a[0].(string))
				for i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {
					r[i], r[j] = r[j], r[i]
				}
				return string(r), nil
			}},
		&function{names: []string{"ascii"}, minArgs: 1, maxArgs: 1, generated: true,
			bind: sig(actions.TypeInteger, kString),
			eval: func(x *callCtx, a []any) (any, error) {
				r, size := utf8.DecodeRuneInString(a[0].(string))
				if size == 0 {
					return int32(0), nil
				}
				return int32(r), nil
			}},
		&function{names: []string{"chr", "char"}, minArgs: 1, maxArgs: 1, generated: true,
			bind: sig(actions.TypeString, kLong),
			eval: func(x *callCtx, a []any) (any, error) {
				n := a[0].(int64)
				if n < 0 {
					return "", nil
				}
				if n&0xFF == 0 {
					return "\x00", nil
				}
				return string(rune(n & 0xFF)), nil
			}},
		&function{names: []string{"instr"}, minArgs: 2, maxArgs: 2, generated: true,
			bind: sig(actions.TypeInteger, kString),
			eval: func(x *callCtx, a []any) (any, error) {
				return int32(runeIndex(a[0].(string), a[1].(string), 0) + 1), nil
			}},
		&function{names: []string{"locate", "position", "charindex"}, minArgs: 2, maxArgs: 3, generated: true,
			bind: sig(actions.TypeInteger, kString, kString, kInt), nullSafe: true,
			eval: func(x *callCtx, a []any) (any, error) {
				start := int64(1)
				if len(a) == 3 {
					if a[2] == nil {
						return int32(0), nil
					}
					start = int64(a[2].(int32))
				}
				if a[0] == nil || a[1] == nil {
					return nil, nil
				}
				if start < 1 {
					return int32(0), nil
				}
				if a[0].(string) == "" {
					return int32(1), nil // an empty text is found at 1 from any start, as Spark's indexOf
				}
				return int32(runeIndex(a[1].(string), a[0].(string), int(start-1)) + 1), nil
			}},
		&function{names: []string{"find_in_set"}, minArgs: 2, maxArgs: 2, generated: true,
			bind: sig(actions.TypeInteger, kString),
			eval: func(x *callCtx, a []any) (any, error) {
				s := a[0].(string)
				if strings.Contains(s, ",") {
					return int32(0), nil
				}
				for i, p := range strings.Split(a[1].(string), ",") {
					if p == s {
						return int32(i + 1), nil
					}
				}
				return int32(0), nil
			}},
		&function{names: []string{"substring_index"}, minArgs: 3, maxArgs: 3, generated: true,
			bind: sig(actions.TypeString, kString, kString, kInt),
			eval: func(x *callCtx, a []any) (any, error) {
				return substringIndex(a[0].(string), a[1].(string), int(a[2].(int32))), nil
			}},
		&function{names: []string{"translate"}, minArgs: 3, maxArgs: 3, generated: true,
			bind: sig(actions.TypeString, kString),
			eval: func(x *callCtx, a []any) (any, error) {
				return translate(a[0].(string), a[1].(string), a[2].(string)), nil
			}},
		&function{names: []string{"overlay"}, minArgs: 3, maxArgs: 4, generated: true,
			bind: sig(actions.TypeString, kString, kString, kInt, kInt),
			eval: func(x *callCtx, a []any) (any, error) {
				s, rep := []rune(a[0].(string)), a[1].(string)
				pos := int(a[2].(int32))
				n := utf8.RuneCountInString(rep)
				if len(a) == 4 && a[3].(int32) >= 0 {
					n = int(a[3].(int32))
				}
				head := substringSQL(string(s), 1, int64(pos-1)).(string)
				tail := substringSQL(string(s), int64(pos)+int64(n), math.MaxInt32).(string)
				return head + rep + tail, nil
			}},
		&function{names: []string{"levenshtein"}, minArgs: 2, maxArgs: 3, generated: true,
			bind: sig(actions.TypeInteger, kString, kString, kInt),
			eval: func(x *callCtx, a []any) (any, error) {
				d := levenshtein(a[0].(string), a[1].(string))
				if len(a) == 3 && d > int(a[2].(int32)) {
					return int32(-1), nil
				}
				return int32(d), nil
			}},
		&function{names: []string{"base64"}, minArgs: 1, maxArgs: 1, generated: true,
			bind: sig(actions.TypeString, kBinary),
			eval: func(x *callCtx, a []any) (any, error) { return base64.StdEncoding.EncodeToString(a[0].([]byte)), nil }},
		&function{names: []string{"unbase64"}, minArgs: 1, maxArgs: 1, generated: true,
			bind: sig(actions.TypeBinary, kString),
			eval: func(x *callCtx, a []any) (any, error) {
				s := strings.Map(func(r rune) rune {
					if unicode.IsSpace(r) {
						return -1
					}
					return r
				}, a[0].(string))
				b, err := base64.StdEncoding.DecodeString(s)
				if err != nil {
					b, err = base64.RawStdEncoding.DecodeString(strings.TrimRight(s, "="))
				}
				if err != nil {
					return nil, fmt.Errorf("%s is not base64", quoteString(a[0].(string)))
				}
				return b, nil
			}},
		&function{names: []string{"encode"}, minArgs: 2, maxArgs: 2, generated: true,
			bind: sig(actions.TypeBinary, kString),
			eval: func(x *callCtx, a []any) (any, error) { return encodeCharset(a[0].(string), a[1].(string)) }},
		&function{names: []string{"decode"}, minArgs: 2, maxArgs: 2, generated: true,
			bind: sig(actions.TypeString, kBinary, kString),
			eval: func(x *callCtx, a []any) (any, error) { return decodeCharset(a[0].([]byte), a[1].(string)) }},
		&function{names: []string{"elt"}, minArgs: 2, maxArgs: -1, generated: true, nullSafe: true,
			bind: func(b *binder, c *Call) ([]Expr, actions.DataType, error) {
				args, err := b.coerceArgs(c, kInt, kString)
				return args, actions.TypeString, err
			},
			eval: func(x *callCtx, a []any) (any, error) {
				if a[0] == nil {
					return nil, nil
				}
				n := int(a[0].(int32))
				if n < 1 || n >= len(a) {
					return nil, fmt.Errorf("elt: index %d is out of range 1 to %d", n, len(a)-1)
				}
				return a[n], nil
			}},
		&function{names: []string{"startswith"}, minArgs: 2, maxArgs: 2,
			bind: sig(actions.TypeBoolean, kString),
			eval: func(x *callCtx, a []any) (any, error) { return strings.HasPrefix(a[0].(string), a[1].(string)), nil }},
		&function{names: []string{"endswith"}, minArgs: 2, maxArgs: 2,
			bind: sig(actions.TypeBoolean, kString),
			eval: func(x *callCtx, a []any) (any, error) { return strings.HasSuffix(a[0].(string), a[1].(string)), nil }},
		&function{names: []string{"contains"}, minArgs: 2, maxArgs: 2,
			bind: sig(actions.TypeBoolean, kString),
			eval: func(x *callCtx, a []any) (any, error) { return strings.Contains(a[0].(string), a[1].(string)), nil }},
		&function{names: []string{"uuid"}, minArgs: 0, maxArgs: 0, nondeterministic: true,
			bind: sig(actions.TypeString),
			eval: func(x *callCtx, a []any) (any, error) { return uuid.NewString(), nil }},
	)
}

func byteLen(v any) int {
	if b, ok := v.([]byte); ok {
		return len(b)
	}
	return len(v.(string))
}

func initcap(s string) string {
	r := []rune(strings.ToLower(s))
	for i := range r {
		if i == 0 || r[i-1] == ' ' {
			r[i] = unicode.ToTitle(r[i])
		}
	}
	return string(r)
}

func trimWith(left, right bool) func(*callCtx, []any) (any, error) {
	return func(x *callCtx, a []any) (any, error) {
		s := a[0].(string)
		cut := " "
		if len(a) == 2 {
			cut = a[1].(string)
		}
		if left {
			s = strings.TrimLeft(s, cut)
		}
		if right {
			s = strings.TrimRight(s, cut)
		}
		return s, nil
	}
}

// substringSQL is Spark's substring over characters (or bytes, for
// binary): 1-based pos, 0 taken as 1, negative counting from the end.
func substringSQL(v any, pos, length int64) any {
	var n int64
	var runes []rune
	b, isBin := v.([]byte)
	if isBin {
		n = int64(len(b))
	} else {
		runes = []rune(v.(string))
		n = int64(len(runes))
	}
	var start int64
	switch {
	case pos > 0:
		start = pos - 1
	case pos < 0:
		start = n + pos
	}
	end := start + length
	start = max(start, 0)
	end = min(end, n)
	if start >= end {
		if isBin {
			return []byte{}
		}
		return ""
	}
	if isBin {
		return bytes.Clone(b[start:end])
	}
	return string(runes[start:end])
}

func concatType(b *binder, c *Call) ([]Expr, actions.DataType, error) {
	if len(c.Args) == 0 {
		return nil, actions.TypeString, nil
	}
	allBin, anyArray := true, false
	for _, a := range c.Args {
		t := a.Type()
		if t != actions.TypeBinary && t != nil {
			allBin = false
		}
		if _, ok := t.(*actions.ArrayType); ok {
			anyArray = true
		}
	}
	if anyArray {
		return b.toCommon(c, c.Args, 0)
	}
	if allBin {
		args, err := b.coerceArgs(c, kBinary)
		return args, actions.TypeBinary, err
	}
	args, err := b.coerceArgs(c, kString)
	return args, actions.TypeString, err
}

func padType(b *binder, c *Call) ([]Expr, actions.DataType, error) {
	if c.Args[0].Type() == actions.TypeBinary && (len(c.Args) < 3 || c.Args[2].Type() == actions.TypeBinary) {
		args, err := b.coerceArgs(c, kBinary, kInt, kBinary)
		return args, actions.TypeBinary, err
	}
	args, err := b.coerceArgs(c, kString, kInt, kString)
	return args, actions.TypeString, err
}

// pad is lpad (left) or rpad over characters, or bytes for binary.
func pad(a []any, left bool) any {
	n := int(a[1].(int32))
	if b, ok := a[0].([]byte); ok {
		p := []byte{0}
		if len(a) == 3 {
			p = a[2].([]byte)
		}
		if n <= 0 {
			return []byte{}
		}
		if len(b) >= n || len(p) == 0 {
			return bytes.Clone(b[:min(n, len(b))])
		}
		fill := make([]byte, 0, n-len(b))
		for len(fill) < n-len(b) {
			fill = append(fill, p[:min(len(p), n-len(b)-len(fill))]...)
		}
		if left {
			return append(fill, b...)
		}
		return append(bytes.Clone(b), fill...)
	}
	s := []rune(a[0].(string))
	p := []rune(" ")
	if len(a) == 3 {
		p = []rune(a[2].(string))
	}
	if n <= 0 {
		return ""
	}
	if len(s) >= n || len(p) == 0 {
		return string(s[:min(n, len(s))])
	}
	fill := make([]rune, 0, n-len(s))
	for len(fill) < n-len(s) {
		fill = append(fill, p[:min(len(p), n-len(s)-len(fill))]...)
	}
	if left {
		return string(fill) + string(s)
	}
	return string(s) + string(fill)
}

// runeIndex is the character index of sub in s at or after character
// from, or -1.
func runeIndex(s, sub string, from int) int {
	r := []rune(s)
	if from > len(r) {
		return -1
	}
	i := strings.Index(string(r[from:]), sub)
	if i < 0 {
		return -1
	}
	return from + utf8.RuneCountInString(string(r[from:])[:i])
}

// substringIndex is Spark's substring_index: the text before the
// count-th delimiter from the left (count > 0) or after the -count-th
// from the right; occurrences are searched one byte past the last, so
// they may overlap, as Spark's UTF8String.subStringIndex does.
func substringIndex(s, delim string, count int) string {
	if delim == "" || count == 0 || s == "" {
		return ""
	}
	if count > 0 {
		idx := -1
		for i := 0; i < count; i++ {
			j := strings.Index(s[idx+1:], delim)
			if j < 0 {
				return s
			}
			idx = idx + 1 + j
		}
		return s[:idx]
	}
	idx := len(s)
	for i := 0; i < -count; i++ {
		end := min(idx-1+len(delim), len(s))
		if idx-1 < 0 {
			return s
		}
		j := strings.LastIndex(s[:end], delim)
		if j < 0 {
			return s
		}
		idx = j
	}
	return s[idx+len(delim):]
}

func translate(s, from, to string) string {
	fr, tr := []rune(from), []rune(to)
	m := map[rune]rune{}
	del := map[rune]bool{}
	for i, r := range fr {
		if _, seen := m[r]; seen || del[r] {
			continue
		}
		if i < len(tr) {
			m[r] = tr[i]
		} else {
			del[r] = true
		}
	}
	var b strings.Builder
	for _, r := range s {
		if del[r] {
			continue
		}
		if t, ok := m[r]; ok {
			b.WriteRune(t)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func soundex(s string) string {
	if s == "" {
		return ""
	}
	r := []rune(s)
	first := unicode.ToUpper(r[0])
	if first < 'A' || first > 'Z' {
		return s
	}
	code := func(c rune) byte {
		switch unicode.ToUpper(c) {
		case 'B', 'F', 'P', 'V':
			return '1'
		case 'C', 'G', 'J', 'K', 'Q', 'S', 'X', 'Z':
			return '2'
		case 'D', 'T':
			return '3'
		case 'L':
			return '4'
		case 'M', 'N':
			return '5'
		case 'R':
			return '6'
		case 'H', 'W':
			return 'h'
		}
		return '0'
	}
	out := []byte{byte(first)}
	last := code(first)
	for _, c := range r[1:] {
		if len(out) == 4 {
			break
		}
		d := code(c)
		if d == 'h' {
			continue
		}
		if d != '0' && d != last {
			out = append(out, d)
		}
		last = d
	}
	for len(out) < 4 {
		out = append(out, '0')
	}
	return string(out)
}

var regexCache sync.Map // pattern -> *regexp.Regexp

// compileRegex compiles a Java regular expression as far as RE2 reads
// it.
func compileRegex(p string) (*regexp.Regexp, error) {
	if r, ok := regexCache.Load(p); ok {
		return r.(*regexp.Regexp), nil
	}
	re, err := regexp.Compile(p)
	if err != nil {
		return nil, fmt.Errorf("the regular expression %s is not valid here (lookaround and backreferences are not supported): %v", quoteString(p), err)
	}
	regexCache.Store(p, re)
	return re, nil
}

// javaReplacement turns Java's replacement syntax ($1, \$) into Go's
// (${1}, $$).
func javaReplacement(r string) string {
	var b strings.Builder
	for i := 0; i < len(r); i++ {
		c := r[i]
		switch {
		case c == '\\' && i+1 < len(r):
			i++
			if r[i] == '$' {
				b.WriteString("$$")
			} else {
				b.WriteByte(r[i])
			}
		case c == '$':
			j := i + 1
			for j < len(r) && r[j] >= '0' && r[j] <= '9' {
				j++
			}
			if j == i+1 {
				b.WriteString("$$")
				continue
			}
			b.WriteString("${" + r[i+1:j] + "}")
			i = j - 1
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// javaSplit is Java's String.split(regex, limit) as Spark calls it: at
// most limit pieces when limit > 0, every piece otherwise, keeping
// trailing empty strings; a zero-width match at the start makes no
// leading empty piece.
func javaSplit(s, pattern string, limit int) (any, error) {
	if s == "" {
		return []any{""}, nil
	}
	re, err := compileRegex(pattern)
	if err != nil {
		return nil, err
	}
	var out []any
	last := 0
	for _, m := range re.FindAllStringIndex(s, -1) {
		if limit > 0 && len(out) == limit-1 {
			break
		}
		if m[1] == 0 {
			continue // zero-width match at the start
		}
		if m[0] == m[1] && m[0] >= len(s) {
			break
		}
		out = append(out, s[last:m[0]])
		last = m[1]
	}
	out = append(out, s[last:])
	return out, nil
}

// errMalformedCoding is text or bytes the character set cannot code.
var errMalformedCoding = errors.New("malformed text for the character set")

// charsetName is cs as one of the character sets Spark's encode and
// decode take (its names only, in any case), or an error naming them.
func charsetName(cs string) (string, error) {
	switch n := strings.ToUpper(cs); n {
	case "US-ASCII", "ISO-8859-1", "UTF-8", "UTF-16", "UTF-16BE", "UTF-16LE", "UTF-32":
		return n, nil
	}
	return "", fmt.Errorf("unsupported character set %s (want one of US-ASCII, ISO-8859-1, UTF-8, UTF-16, UTF-16BE, UTF-16LE, UTF-32)", quoteString(cs))
}

// encodeCharset is Spark's encode: text the character set cannot hold
// is an error, as Java's encoder reporting malformed input. UTF-16 is
// written big-endian after a byte-order mark, UTF-32 big-endian.
func encodeCharset(s, cs string) (any, error) {
	name, err := charsetName(cs)
	if err != nil {
		return nil, err
	}
	switch name {
	case "UTF-8":
		return []byte(s), nil
	case "US-ASCII", "ISO-8859-1":
		limit := rune(127)
		if name == "ISO-8859-1" {
			limit = 255
		}
		out := make([]byte, 0, len(s))
		for _, r := range s {
			if r > limit {
				return nil, fmt.Errorf("encode with %s: %w", name, errMalformedCoding)
			}
			out = append(out, byte(r))
		}
		return out, nil
	case "UTF-32":
		out := make([]byte, 0, 4*len(s))
		for _, r := range s {
			out = binary.BigEndian.AppendUint32(out, uint32(r))
		}
		return out, nil
	}
	var order binary.AppendByteOrder = binary.BigEndian
	out := []byte{}
	switch name {
	case "UTF-16":
		out = append(out, 0xFE, 0xFF)
	case "UTF-16LE":
		order = binary.LittleEndian
	}
	for _, u := range utf16.Encode([]rune(s)) {
		out = order.AppendUint16(out, u)
	}
	return out, nil
}

// decodeCharset is Spark's decode: bytes that are not text in the
// character set are an error, as Java's decoder reporting malformed
// input. UTF-16 and UTF-32 read a leading byte-order mark (big-endian
// without one).
func decodeCharset(b []byte, cs string) (any, error) {
	name, err := charsetName(cs)
	if err != nil {
		return nil, err
	}
	bad := fmt.Errorf("decode with %s: %w", name, errMalformedCoding)
	switch name {
	case "UTF-8":
		if !utf8.Valid(b) {
			return nil, bad
		}
		return string(b), nil
	case "US-ASCII", "ISO-8859-1":
		r := make([]rune, len(b))
		for i, c := range b {
			if c > 127 && name == "US-ASCII" {
				return nil, bad
			}
			r[i] = rune(c)
		}
		return string(r), nil
	case "UTF-32":
		if len(b)%4 != 0 {
			return nil, bad
		}
		var order binary.ByteOrder = binary.BigEndian
		if len(b) >= 4 && binary.LittleEndian.Uint32(b) == 0xFEFF {
			order, b = binary.LittleEndian, b[4:]
		} else if len(b) >= 4 && binary.BigEndian.Uint32(b) == 0xFEFF {
			b = b[4:]
		}
		r := make([]rune, 0, len(b)/4)
		for i := 0; i < len(b); i += 4 {
			c := order.Uint32(b[i:])
			if c > unicode.MaxRune || (c >= 0xD800 && c <= 0xDFFF) {
				return nil, bad
			}
			r = append(r, rune(c))
		}
		return string(r), nil
	}
	if len(b)%2 != 0 {
		return nil, bad
	}
	var order binary.ByteOrder = binary.BigEndian
	switch {
	case name == "UTF-16LE":
		order = binary.LittleEndian
	case name == "UTF-16" && len(b) >= 2 && b[0] == 0xFF && b[1] == 0xFE:
		order, b = binary.LittleEndian, b[2:]
	case name == "UTF-16" && len(b) >= 2 && b[0] == 0xFE && b[1] == 0xFF:
		b = b[2:]
	}
	units := make([]uint16, len(b)/2)
	for i := range units {
		units[i] = order.Uint16(b[2*i:])
	}
	for i := 0; i < len(units); i++ { // an unpaired surrogate is malformed
		switch u := units[i]; {
		case u >= 0xD800 && u < 0xDC00:
			if i+1 == len(units) || units[i+1] < 0xDC00 || units[i+1] > 0xDFFF {
				return nil, bad
			}
			i++
		case u >= 0xDC00 && u <= 0xDFFF:
			return nil, bad
		}
	}
	return string(utf16.Decode(units)), nil
}
