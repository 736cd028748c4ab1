package cdc

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/test/testseed"
)

// envelope builds a change event as JsonConverter writes it: the row
// struct's fields and the payload's after image.
func envelope(fields []map[string]any, after map[string]any, op string) []byte {
	row := map[string]any{"type": "struct", "optional": true, "name": "t.Value", "fields": fields}
	before, aft := row, row
	schema := map[string]any{"type": "struct", "name": "t.Envelope", "fields": []any{
		withField(before, "before"), withField(aft, "after"),
		map[string]any{"type": "struct", "field": "source", "fields": []any{}},
		map[string]any{"type": "string", "field": "op"},
	}}
	p := map[string]any{"op": op, "after": after, "source": map[string]any{"lsn": 10, "sequence": `["5","10"]`, "snapshot": "false", "txId": 3}}
	if op == "d" {
		p["before"], p["after"] = after, nil
	}
	b, err := json.Marshal(map[string]any{"schema": schema, "payload": p})
	if err != nil {
		panic(err)
	}
	return b
}

func withField(m map[string]any, name string) map[string]any {
	out := map[string]any{"field": name}
	for k, v := range m {
		out[k] = v
	}
	return out
}

func TestDecodeRefuses(t *testing.T) {
	dec := NewDecoder()
	cases := []struct {
		name  string
		field map[string]any
		want  string
	}{
		{"unknown logical type", map[string]any{"type": "struct", "name": "io.debezium.data.geometry.Point", "field": "p", "fields": []any{}},
			`column "p" has type struct io.debezium.data.geometry.Point: an unknown logical type`},
		{"variable numeric without a choice", map[string]any{"type": "struct", "name": "io.debezium.data.VariableScaleDecimal", "field": "n", "fields": []any{}},
			`column "n" has type struct io.debezium.data.VariableScaleDecimal: a numeric without precision and scale`},
		{"not JsonConverter's name", map[string]any{"type": "float64", "field": "f"},
			`column "f" has type float64: not a Kafka Connect type`},
		{"precision beyond 38", map[string]any{"type": "bytes", "name": "org.apache.kafka.connect.data.Decimal", "field": "big", "parameters": map[string]string{"scale": "2", "connect.decimal.precision": "40"}},
			`column "big" has type bytes org.apache.kafka.connect.data.Decimal: precision 40 is more than`},
		{"logical type on the wrong type", map[string]any{"type": "string", "name": "io.debezium.time.Date", "field": "d"},
			`column "d" has type string io.debezium.time.Date: logical type io.debezium.time.Date on Connect type string`},
	}
	for _, c := range cases {
		_, err := dec.Decode(nil, envelope([]map[string]any{c.field}, map[string]any{}, "c"))
		var te *TypeError
		if !errors.As(err, &te) || !errors.Is(err, ErrUnsupportedType) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want a TypeError %q", c.name, err, c.want)
		}
	}
	// A value its schema does not describe names the column.
	_, err := dec.Decode(nil, envelope([]map[string]any{{"type": "int16", "field": "s"}}, map[string]any{"s": 40000}, "c"))
	var ve *ValueError
	if !errors.As(err, &ve) || ve.Column != "s" || !errors.Is(err, ErrBadValue) {
		t.Errorf("an int16 of 40000: %v", err)
	}
	// No schema part: refused, never guessed.
	if _, err := dec.Decode(nil, []byte(`{"op": "c", "after": {"id": 1}}`)); !errors.Is(err, ErrNoSchema) {
		t.Errorf("without the schema part: %v", err)
	}
	for _, v := range []string{"", "null", " null "} {
		if _, err := dec.Decode(nil, []byte(v)); !errors.Is(err, ErrTombstone) {
			t.Errorf("%q: %v, want a tombstone", v, err)
		}
	}
	if _, err := dec.Decode(nil, []byte(`{"schema": {}, "payload": {"op": "x"}}`)); !errors.Is(err, ErrNotChangeEvent) {
		t.Errorf("op x: %v", err)
	}
}

func TestVariableNumericAsDecimal(t *testing.T) {
	dec := NewDecoder(WithVariableNumeric(NumericMode{Scale: 6}))
	var got []string
	for _, r := range readFixture(t) {
		if r.Topic == "transaction" || r.Step != "snapshot" && r.Step != "inserts" {
			continue
		}
		e, err := dec.Decode(r.Key, r.Value)
		if err != nil {
			got = append(got, err.Error())
			continue
		}
		c := e.Schema.Column("anynum")
		got = append(got, fmt.Sprintf("%s %s", typeText(c.Type), valueText(e.Row[e.Schema.index["anynum"]])))
	}
	want := []string{
		// 35 fractional digits do not fit scale 6: refused, not rounded.
		`cdc: column "anynum" (struct io.debezium.data.VariableScaleDecimal): value {"scale":35,"value":"PIE/ZjbZhPJZW2o3KlPQ"}: 3.14159265358979323846264338327950288 has more than 6 fractional digits (the chosen scale of unconstrained numerics)`,
		"decimal(38,6) -0.000001",
		"decimal(38,6) NULL",
		"decimal(38,6) NULL",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestPositionsAndTransactions(t *testing.T) {
	dec := NewDecoder(WithVariableNumeric(NumericMode{AsString: true}))
	var last Position
	var counts = map[int64]int64{} // txId -> events
	ends := map[int64]int64{}
	for _, r := range readFixture(t) {
		if r.Topic == "transaction" {
			te, err := DecodeTransaction(r.Value)
			if err != nil {
				t.Fatal(err)
			}
			if te.Status == "END" {
				id, lsn, err := ParseTransactionID(te.ID)
				if err != nil || lsn <= 0 {
					t.Fatalf("END id %q: %v", te.ID, err)
				}
				ends[id] = te.Collections["public.cdc_types"]
			}
			continue
		}
		e, err := dec.Decode(r.Key, r.Value)
		if errors.Is(err, ErrTombstone) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		p, ok := e.Position()
		if e.Op == OpRead {
			if ok {
				t.Errorf("a snapshot read has a position %s", p)
			}
			continue
		}
		if !ok || !last.Less(p) {
			t.Errorf("offset %d: position %s (ok %v) after %s", r.Offset, p, ok, last)
		}
		last = p
		if e.Transaction == nil {
			t.Fatalf("offset %d: no transaction block", r.Offset)
		}
		id, _, err := ParseTransactionID(e.Transaction.ID)
		if err != nil || id != e.Source.TxID {
			t.Errorf("offset %d: transaction %q, txId %d: %v", r.Offset, e.Transaction.ID, e.Source.TxID, err)
		}
		counts[id]++
	}
	if len(ends) == 0 || fmt.Sprint(counts) != fmt.Sprint(ends) {
		t.Errorf("events per transaction %v, END counts %v", counts, ends)
	}
}

// TestRandomEvents decodes random rows of random schemas, encoded here
// as JsonConverter encodes them (two's complement decimals, days,
// epoch counts, ISO text), and compares every value with the one it was
// made from.
func TestRandomEvents(t *testing.T) {
	seed := testseed.From(t, "CDC_EVENTS_SEED")
	rng := rand.New(rand.NewPCG(seed, 7))
	dec := NewDecoder()
	for round := range 300 {
		var fields []map[string]any
		var gens []func() (any, string)
		for i := range 1 + rng.IntN(12) {
			f, g := randomColumn(rng)
			f["field"] = fmt.Sprintf("c%d", i)
			f["optional"] = true
			fields = append(fields, f)
			gens = append(gens, g)
		}
		after := map[string]any{}
		want := make([]string, len(fields))
		for i, g := range gens {
			if rng.IntN(8) == 0 {
				after[fmt.Sprintf("c%d", i)], want[i] = nil, "NULL"
				continue
			}
			v, text := g()
			after[fmt.Sprintf("c%d", i)], want[i] = v, text
		}
		e, err := dec.Decode(nil, envelope(fields, after, "u"))
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		for i := range fields {
			if got := valueText(e.Row[i]); got != want[i] {
				t.Fatalf("round %d column %d (%v): got %s, want %s", round, i, fields[i], got, want[i])
			}
		}
	}
}

// randomColumn is a random Connect field and a generator of its values:
// the JSON value and the text valueText must give for it.
func randomColumn(rng *rand.Rand) (map[string]any, func() (any, string)) {
	switch rng.IntN(12) {
	case 0:
		bits := []int{8, 16, 32, 64}[rng.IntN(4)]
		return map[string]any{"type": fmt.Sprintf("int%d", bits)}, func() (any, string) {
			n := int64(rng.Uint64()) >> (64 - bits)
			switch rng.IntN(10) {
			case 0:
				n = int64(uint64(1)<<(bits-1) - 1) // the largest
			case 1:
				n = -1 << (bits - 1) // the smallest
			}
			return n, fmt.Sprint(n)
		}
	case 1:
		return map[string]any{"type": "double"}, func() (any, string) {
			switch rng.IntN(6) {
			case 0:
				return "NaN", "NaN"
			case 1:
				return "-Infinity", "-Inf"
			}
			f := rng.NormFloat64() * math.Pow(10, float64(rng.IntN(40)-20))
			return f, fmt.Sprint(f)
		}
	case 2:
		return map[string]any{"type": "float"}, func() (any, string) {
			f := float32(rng.NormFloat64() * 1000)
			return f, fmt.Sprint(f)
		}
	case 3:
		return map[string]any{"type": "string"}, func() (any, string) {
			s := []string{"", "ä", "x\"y", "a,b", strings.Repeat("z", rng.IntN(40))}[rng.IntN(5)]
			return s, valueText(s)
		}
	case 4:
		return map[string]any{"type": "bytes"}, func() (any, string) {
			b := make([]byte, rng.IntN(12))
			for i := range b {
				b[i] = byte(rng.IntN(256))
			}
			return base64.StdEncoding.EncodeToString(b), valueText(b)
		}
	case 5:
		p := 1 + rng.IntN(38)
		s := rng.IntN(p + 1)
		return map[string]any{"type": "bytes", "name": connectDecimal, "parameters": map[string]string{"scale": fmt.Sprint(s), "connect.decimal.precision": fmt.Sprint(p)}},
			func() (any, string) {
				digits := 1 + rng.IntN(p)
				n := new(big.Int)
				for range digits {
					n.Mul(n, big.NewInt(10)).Add(n, big.NewInt(rng.Int64N(10)))
				}
				if rng.IntN(2) == 0 {
					n.Neg(n)
				}
				return base64.StdEncoding.EncodeToString(twosComplementBytes(n)), decimalString(n, s)
			}
	case 6:
		return map[string]any{"type": "int32", "name": dbzDate}, func() (any, string) {
			d := rng.IntN(800000) - 719162
			return d, time.Unix(int64(d)*86400, 0).UTC().Format(time.DateOnly)
		}
	case 7:
		return map[string]any{"type": "int64", "name": dbzMicroTimestamp}, func() (any, string) {
			us := rng.Int64N(1<<52) - 1<<51
			return us, time.UnixMicro(us).UTC().Format("2006-01-02 15:04:05.999999")
		}
	case 8:
		return map[string]any{"type": "string", "name": dbzZonedTimestamp}, func() (any, string) {
			us := rng.Int64N(1 << 50)
			tm := time.UnixMicro(us).In(time.FixedZone("", 3600*(rng.IntN(25)-12)))
			return tm.Format("2006-01-02T15:04:05.000000Z07:00"), tm.UTC().Format("2006-01-02T15:04:05.999999Z")
		}
	case 9:
		return map[string]any{"type": "int64", "name": dbzMicroTime}, func() (any, string) {
			us := rng.Int64N(86400 * 1e6)
			return us, fmt.Sprintf("%q", strings.TrimSuffix(time.UnixMicro(us).UTC().Format("15:04:05.999999"), "."))
		}
	case 10:
		return map[string]any{"type": "array", "items": map[string]any{"type": "string", "optional": true}}, func() (any, string) {
			items := []any{}
			var texts []string
			for range rng.IntN(4) {
				if rng.IntN(4) == 0 {
					items, texts = append(items, nil), append(texts, "NULL")
					continue
				}
				s := fmt.Sprint(rng.IntN(100))
				items, texts = append(items, s), append(texts, valueText(s))
			}
			return items, "[" + strings.Join(texts, ",") + "]"
		}
	}
	return map[string]any{"type": "boolean"}, func() (any, string) {
		b := rng.IntN(2) == 0
		return b, fmt.Sprint(b)
	}
}

// twosComplementBytes is n's shortest big-endian two's complement, as
// Java's BigInteger.toByteArray writes it.
func twosComplementBytes(n *big.Int) []byte {
	if n.Sign() >= 0 {
		b := n.Bytes()
		if len(b) == 0 || b[0]&0x80 != 0 {
			b = append([]byte{0}, b...)
		}
		return b
	}
	// -n = ~(n-1): the bytes of |n|-1, inverted.
	m := new(big.Int).Sub(new(big.Int).Neg(n), big.NewInt(1))
	b := m.Bytes()
	if len(b) == 0 || b[0]&0x80 != 0 {
		b = append([]byte{0}, b...)
	}
	for i := range b {
		b[i] = ^b[i]
	}
	return b
}

func decimalString(n *big.Int, scale int) string {
	s := new(big.Int).Abs(n).String()
	for len(s) <= scale {
		s = "0" + s
	}
	if scale > 0 {
		s = s[:len(s)-scale] + "." + s[len(s)-scale:]
	}
	if n.Sign() < 0 {
		s = "-" + s
	}
	return s
}

var _ = actions.TypeString
