package schema

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/lakelog/lakelog/actions"
)

// ParseColumnPath reads a column path as SQL writes one: names joined by
// dots, each a plain name or `backquoted` (a backquote doubled inside).
// "s.`a b`" is []string{"s", "a b"}.
func ParseColumnPath(text string) ([]string, error) {
	var out []string
	i := 0
	for {
		for i < len(text) && text[i] == ' ' {
			i++
		}
		var name strings.Builder
		switch {
		case i < len(text) && text[i] == '`':
			i++
			for {
				j := strings.IndexByte(text[i:], '`')
				if j < 0 {
					return nil, fmt.Errorf("schema: column %q: unterminated backquote", text)
				}
				name.WriteString(text[i : i+j])
				i += j + 1
				if i < len(text) && text[i] == '`' {
					name.WriteByte('`')
					i++
					continue
				}
				break
			}
		default:
			j := i
			for j < len(text) && text[j] != '.' && text[j] != '`' && text[j] != ' ' {
				j++
			}
			name.WriteString(text[i:j])
			i = j
		}
		if name.Len() == 0 {
			return nil, fmt.Errorf("schema: column %q: empty name", text)
		}
		out = append(out, name.String())
		for i < len(text) && text[i] == ' ' {
			i++
		}
		if i == len(text) {
			return out, nil
		}
		if text[i] != '.' {
			r, _ := utf8.DecodeRuneInString(text[i:])
			return nil, fmt.Errorf("schema: column %q: unexpected %q at %d (quote names with backquotes)", text, r, utf8.RuneCountInString(text[:i])+1)
		}
		i++
	}
}

// quotePath writes a path back as SQL would: names with other characters
// than letters, digits and _ backquoted.
func quotePath(path []string) string {
	parts := make([]string, len(path))
	for i, p := range path {
		plain := p != ""
		for _, r := range p {
			if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
				plain = false
				break
			}
		}
		if plain {
			parts[i] = p
		} else {
			parts[i] = "`" + strings.ReplaceAll(p, "`", "``") + "`"
		}
	}
	return strings.Join(parts, ".")
}

// target is where a column path leads in a schema.
type target struct {
	// names is the path in the schema's own spelling.
	names []string
	// A struct field: parent holds it at index. For an array element or a
	// map key or value, parent is nil and get/set read and replace the
	// type.
	parent *actions.StructType
	index  int
	get    func() actions.DataType
	set    func(actions.DataType)
	// owner is the nearest struct field at or above the target (where
	// delta.typeChanges go) and fieldPath the path from it to an array
	// element or map key/value ("element", "value.element").
	owner     *actions.StructField
	fieldPath string
}

func (t *target) field() *actions.StructField {
	if t.parent == nil {
		return nil
	}
	return t.parent.Fields[t.index]
}

func (t *target) dataType() actions.DataType {
	if f := t.field(); f != nil {
		return f.Type
	}
	return t.get()
}

// resolve finds path in s: struct fields by name (exactly, else ignoring
// case, as Spark resolves them), and element, key and value inside
// arrays and maps.
func resolve(s *actions.StructType, path []string) (*target, error) {
	var t actions.DataType = s
	tg := &target{}
	for i, name := range path {
		last := i == len(path)-1
		shown := quotePath(path[:i+1])
		switch x := t.(type) {
		case *actions.StructType:
			k := fieldIndex(x, name)
			if k < 0 {
				return nil, fmt.Errorf("column %s does not exist (%s holds %s)", shown, structName(path[:i]), strings.Join(x.Names(), ", "))
			}
			f := x.Fields[k]
			tg.names = append(tg.names, f.Name)
			tg.owner, tg.fieldPath = f, ""
			if last {
				tg.parent, tg.index = x, k
				return tg, nil
			}
			t = f.Type
		case *actions.ArrayType:
			if !strings.EqualFold(name, "element") {
				return nil, fmt.Errorf("column %s does not exist: %s is an array (its elements are %s.element)", shown, quotePath(path[:i]), quotePath(path[:i]))
			}
			tg.names = append(tg.names, "element")
			tg.fieldPath = joinFieldPath(tg.fieldPath, "element")
			if last {
				tg.get = func() actions.DataType { return x.ElementType }
				tg.set = func(n actions.DataType) { x.ElementType = n }
				return tg, nil
			}
			t = x.ElementType
		case *actions.MapType:
			lower := strings.ToLower(name)
			if lower != "key" && lower != "value" {
				return nil, fmt.Errorf("column %s does not exist: %s is a map (its parts are %s.key and %s.value)", shown, quotePath(path[:i]), quotePath(path[:i]), quotePath(path[:i]))
			}
			tg.names = append(tg.names, lower)
			tg.fieldPath = joinFieldPath(tg.fieldPath, lower)
			if lower == "key" {
				if last {
					tg.get = func() actions.DataType { return x.KeyType }
					tg.set = func(n actions.DataType) { x.KeyType = n }
					return tg, nil
				}
				t = x.KeyType
			} else {
				if last {
					tg.get = func() actions.DataType { return x.ValueType }
					tg.set = func(n actions.DataType) { x.ValueType = n }
					return tg, nil
				}
				t = x.ValueType
			}
		default:
			return nil, fmt.Errorf("column %s does not exist: %s is a %s, which has no fields", shown, quotePath(path[:i]), t)
		}
	}
	return nil, fmt.Errorf("empty column path")
}

func structName(path []string) string {
	if len(path) == 0 {
		return "the table"
	}
	return quotePath(path)
}

func joinFieldPath(a, b string) string {
	if a == "" {
		return b
	}
	return a + "." + b
}

// fieldIndex is the index of the field named name in s: an exact match,
// else one ignoring case; -1 when none.
func fieldIndex(s *actions.StructType, name string) int {
	for i, f := range s.Fields {
		if f.Name == name {
			return i
		}
	}
	for i, f := range s.Fields {
		if strings.EqualFold(f.Name, name) {
			return i
		}
	}
	return -1
}

// overlaps reports whether two column paths name the same column or one
// lies inside the other (names compared ignoring case).
func overlaps(a, b []string) bool {
	n := min(len(a), len(b))
	for i := range n {
		if !strings.EqualFold(a[i], b[i]) {
			return false
		}
	}
	return true
}
