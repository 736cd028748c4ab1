package expr

import (
	"encoding/hex"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"

	"github.com/lakelog/lakelog/actions"
)

// typeOfValue is the Delta type of a Go value of actions/values.go; nil
// for nil (an untyped NULL). A decimal gets the smallest precision that
// holds it.
func typeOfValue(v any) (actions.DataType, bool) {
	switch x := v.(type) {
	case nil:
		return nil, true
	case bool:
		return actions.TypeBoolean, true
	case int8:
		return actions.TypeByte, true
	case int16:
		return actions.TypeShort, true
	case int32:
		return actions.TypeInteger, true
	case int64:
		return actions.TypeLong, true
	case float32:
		return actions.TypeFloat, true
	case float64:
		return actions.TypeDouble, true
	case string:
		return actions.TypeString, true
	case []byte:
		return actions.TypeBinary, true
	case actions.Date:
		return actions.TypeDate, true
	case actions.Timestamp:
		return actions.TypeTimestamp, true
	case actions.TimestampNTZ:
		return actions.TypeTimestampNTZ, true
	case actions.Decimal:
		if x.Unscaled == nil || x.Scale < 0 || x.Scale > actions.MaxDecimalPrecision {
			return nil, false
		}
		p := max(decimalDigits(x.Unscaled), x.Scale, 1)
		if p > actions.MaxDecimalPrecision {
			return nil, false
		}
		return &actions.DecimalType{Precision: p, Scale: x.Scale}, true
	}
	return nil, false
}

// decimalDigits is the number of decimal digits of |v| (0 for 0).
func decimalDigits(v *big.Int) int {
	if v.Sign() == 0 {
		return 0
	}
	s := v.String()
	if s[0] == '-' {
		return len(s) - 1
	}
	return len(s)
}

// formatLiteral prints a literal so that Parse reads back a literal of
// the same value. Integers and decimals print as plain numbers, which may
// read back as a narrower type (5 as integer, 5.0 as decimal(2,1)); Bind
// converts such literals to the type they meet. Floats keep their type
// with a D or F suffix.
func formatLiteral(v any) string {
	switch x := v.(type) {
	case nil:
		return "NULL"
	case bool:
		if x {
			return "TRUE"
		}
		return "FALSE"
	case int8:
		return strconv.FormatInt(int64(x), 10)
	case int16:
		return strconv.FormatInt(int64(x), 10)
	case int32:
		return strconv.FormatInt(int64(x), 10)
	case int64:
		return strconv.FormatInt(x, 10)
	case float32:
		return formatFloat(float64(x), 32)
	case float64:
		return formatFloat(x, 64)
	case string:
		return quoteString(x)
	case []byte:
		return "X'" + strings.ToUpper(hex.EncodeToString(x)) + "'"
	case actions.Date:
		return "DATE " + quoteString(x.String())
	case actions.Timestamp:
		return "TIMESTAMP " + quoteString(trimFraction(x.String()))
	case actions.TimestampNTZ:
		return "TIMESTAMP_NTZ " + quoteString(trimFraction(x.String()))
	case actions.Decimal:
		return x.String()
	}
	return fmt.Sprintf("<%T>", v)
}

// formatFloat prints a float literal with its type suffix (D or F), or a
// CAST of a string for the values that have no literal.
func formatFloat(f float64, bits int) string {
	name, suffix := "double", "D"
	if bits == 32 {
		name, suffix = "float", "F"
	}
	switch {
	case math.IsNaN(f):
		return "CAST('NaN' AS " + name + ")"
	case math.IsInf(f, 1):
		return "CAST('Infinity' AS " + name + ")"
	case math.IsInf(f, -1):
		return "CAST('-Infinity' AS " + name + ")"
	}
	s := strconv.FormatFloat(f, 'g', -1, bits)
	if !strings.ContainsAny(s, ".eE") {
		s += ".0" // 1.0D, as a user writes a double; -0.0D keeps its sign
	}
	return s + suffix
}

// parseDecimalText parses unsigned digits with an optional fraction
// ("12", "1.50", ".5") into a Decimal whose scale is the number of
// fractional digits.
func parseDecimalText(s string) (actions.Decimal, error) {
	intPart, frac, _ := strings.Cut(s, ".")
	if intPart == "" && frac == "" {
		return actions.Decimal{}, fmt.Errorf("no digits")
	}
	for _, r := range intPart + frac {
		if r < '0' || r > '9' {
			return actions.Decimal{}, fmt.Errorf("not a number")
		}
	}
	u, ok := new(big.Int).SetString(intPart+frac, 10)
	if !ok {
		return actions.Decimal{}, fmt.Errorf("not a number")
	}
	return actions.Decimal{Unscaled: u, Scale: len(frac)}, nil
}

// quoteString quotes s as a Spark SQL string literal: a backslash
// before each quote and backslash.
func quoteString(s string) string {
	return "'" + stringEscaper.Replace(s) + "'"
}

var stringEscaper = strings.NewReplacer(`\`, `\\`, `'`, `\'`)

// quoteIdent prints a name bare when Parse would read it back as the same
// name, else in backquotes.
func quoteIdent(name string) string {
	if isPlainIdent(name) && !isReserved(name) {
		return name
	}
	return "`" + strings.ReplaceAll(name, "`", "``") + "`"
}

func isPlainIdent(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

const microsPerDay = 86_400 * 1_000_000

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

// trimFraction drops trailing zero digits of a timestamp's fraction, and
// the point when none remain: 10:00:00.500000Z is 10:00:00.5Z.
func trimFraction(s string) string {
	dot := strings.LastIndexByte(s, '.')
	if dot < 0 {
		return s
	}
	end := dot + 1
	for end < len(s) && s[end] >= '0' && s[end] <= '9' {
		end++
	}
	frac := strings.TrimRight(s[dot+1:end], "0")
	if frac == "" {
		return s[:dot] + s[end:]
	}
	return s[:dot+1] + frac + s[end:]
}

// sqlTimestamp prints a timestamp as Spark casts one to string:
// 2026-01-02 03:04:05.5, without trailing zero fractional digits.
func sqlTimestamp(s string) string {
	return strings.Replace(strings.TrimSuffix(trimFraction(s), "Z"), "T", " ", 1)
}
