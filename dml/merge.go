package dml

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"strings"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/expr"
	"github.com/lakelog/lakelog/internal/arrowbatch"
)

// ClauseKind is what a MERGE clause does.
type ClauseKind uint8

// The kinds of MERGE clauses.
const (
	MatchedUpdate ClauseKind = iota + 1
	MatchedDelete
	NotMatchedInsert
	NotMatchedBySourceUpdate
	NotMatchedBySourceDelete
)

func (k ClauseKind) String() string {
	switch k {
	case MatchedUpdate:
		return "WHEN MATCHED THEN UPDATE"
	case MatchedDelete:
		return "WHEN MATCHED THEN DELETE"
	case NotMatchedInsert:
		return "WHEN NOT MATCHED THEN INSERT"
	case NotMatchedBySourceUpdate:
		return "WHEN NOT MATCHED BY SOURCE THEN UPDATE"
	case NotMatchedBySourceDelete:
		return "WHEN NOT MATCHED BY SOURCE THEN DELETE"
	}
	return fmt.Sprintf("clause kind %d", uint8(k))
}

// Clause is one WHEN clause of a MERGE. Build it with the When...
// functions.
type Clause struct {
	Kind ClauseKind
	// Condition is the clause's AND condition; nil for none.
	Condition expr.Expr
	// Set are UPDATE's assignments, or INSERT's column values; with All
	// (UPDATE SET *, INSERT *) every target column takes the source column
	// of the same name.
	Set []*expr.Assignment
	All bool
}

// WhenMatchedUpdate is WHEN MATCHED [AND cond] THEN UPDATE SET set...
func WhenMatchedUpdate(cond expr.Expr, set ...*expr.Assignment) Clause {
	return Clause{Kind: MatchedUpdate, Condition: cond, Set: set}
}

// WhenMatchedUpdateAll is WHEN MATCHED [AND cond] THEN UPDATE SET *.
func WhenMatchedUpdateAll(cond expr.Expr) Clause {
	return Clause{Kind: MatchedUpdate, Condition: cond, All: true}
}

// WhenMatchedDelete is WHEN MATCHED [AND cond] THEN DELETE.
func WhenMatchedDelete(cond expr.Expr) Clause { return Clause{Kind: MatchedDelete, Condition: cond} }

// WhenNotMatchedInsert is WHEN NOT MATCHED [AND cond] THEN INSERT, with a
// value for some target columns (the others are NULL).
func WhenNotMatchedInsert(cond expr.Expr, values ...*expr.Assignment) Clause {
	return Clause{Kind: NotMatchedInsert, Condition: cond, Set: values}
}

// WhenNotMatchedInsertAll is WHEN NOT MATCHED [AND cond] THEN INSERT *.
func WhenNotMatchedInsertAll(cond expr.Expr) Clause {
	return Clause{Kind: NotMatchedInsert, Condition: cond, All: true}
}

// WhenNotMatchedBySourceUpdate is WHEN NOT MATCHED BY SOURCE [AND cond]
// THEN UPDATE SET set...
func WhenNotMatchedBySourceUpdate(cond expr.Expr, set ...*expr.Assignment) Clause {
	return Clause{Kind: NotMatchedBySourceUpdate, Condition: cond, Set: set}
}

// WhenNotMatchedBySourceDelete is WHEN NOT MATCHED BY SOURCE [AND cond]
// THEN DELETE.
func WhenNotMatchedBySourceDelete(cond expr.Expr) Clause {
	return Clause{Kind: NotMatchedBySourceDelete, Condition: cond}
}

// ErrDuplicateMatch is returned (wrapped) by Merge when a target row is
// matched by more than one source row and a WHEN MATCHED clause could
// change it: which source row should win is undefined, so Spark refuses
// the MERGE, and so does lakelog. Nothing is committed.
var ErrDuplicateMatch = errors.New("a target row matched more than one source row")

// WithAliases names the target and the source in MERGE's expressions
// (default "target" and "source"). A column name without a qualifier is
// looked up in both and must be in exactly one.
func WithAliases(target, source string) Option {
	return func(c *config) { c.targetAlias, c.sourceAlias = target, source }
}

// merge is one MERGE in progress. Its phases have a file each: the source
// read into memory and indexed by its join keys (merge_source.go), ON and
// the clauses bound (merge_bind.go), the target files planned under the
// source's keys (merge_filter.go), target rows joined with source rows and
// each row's clause decided (merge_join.go), the rows written computed
// (merge_values.go); the rewrite and the commit are the shared job's
// (rewrite.go).
type merge struct {
	*job
	tAlias, sAlias string

	// The source (merge_source.go): all of it, and its key index: the
	// first source row of each key and the next row of the same key.
	src       arrow.RecordBatch
	srcSchema *actions.StructType
	first     map[string]int32
	firstI    map[int64]int32
	next      []int32

	// table is the schema the MERGE writes: the target's, or with schema
	// evolution the target's and the source's new columns.
	table *actions.StructType

	// The bound statement (merge_bind.go).
	joined     *actions.StructType // {target: ..., source: ...}
	keys       []mergeKey
	residual   expr.Expr // the rest of ON, bound; nil when none
	clauses    []*boundClause
	hasMatched bool
	hasNMBS    bool

	// The join (merge_join.go): source rows that matched a target row,
	// for the NOT MATCHED clauses (merge_values.go).
	mmu     sync.Mutex
	matched []bool
}

// Merge applies source to the table: Spark's MERGE INTO target USING
// source ON on WHEN ... . Source rows are joined to target rows on the ON
// condition, which must hold at least one equality between a target
// column and a source expression (the hash join keys; the rest of ON is
// checked on each candidate pair). Clauses are tried in order within each
// kind and the first whose condition holds acts, as in SQL:
//
//   - WHEN MATCHED: a target row matched by a source row is updated or
//     deleted. A target row matched by two source rows is an error, as in
//     Spark, and nothing is committed.
//   - WHEN NOT MATCHED: a source row that matched no target row is
//     inserted.
//   - WHEN NOT MATCHED BY SOURCE: a target row no source row matched is
//     updated or deleted.
//
// Only target files that can hold a match are read: without NOT MATCHED
// BY SOURCE clauses, files are pruned by partition values and stats under
// the source's join keys (their values when few, else their range), and
// that predicate and those files are the transaction's read set, so a
// MERGE into one partition rebases over appends to others. Touched files
// are rewritten, or (deletion vectors enabled) their changed rows marked
// deleted and the new versions written; change data is written when the
// table asks for it.
func Merge(ctx context.Context, snap *deltalog.Snapshot, source iter.Seq2[arrow.RecordBatch, error], on expr.Expr, clauses []Clause, opts ...Option) (*Result, error) {
	if snap == nil {
		return nil, fmt.Errorf("dml: %w", deltalog.ErrNoSnapshot)
	}
	// Decide by what the MERGE can commit: one that only inserts removes
	// nothing, and is allowed where an append is (delta.appendOnly), as
	// in Spark.
	op := deltalog.OpAppend
	for _, c := range clauses {
		if c.Kind != NotMatchedInsert {
			op = deltalog.OpMerge
		}
	}
	if err := snap.Supports(op); err != nil {
		return nil, fmt.Errorf("dml: %w", err)
	}
	if on == nil {
		return nil, fmt.Errorf("dml: MERGE needs an ON condition")
	}
	if len(clauses) == 0 {
		return nil, fmt.Errorf("dml: MERGE needs at least one WHEN clause")
	}
	cfg, err := newConfig(opts)
	if err != nil {
		return nil, err
	}
	m := &merge{job: newJob(ctx, snap, cfg, opMerge), tAlias: cfg.targetAlias, sAlias: cfg.sourceAlias}
	if res, err := m.tx.Start(); err != nil {
		return nil, fmt.Errorf("dml: %w", err)
	} else if res != nil {
		return &Result{CommitResult: res}, nil
	}
	if m.tAlias == "" {
		m.tAlias = "target"
	}
	if m.sAlias == "" {
		m.sAlias = "source"
	}
	if strings.EqualFold(m.tAlias, m.sAlias) {
		return nil, fmt.Errorf("dml: MERGE: the target and the source have the same alias %q", m.tAlias)
	}
	if err := m.readSource(source); err != nil {
		return nil, err
	}
	defer m.src.Release()
	m.table = snap.Schema()
	if cfg.evolve {
		if err := m.evolve(clauses); err != nil {
			return nil, err
		}
	}
	if err := m.bind(on, clauses); err != nil {
		return nil, fmt.Errorf("dml: MERGE: %w", err)
	}
	keys, err := m.sourceKeys()
	if err != nil {
		return nil, err
	}
	m.indexSource(keys)
	targets, err := m.planTargets(keys)
	arrowbatch.Release(keys)
	if err != nil {
		return nil, err
	}
	m.update = m.updateRows
	m.inserts = m.insertRows
	return m.rewrite(targets, m.params(on))
}

// params are MERGE's operationParameters, as Spark records them.
func (m *merge) params(on expr.Expr) map[string]any {
	type pred struct {
		Predicate  string `json:"predicate,omitempty"`
		ActionType string `json:"actionType"`
	}
	var matched, notMatched, nmbs []pred
	for _, c := range m.clauses {
		p := pred{}
		if c.Condition != nil {
			p.Predicate = c.Condition.String()
		}
		switch c.Kind {
		case MatchedUpdate:
			p.ActionType = "update"
			matched = append(matched, p)
		case MatchedDelete:
			p.ActionType = "delete"
			matched = append(matched, p)
		case NotMatchedInsert:
			p.ActionType = "insert"
			notMatched = append(notMatched, p)
		case NotMatchedBySourceUpdate:
			p.ActionType = "update"
			nmbs = append(nmbs, p)
		case NotMatchedBySourceDelete:
			p.ActionType = "delete"
			nmbs = append(nmbs, p)
		}
	}
	orEmpty := func(p []pred) string {
		if p == nil {
			return "[]"
		}
		return jsonText(p)
	}
	return map[string]any{
		"predicate":                    jsonText(on.String()),
		"matchedPredicates":            orEmpty(matched),
		"notMatchedPredicates":         orEmpty(notMatched),
		"notMatchedBySourcePredicates": orEmpty(nmbs),
	}
}
