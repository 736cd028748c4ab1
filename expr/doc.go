// Package expr holds predicates and scalar expressions over the Delta
// types: the --where predicates of the command line, the SET expressions
// of UPDATE, replaceWhere conditions and the read predicates that
// conflict detection checks.
//
// # Text form
//
// Parse reads the SQL-like text form (see Parse for the grammar):
//
//	a = 'x' AND (n > 3 OR d >= '2026-03-01') AND s IN ('a','b') AND x IS NOT NULL
//
// with comparisons (= <> != < <= > >= <=>), AND, OR, NOT, IN and NOT IN,
// BETWEEN, LIKE, IS [NOT] NULL, arithmetic (+ - * / % and unary minus),
// CAST, nested column references (a.b) and `backquoted` names, and
// literals: numbers, 'strings', TRUE, FALSE, NULL, X'hex', DATE '...',
// TIMESTAMP '...' and TIMESTAMP_NTZ '...'. Errors are *SyntaxError values
// that give the position of the offending token. Every Expr prints back
// (String) in a form Parse reads to the same String.
//
// Spark's built-in functions are calls: upper(s), date_add(d, 1),
// coalesce(a, b), regexp_extract(s, 'x(\d+)', 1), hash(a, b) and the
// rest of Functions, with CASE WHEN, TRY_CAST, EXTRACT, TRIM(BOTH ...
// FROM ...), INTERVAL literals (INTERVAL 1 DAY, INTERVAL '1-2' YEAR TO
// MONTH), date and timestamp arithmetic with them, and arrays, maps and
// structs (array(1, 2)[0], m['k'], named_struct('a', 1).a). One
// definition of each function serves both evaluators. Strings are
// Spark's: 'single' or "double" quotes, backslash escapes, r'raw'.
// CheckGenerationExpression decides what Delta allows in generated
// columns and CHECK constraints (deterministic functions of its list).
//
// Go code builds predicates without text, so values need no quoting:
// expr.And(expr.Col("region").Eq(name), expr.Col("total").Gt(1.0),
// expr.Col("day").In(d1, d2)); a value is a literal (Lit) unless it is an
// Expr. They print as the SQL above (total > 1.0D: doubles carry Spark's
// D suffix, so the text reads back as the same type).
//
// # Time zone
//
// Casts between strings, dates and timestamps, the fields of a
// timestamp (hour, date_format...) and TIMESTAMP literals without an
// offset use the session time zone that WithTimeZone sets (Spark's
// spark.sql.session.timeZone); without it, UTC.
//
// # Types
//
// A parsed expression is unbound. Bind resolves its columns against a
// table schema (case-insensitively, as Spark does) and types every node:
// a string literal meeting a column of another type is read as that type
// (dates, timestamps with zone-less text taken as UTC, decimals,
// numbers), numbers widen as in Spark, and mismatches are *TypeError
// values naming the expression. Bound and unbound expressions are
// accepted everywhere; an unbound one is bound where the types are known
// (a batch's schema, a row's values).
//
// # Semantics
//
// Evaluation follows Spark SQL with ANSI mode: three-valued logic (NULL
// is unknown; a filter keeps TRUE rows only), NaN equal to itself and
// greater than every other float, -0 equal to 0, strings compared by
// bytes, integer arithmetic that fails on overflow rather than wrapping,
// / that divides exactly (in double, or decimal for decimals), decimal
// results with Spark's precision and scale, and division by zero as an
// error. AND and OR skip their right side where the left decides.
//
// # Evaluation
//
//   - EvalPredicate and EvalScalar evaluate over Arrow record batches,
//     vectorised: each operator switches on its operand types once and
//     loops over typed values. Results are allocated from the given
//     allocator and must be released by the caller.
//   - EvalRow evaluates over one row of Go values (actions/values.go),
//     for partition values and small paths.
//   - A Pruner decides from a file's partition values and statistics
//     (min, max, null count, record count, keyed by physical column
//     names under column mapping) whether the file may hold a matching
//     row (MayMatch) and whether every row matches (AllMatch). Both are
//     conservative: missing or unusable statistics keep the file and
//     never prove that all rows match.
//
// For UPDATE, ParseAssignment reads "col = expr" and BindAssignment
// types the expression for its target column; EvalScalar computes the
// new values.
//
// Conjuncts, And, Or, Columns and IsPartitionOnly take expressions apart
// and put them together, for replaceWhere and conflict detection.
//
// Expressions are immutable and safe to share between goroutines.
package expr
