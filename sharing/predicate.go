package sharing

import (
	"encoding/json"
	"strconv"

	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/expr"
	"github.com/lakelog/lakelog/reader"
)

// Hints are best effort (PROTOCOL.md): a hint that does not parse, names
// a column the table lacks or compares values of types that do not meet
// is dropped, never answered with an error, and a file is left out only
// when its partition values or statistics prove that no row satisfies
// the hints. The client applies its predicates to the rows itself.

// maxHintDepth bounds the nesting of a JSON predicate.
const maxHintDepth = 64

// hintFilter is the AND of the usable hints of a query: each SQL
// predicateHint that parses and binds to the snapshot's schema, and the
// jsonPredicateHints tree (its convertible part). It is nil when no hint
// is usable.
func hintFilter(snap *deltalog.Snapshot, sqlHints []string, jsonHint string) expr.Expr {
	var terms []expr.Expr
	usable := func(e expr.Expr) bool {
		_, err := reader.NewScan(snap, reader.WithFilter(e))
		return err == nil
	}
	for _, h := range sqlHints {
		if e, err := expr.Parse(h); err == nil && usable(e) {
			terms = append(terms, e)
		}
	}
	if jsonHint != "" {
		if e, ok := ParseJSONPredicate(jsonHint); ok {
			// A conjunct that does not bind is dropped alone.
			for _, c := range expr.Conjuncts(e) {
				if usable(c) {
					terms = append(terms, c)
				}
			}
		}
	}
	if len(terms) == 0 {
		return nil
	}
	return expr.And(terms...)
}

// jsonOp is one node of a JSON predicate (PROTOCOL.md "JSON predicates
// for Filtering").
type jsonOp struct {
	Op        string    `json:"op"`
	Children  []*jsonOp `json:"children"`
	Name      string    `json:"name"`
	Value     *string   `json:"value"`
	ValueType string    `json:"valueType"`
}

// ParseJSONPredicate converts a jsonPredicateHints string into an
// expression that every row the predicate selects satisfies (a weaker
// one where parts cannot be converted: an AND keeps its convertible
// children where it is not negated). ok is false when nothing usable
// remains or the JSON does not parse; it never panics on input.
func ParseJSONPredicate(s string) (e expr.Expr, ok bool) {
	var root jsonOp
	if err := json.Unmarshal([]byte(s), &root); err != nil {
		return nil, false
	}
	return convertJSON(&root, true, 0)
}

// convertJSON converts op. positive says op is not under a NOT: only
// then may an AND drop children it cannot convert (under a NOT a weaker
// child makes a stronger result, which could drop matching files).
func convertJSON(op *jsonOp, positive bool, depth int) (expr.Expr, bool) {
	if op == nil || depth > maxHintDepth {
		return nil, false
	}
	switch op.Op {
	case "and":
		if len(op.Children) < 2 {
			return nil, false
		}
		var kept []expr.Expr
		for _, c := range op.Children {
			e, ok := convertJSON(c, positive, depth+1)
			if !ok {
				if !positive {
					return nil, false
				}
				continue
			}
			kept = append(kept, e)
		}
		if len(kept) == 0 {
			return nil, false
		}
		return expr.And(kept...), true
	case "or":
		if len(op.Children) < 2 {
			return nil, false
		}
		var all []expr.Expr
		for _, c := range op.Children {
			e, ok := convertJSON(c, positive, depth+1)
			if !ok {
				return nil, false
			}
			all = append(all, e)
		}
		return expr.Or(all...), true
	case "not":
		if len(op.Children) != 1 {
			return nil, false
		}
		e, ok := convertJSON(op.Children[0], !positive, depth+1)
		if !ok {
			return nil, false
		}
		return expr.Not(e), true
	case "isNull":
		if len(op.Children) != 1 {
			return nil, false
		}
		x, ok := jsonLeaf(op.Children[0])
		if !ok {
			return nil, false
		}
		return &expr.IsNull{X: x}, true
	}
	cmp, ok := map[string]expr.CompareOp{
		"equal": expr.Eq, "lessThan": expr.Lt, "lessThanOrEqual": expr.Le,
		"greaterThan": expr.Gt, "greaterThanOrEqual": expr.Ge,
	}[op.Op]
	if !ok || len(op.Children) != 2 {
		return nil, false
	}
	l, ok1 := jsonLeaf(op.Children[0])
	r, ok2 := jsonLeaf(op.Children[1])
	if !ok1 || !ok2 {
		return nil, false
	}
	return &expr.Compare{Op: cmp, Left: l, Right: r}, true
}

// jsonLeaf converts a column or literal op. Literals take the Go type of
// their valueType; dates and timestamps stay text, which binding reads as
// the column's type.
func jsonLeaf(op *jsonOp) (expr.Expr, bool) {
	if op == nil || len(op.Children) != 0 {
		return nil, false
	}
	switch op.Op {
	case "column":
		if op.Name == "" {
			return nil, false
		}
		return expr.Col(op.Name), true
	case "literal":
		if op.Value == nil {
			return nil, false
		}
		v := *op.Value
		switch op.ValueType {
		case "bool":
			b, err := strconv.ParseBool(v)
			return expr.Lit(b), err == nil
		case "int":
			n, err := strconv.ParseInt(v, 10, 32)
			return expr.Lit(int32(n)), err == nil
		case "long":
			n, err := strconv.ParseInt(v, 10, 64)
			return expr.Lit(n), err == nil
		case "float":
			f, err := strconv.ParseFloat(v, 32)
			return expr.Lit(float32(f)), err == nil
		case "double":
			f, err := strconv.ParseFloat(v, 64)
			return expr.Lit(f), err == nil
		case "string", "date", "timestamp":
			return expr.Lit(v), true
		}
	}
	return nil, false
}
