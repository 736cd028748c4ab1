package actions

// MetaTypeChanges is the field metadata key of the typeWidening feature:
// the history of a column's type changes (PROTOCOL.md "Type Change
// Metadata").
const MetaTypeChanges = "delta.typeChanges"

// CanWidenType reports whether the typeWidening feature lets a column of
// type from change to type to (PROTOCOL.md "Type Widening", Spark's
// TypeWidening.isTypeChangeSupported): byte -> short -> int -> long,
// float -> double, byte/short/int -> double, date -> timestamp_ntz,
// decimal(p, s) -> decimal(p+k1, s+k2) with k1 >= k2 >= 0, and
// byte/short/int (long) -> a decimal with at least 10 (20) integer
// digits. Only primitive and decimal types change; a type equal to from
// is no change and reports false.
func CanWidenType(from, to DataType) bool {
	if sameType(from, to) {
		return false
	}
	if d, ok := to.(*DecimalType); ok {
		switch f := from.(type) {
		case *DecimalType:
			return decimalWider(d, f.Precision, f.Scale)
		case PrimitiveType:
			switch f {
			case TypeByte, TypeShort, TypeInteger:
				return decimalWider(d, 10, 0)
			case TypeLong:
				return decimalWider(d, 20, 0)
			}
		}
		return false
	}
	if integralRank(from) > 0 && integralRank(to) > 0 {
		return integralRank(from) < integralRank(to)
	}
	switch {
	case from == TypeFloat && to == TypeDouble:
		return true
	case to == TypeDouble && (from == TypeByte || from == TypeShort || from == TypeInteger):
		return true
	case from == TypeDate && to == TypeTimestampNTZ:
		return true
	}
	return false
}

// CanWidenOnWrite reports whether schema evolution on write (merge-schema)
// may widen a column of type from to type to: the changes of CanWidenType
// that Spark applies automatically (TypeWidening's
// isTypeChangeSupportedForSchemaEvolution): integral widening, float ->
// double, decimal widening and date -> timestamp_ntz, not integers to
// double or decimal.
func CanWidenOnWrite(from, to DataType) bool {
	if !CanWidenType(from, to) {
		return false
	}
	_, toDec := to.(*DecimalType)
	_, fromDec := from.(*DecimalType)
	switch {
	case toDec:
		return fromDec
	case to == TypeDouble:
		return from == TypeFloat
	}
	return true
}

func decimalWider(d *DecimalType, p, s int) bool {
	return d.Precision-d.Scale >= p-s && d.Scale >= s
}

func integralRank(t DataType) int {
	switch t {
	case TypeByte:
		return 1
	case TypeShort:
		return 2
	case TypeInteger:
		return 3
	case TypeLong:
		return 4
	}
	return 0
}

func sameType(a, b DataType) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.String() == b.String()
}

// AddTypeChange records, in the metadata of f, a change of its type (or,
// with fieldPath "element", "key", "value" or a dotted path of them, of a
// type nested in its arrays and maps) from from to to, appending to the
// field's delta.typeChanges list as PROTOCOL.md describes. f's metadata
// map is replaced, not modified.
func AddTypeChange(f *StructField, from, to DataType, fieldPath string) {
	md := copyMetadata(f.Metadata)
	var list []any
	if old, ok := md[MetaTypeChanges].([]any); ok {
		list = old
	}
	change := map[string]any{"fromType": typeChangeName(from), "toType": typeChangeName(to)}
	if fieldPath != "" {
		change["fieldPath"] = fieldPath
	}
	md[MetaTypeChanges] = append(list, change)
	f.Metadata = md
}

// typeChangeName is a type as delta.typeChanges spells it: a primitive's
// name, "decimal(p,s)".
func typeChangeName(t DataType) string { return t.String() }
