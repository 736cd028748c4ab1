package model

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/conflict"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/reader"
)

// model is the in-memory table the log is checked against: every file
// ever committed with its rows and the versions it lived in, and every
// app's txn versions.
type model struct {
	seed     uint64
	store    objstore.Store
	files    map[string]*mfile // canonical path -> file
	order    []*mfile          // in the order they were added
	txns     map[string][]txnAt
	versions []*mversion // by version
	ops      map[string]*opRecord
	ids      map[int64]string // every row id ever written -> the op that made it
	at       map[string]int64 // op id -> the version it committed at
	alter    string           // the op of the latest metadata change
	errs     []string
}

// mfile is a data file as the model knows it.
type mfile struct {
	path       string
	part       string
	rows       []row
	minV       int64
	minID      int64
	maxID      int64
	added      int64
	removed    int64 // math.MaxInt64 while live
	dataChange bool
}

func (f *mfile) liveAt(v int64) bool { return f.added <= v && v < f.removed }

type txnAt struct{ version, txn int64 }

// mversion is one committed version as the rules see it.
type mversion struct {
	v         int64
	op        *opRecord
	blind     bool // commitInfo.isBlindAppend, as written
	adds      []*mfile
	removes   []string
	txns      []actions.Txn
	protocol  bool
	metadata  bool
	operation string
}

// expectation is what an operation, run on the model's table at its read
// version, reads and writes.
type expectation struct {
	operation  string
	readAll    bool
	preds      []mpred
	readFiles  map[string]bool
	removes    map[string]bool
	rows       []row
	dataChange bool
	blind      bool
	appID      string
	appVersion int64
	noop       bool
	metadata   bool // it changes the table's metadata
}

// mpred is a read predicate: p = part [AND v < below] [AND id IN ids].
type mpred struct {
	part  string
	below *int64
	ids   []int64
}

// mayHold reports whether file f may hold a row of p, by its partition and
// min/max statistics, as lakelog's planning and conflict checker see it.
func (p mpred) mayHold(f *mfile) bool {
	if f.part != p.part || p.below != nil && f.minV >= *p.below {
		return false
	}
	if p.ids == nil {
		return true
	}
	for _, id := range p.ids {
		if f.minID <= id && id <= f.maxID {
			return true
		}
	}
	return false
}

func newModel(seed uint64, st objstore.Store) *model {
	return &model{
		seed: seed, store: st,
		files: map[string]*mfile{}, txns: map[string][]txnAt{},
		ops: map[string]*opRecord{}, ids: map[int64]string{}, at: map[string]int64{},
	}
}

func (m *model) errorf(format string, args ...any) {
	m.errs = append(m.errs, fmt.Sprintf(format, args...))
}

// verify replays the log against the journal and returns a summary and
// everything that disagrees.
func (m *model) verify(ctx context.Context, journal []*opRecord) (string, []string) {
	for _, op := range journal {
		if _, dup := m.ops[op.ID]; dup {
			m.errorf("op %s journalled twice", op.ID)
		}
		m.ops[op.ID] = op
	}
	final, err := deltalog.Open(ctx, m.store, "")
	if err != nil {
		m.errorf("open the table: %v", err)
		return "", m.errs
	}
	latest := final.Version()
	m.versions = make([]*mversion, latest+1)
	m.versions[0] = &mversion{v: 0, protocol: true, metadata: true, operation: "CREATE TABLE"}
	for v := int64(1); v <= latest; v++ {
		if err := m.replay(ctx, v); err != nil {
			m.errorf("version %d: %v", v, err)
			return "", m.errs
		}
	}
	for _, op := range journal {
		m.judge(ctx, op, latest)
	}
	m.checkScans(ctx, final)
	return m.summary(journal, latest), m.errs
}

// replay checks version v against the operation that committed it and
// applies it to the model.
func (m *model) replay(ctx context.Context, v int64) error {
	body, err := m.store.Get(ctx, deltalog.LogDir+deltalog.CommitName(v))
	if err != nil {
		return err
	}
	acts, err := actions.ParseCommit(strings.NewReader(string(body)))
	if err != nil {
		return err
	}
	mv := &mversion{v: v}
	m.versions[v] = mv
	var info *actions.CommitInfo
	var adds []*actions.Add
	var removes []*actions.Remove
	for _, a := range acts {
		switch {
		case a.CommitInfo != nil:
			info = a.CommitInfo
		case a.Protocol != nil:
			mv.protocol = true
		case a.Metadata != nil:
			mv.metadata = true
		case a.Add != nil:
			adds = append(adds, a.Add)
		case a.Remove != nil:
			removes = append(removes, a.Remove)
			mv.removes = append(mv.removes, actions.CanonicalPath(a.Remove.Path))
		case a.Txn != nil:
			mv.txns = append(mv.txns, *a.Txn)
		}
	}
	if info == nil {
		return fmt.Errorf("no commitInfo")
	}
	mv.operation = info.Operation
	mv.blind = info.IsBlindAppend != nil && *info.IsBlindAppend
	id, _ := info.OperationParameters["modelOp"].(string)
	op := m.ops[id]
	if op == nil {
		return fmt.Errorf("committed by no operation of the journal (modelOp %q, operation %s)", id, info.Operation)
	}
	mv.op = op
	if prev, twice := m.at[op.ID]; twice {
		m.errorf("version %d: op %s is committed twice: versions %d and %d", v, op.ID, prev, v)
	}
	m.at[op.ID] = v
	switch {
	case op.Outcome == outCommitted:
		if op.Version != v {
			m.errorf("version %d: op %s reports version %d but committed at %d", v, op.ID, op.Version, v)
		}
		if op.TxnID != info.TxnID {
			m.errorf("version %d: op %s reports txnId %s, the log has %s", v, op.ID, op.TxnID, info.TxnID)
		}
		// One create per version tried; a loser skips the versions it
		// finds taken when it catches up, so there may be fewer.
		if op.Attempts < 1 || op.Attempts > int(v-op.ReadVersion) {
			m.errorf("version %d: op %s read version %d and reports %d attempts, want 1..%d", v, op.ID, op.ReadVersion, op.Attempts, v-op.ReadVersion)
		}
	case op.Outcome == outPending && op.Fault == faultCrashAfter:
	case op.Outcome == outUnknown && op.Fault == faultLostAll:
		// The create happened, or a winner's did and the reply was lost.
	default:
		m.errorf("version %d: op %s (%s, fault %q) ended %s but its commit is in the log", v, op.ID, op.Kind, op.Fault, op.Outcome)
	}
	if info.ReadVersion == nil || *info.ReadVersion != op.ReadVersion {
		m.errorf("version %d: op %s: commitInfo.readVersion %v, the op read %d", v, op.ID, info.ReadVersion, op.ReadVersion)
	}
	if info.IsolationLevel != op.Isolation {
		m.errorf("version %d: op %s: commitInfo.isolationLevel %q, the op asked for %q", v, op.ID, info.IsolationLevel, op.Isolation)
	}

	e := m.expect(op)
	if e.noop {
		m.errorf("version %d: op %s committed though the model has nothing for it to do", v, op.ID)
	}
	if info.Operation != e.operation {
		m.errorf("version %d: op %s: operation %q, want %q", v, op.ID, info.Operation, e.operation)
	}
	if mv.metadata != e.metadata || mv.protocol {
		m.errorf("version %d: op %s (%s): metadata change %v, protocol change %v; want metadata change %v and no protocol change", v, op.ID, op.Kind, mv.metadata, mv.protocol, e.metadata)
	}
	if mv.metadata && op.Kind == opAlter {
		m.alter = op.ID
	}
	if mv.blind != e.blind {
		m.errorf("version %d: op %s (%s): commitInfo.isBlindAppend %v, want %v", v, op.ID, op.Kind, mv.blind, e.blind)
	}
	// It may rebase over every winner since its read, and must not have
	// been applied already.
	if e.appID != "" && m.txnAt(e.appID, op.ReadVersion) >= e.appVersion {
		m.errorf("version %d: op %s committed app %s version %d, which its read version %d already held", v, op.ID, e.appID, e.appVersion, op.ReadVersion)
	}
	for w := op.ReadVersion + 1; w < v; w++ {
		if r := m.rule(op, e, m.versions[w]); r != "" {
			m.errorf("version %d: op %s (%s, read version %d) rebased over version %d (%s by %s), where the model says %s",
				v, op.ID, op.Kind, op.ReadVersion, w, m.versions[w].operation, m.versions[w].op.ID, r)
		}
	}

	// Removes: exactly the expected files, each live until now.
	gotRemoves := map[string]bool{}
	for _, r := range removes {
		p := actions.CanonicalPath(r.Path)
		gotRemoves[p] = true
		if r.DataChange != e.dataChange {
			m.errorf("version %d: op %s: remove %s has dataChange %v, want %v", v, op.ID, p, r.DataChange, e.dataChange)
		}
		f := m.files[p]
		switch {
		case f == nil:
			m.errorf("version %d: op %s removes %s, which was never added", v, op.ID, p)
		case !f.liveAt(v - 1):
			m.errorf("version %d: op %s removes %s, which version %d already removed (a lost update)", v, op.ID, p, f.removed)
		default:
			f.removed = v
		}
	}
	if !maps.Equal(gotRemoves, e.removes) {
		m.errorf("version %d: op %s (%s): removes %v, the model expects %v", v, op.ID, op.Kind, sortedKeys(gotRemoves), sortedKeys(e.removes))
	}

	// Adds: one file per partition written, holding exactly its rows.
	want := map[string][]row{}
	for _, r := range e.rows {
		want[r.P] = append(want[r.P], r)
	}
	seen := map[string]bool{}
	for _, a := range adds {
		p := actions.CanonicalPath(a.Path)
		part := ""
		if pv := a.PartitionValues["p"]; pv != nil {
			part = *pv
		}
		if a.DataChange != e.dataChange {
			m.errorf("version %d: op %s: add %s has dataChange %v, want %v", v, op.ID, p, a.DataChange, e.dataChange)
		}
		if m.files[p] != nil {
			m.errorf("version %d: op %s adds %s, which version %d added already", v, op.ID, p, m.files[p].added)
			continue
		}
		if seen[part] {
			m.errorf("version %d: op %s adds two files in partition %s; the model expects one", v, op.ID, part)
		}
		seen[part] = true
		rows := want[part]
		if err := checkStats(a, rows); err != nil {
			m.errorf("version %d: op %s: add %s: %v", v, op.ID, p, err)
		}
		f := &mfile{path: p, part: part, rows: rows, added: v, removed: math.MaxInt64, dataChange: a.DataChange, minV: minV(rows)}
		f.minID, f.maxID = idRange(rows)
		m.files[p] = f
		m.order = append(m.order, f)
		mv.adds = append(mv.adds, f)
	}
	for part, rows := range want {
		if !seen[part] && len(rows) > 0 {
			m.errorf("version %d: op %s adds no file in partition %s; the model expects %d rows there", v, op.ID, part, len(rows))
		}
	}
	for _, r := range e.rows {
		if _, known := m.ids[r.ID]; !known {
			m.ids[r.ID] = op.ID
		}
	}

	// Its app transaction, and nothing else.
	var wantTxns []actions.Txn
	if e.appID != "" {
		wantTxns = []actions.Txn{{AppID: e.appID, Version: e.appVersion}}
	}
	if len(mv.txns) != len(wantTxns) || (len(wantTxns) == 1 && (mv.txns[0].AppID != e.appID || mv.txns[0].Version != e.appVersion)) {
		m.errorf("version %d: op %s: txn actions %v, want %v", v, op.ID, mv.txns, wantTxns)
	}
	for _, t := range mv.txns {
		m.txns[t.AppID] = append(m.txns[t.AppID], txnAt{v, t.Version})
	}
	return nil
}

// checkStats compares an add's statistics with the rows the model puts
// in it.
func checkStats(a *actions.Add, rows []row) error {
	st, err := actions.ParseStats(a.Stats)
	if err != nil || st == nil {
		return fmt.Errorf("stats %q: %v", a.Stats, err)
	}
	if st.NumRecords != int64(len(rows)) {
		return fmt.Errorf("numRecords %d, the model has %d rows", st.NumRecords, len(rows))
	}
	if len(rows) == 0 {
		return nil
	}
	lo, hi := rows[0].V, rows[0].V
	for _, r := range rows {
		lo, hi = min(lo, r.V), max(hi, r.V)
	}
	if got := fmt.Sprint(st.MinValues["v"]); got != fmt.Sprint(lo) {
		return fmt.Errorf("min v %s, the model has %d", got, lo)
	}
	if got := fmt.Sprint(st.MaxValues["v"]); got != fmt.Sprint(hi) {
		return fmt.Errorf("max v %s, the model has %d", got, hi)
	}
	return nil
}

func idRange(rows []row) (lo, hi int64) {
	lo, hi = math.MaxInt64, math.MinInt64
	for _, r := range rows {
		lo, hi = min(lo, r.ID), max(hi, r.ID)
	}
	return lo, hi
}

func minV(rows []row) int64 {
	lo := int64(math.MaxInt64)
	for _, r := range rows {
		lo = min(lo, r.V)
	}
	return lo
}

// liveAt is the model's table at version v.
func (m *model) liveAt(v int64) []*mfile {
	var out []*mfile
	for _, f := range m.order {
		if f.liveAt(v) {
			out = append(out, f)
		}
	}
	return out
}

// txnAt is app's txn version as of version v (-1: none).
func (m *model) txnAt(app string, v int64) int64 {
	hist := m.txns[app]
	for i := len(hist) - 1; i >= 0; i-- {
		if hist[i].version <= v {
			return hist[i].txn
		}
	}
	return -1
}

// expect runs op on the model's table at its read version.
func (m *model) expect(op *opRecord) *expectation {
	R := op.ReadVersion
	live := m.liveAt(R)
	e := &expectation{readFiles: map[string]bool{}, removes: map[string]bool{}, dataChange: true, appID: op.AppID, appVersion: op.AppVersion}
	inPart := func(f *mfile) bool { return f.part == op.Part }
	read := func(keep func(*mfile) bool) []*mfile {
		var out []*mfile
		for _, f := range live {
			if keep(f) {
				out = append(out, f)
				e.readFiles[f.path] = true
			}
		}
		return out
	}
	switch op.Kind {
	case opAppend:
		e.operation, e.blind, e.rows = "WRITE", true, op.Rows
	case opOverwrite:
		e.operation, e.readAll, e.rows = "WRITE", true, op.Rows
		for _, f := range read(func(*mfile) bool { return true }) {
			e.removes[f.path] = true
		}
	case opReplaceWhere:
		// writer.ReplaceWhere reads under its predicate (as Spark), not
		// the whole table.
		e.operation, e.rows = "WRITE", op.Rows
		e.preds = []mpred{{part: op.Part}}
		for _, f := range read(inPart) {
			e.removes[f.path] = true
		}
		for _, r := range op.Rows {
			if r.P != op.Part {
				m.errorf("op %s: replaceWhere p = '%s' writes a row of partition %s", op.ID, op.Part, r.P)
			}
		}
	case opDelete, opUpdate:
		k := op.K
		e.operation = "DELETE"
		if op.Kind == opUpdate {
			e.operation = "UPDATE"
		}
		e.preds = []mpred{{part: op.Part, below: &k}}
		for _, f := range read(func(f *mfile) bool { return inPart(f) && f.minV < k }) {
			e.removes[f.path] = true
			for _, r := range f.rows {
				switch {
				case op.Kind == opUpdate && r.V < k:
					r.V += 500
					e.rows = append(e.rows, r)
				case op.Kind == opUpdate || r.V >= k:
					e.rows = append(e.rows, r)
				}
			}
		}
		// dml commits nothing when no row matches.
		e.noop = len(e.removes) == 0
	case opMerge:
		e.operation = "MERGE"
		// dml's MERGE reads the files that may hold the source's keys.
		pred := mpred{part: op.Part}
		src := map[int64]row{}
		for _, s := range op.Source {
			src[s.ID] = s
			pred.ids = append(pred.ids, s.ID)
		}
		e.preds = []mpred{pred}
		matched := map[int64]bool{}
		for _, f := range read(pred.mayHold) {
			if !slices.ContainsFunc(f.rows, func(r row) bool { _, ok := src[r.ID]; return ok }) {
				continue
			}
			e.removes[f.path] = true
			for _, r := range f.rows {
				if s, ok := src[r.ID]; ok {
					r.V, matched[r.ID] = s.V, true
				}
				e.rows = append(e.rows, r)
			}
		}
		for _, s := range op.Source {
			if !matched[s.ID] {
				if by, known := m.ids[s.ID]; known && by != op.ID {
					m.errorf("op %s: MERGE inserts id %d, which op %s wrote and the read version %d no longer holds in partition %s", op.ID, s.ID, by, R, op.Part)
				}
				e.rows = append(e.rows, s)
			}
		}
	case opOptimize:
		e.operation, e.dataChange = "OPTIMIZE", false
		e.preds = []mpred{{part: op.Part}}
		files := read(inPart)
		if len(files) < 2 {
			e.noop = true
		}
		for _, f := range files {
			e.removes[f.path] = true
			e.rows = append(e.rows, f.rows...)
		}
	case opAlter:
		// Only a metaData action: as in Spark, that is a blind append.
		e.operation, e.metadata, e.blind = "SET TBLPROPERTIES", true, true
	case opSchema:
		// A schema change: only a metaData action too.
		e.operation, e.metadata, e.blind = op.SchemaOp, true, true
	default:
		m.errorf("op %s: unknown kind %q", op.ID, op.Kind)
	}
	return e
}

// isolation is the level the checker applies to op: its own, lowered to
// SnapshotIsolation when it changes no data (Spark's
// canDowngradeToSnapshotIsolation): only dataChange=false file actions, or
// nothing at all at Serializable.
func isolation(op *opRecord, e *expectation) conflict.Isolation {
	iso := conflict.Isolation(op.Isolation)
	if e.metadata {
		return iso
	}
	if len(e.removes) == 0 && len(e.rows) == 0 && e.appID == "" {
		if iso == conflict.Serializable {
			return conflict.SnapshotIsolation
		}
		return iso
	}
	if !e.dataChange {
		return conflict.SnapshotIsolation
	}
	return iso
}

// mayRead: whether op's read may include file f.
func (e *expectation) mayRead(f *mfile) bool {
	if e.readAll || len(e.preds) == 0 {
		return true
	}
	for _, p := range e.preds {
		if p.mayHold(f) {
			return true
		}
	}
	return false
}

// rule is what the conflict rules (conflict/doc.go, Spark's order) say
// of op, which read the table as e says, meeting winner w: "" to rebase,
// "applied" when w holds op's app version, else the conflict's kind.
func (m *model) rule(op *opRecord, e *expectation, w *mversion) string {
	if e.appID != "" {
		for _, t := range w.txns {
			if t.AppID == e.appID && t.Version >= e.appVersion {
				return "applied"
			}
		}
	}
	switch {
	case w.protocol:
		return "ProtocolChanged"
	case w.metadata:
		return "MetadataChanged"
	}
	if e.appID != "" {
		for _, t := range w.txns {
			if t.AppID == e.appID {
				return "ConcurrentTransaction"
			}
		}
	}
	reads := e.readAll || len(e.preds) > 0 || len(e.readFiles) > 0
	iso := isolation(op, e)
	counted := iso == conflict.Serializable || (iso == conflict.WriteSerializable && !w.blind)
	if reads && counted {
		for _, f := range w.adds {
			if e.mayRead(f) {
				return "ConcurrentAppend"
			}
		}
	}
	for _, p := range w.removes {
		if e.readAll || e.readFiles[p] {
			return "ConcurrentDeleteRead"
		}
	}
	for _, p := range w.removes {
		if e.removes[p] {
			return "ConcurrentDeleteDelete"
		}
	}
	return ""
}

// judge checks an operation's outcome against the replayed log.
func (m *model) judge(ctx context.Context, op *opRecord, latest int64) {
	R := op.ReadVersion
	e := m.expect(op)
	m.checkDeclared(op, e)
	v, inLog := m.at[op.ID]
	if op.CorruptOpens > 0 {
		m.errorf("op %s: %d opens of the table failed with ErrLogCorrupt while others committed (see TestOpenWithListingThatMissesACommit): %s", op.ID, op.CorruptOpens, op.CorruptErr)
	}
	switch op.Outcome {
	case outCommitted:
		if !inLog {
			m.errorf("op %s reports a commit at version %d, which is not its (a lost commit)", op.ID, op.Version)
		}
	case outPending:
		switch op.Fault {
		case faultCrashAfter:
			if !inLog {
				m.errorf("op %s committed and then crashed, but no version is its", op.ID)
			}
		case faultCrash:
			m.checkOrphans(ctx, op)
		default:
			m.errorf("op %s (%s, fault %q): its process died during the commit", op.ID, op.Kind, op.Fault)
		}
	case outCrashed:
		m.checkOrphans(ctx, op)
	case outUnknown:
		switch {
		case op.Fault == faultFailCreateAll && inLog:
			m.errorf("op %s: every create failed before it was made, yet version %d is its", op.ID, v)
		case op.Fault != faultFailCreateAll && op.Fault != faultLostAll:
			m.errorf("op %s (fault %q): commit outcome unknown: %s", op.ID, op.Fault, op.Err)
		}
	case outNoop:
		if !e.noop {
			m.errorf("op %s (%s of partition %s at version %d) did nothing; the model has %d files to compact", op.ID, op.Kind, op.Part, R, len(e.readFiles))
		}
	case outApplied:
		X := op.Version
		held := e.appID != "" && m.txnAt(e.appID, R) >= e.appVersion
		switch {
		case e.appID == "":
			m.errorf("op %s has no app transaction but reports already applied", op.ID)
		case X == R:
			if !held {
				m.errorf("op %s: already applied at its read version %d, where app %s has version %d < %d", op.ID, R, e.appID, m.txnAt(e.appID, R), e.appVersion)
			}
		case X < R || X > latest:
			m.errorf("op %s: already applied by version %d, outside (%d, %d]", op.ID, X, R, latest)
		default:
			if held {
				m.errorf("op %s: read version %d already held app %s version %d, yet it went on to version %d", op.ID, R, e.appID, e.appVersion, X)
			}
			m.checkWinners(op, e, X, "applied")
		}
	case outConflict:
		W := op.WinningVersion
		switch {
		case op.ConflictKind == "":
			m.errorf("op %s: a *conflict.Error of no known kind: %s", op.ID, op.Err)
		case W <= R || W > latest:
			m.errorf("op %s: conflict with version %d, outside (%d, %d]: %s", op.ID, W, R, latest, op.Err)
		case e.appID != "" && m.txnAt(e.appID, R) >= e.appVersion:
			m.errorf("op %s: aborted (%s) though its read version %d already held its app version", op.ID, op.ConflictKind, R)
		default:
			m.checkWinners(op, e, W, op.ConflictKind)
		}
	default:
		m.errorf("op %s (%s, fault %q, read version %d): %s: %s", op.ID, op.Kind, op.Fault, R, op.Outcome, op.Err)
	}
}

// checkWinners: op met winners R+1..at-1 and rebased over each, then met
// at and ended with want.
func (m *model) checkWinners(op *opRecord, e *expectation, at int64, want string) {
	for w := op.ReadVersion + 1; w < at; w++ {
		if r := m.rule(op, e, m.versions[w]); r != "" {
			m.errorf("op %s (%s, read version %d) ended %s at version %d, but the model says %s already at version %d (%s by %s)",
				op.ID, op.Kind, op.ReadVersion, want, at, r, w, m.versions[w].operation, m.versions[w].op.ID)
			return
		}
	}
	if r := m.rule(op, e, m.versions[at]); r != want {
		if r == "" {
			r = "rebase"
		}
		w := m.versions[at]
		m.errorf("op %s (%s p=%s k=%d, %s, read version %d) ended %s at version %d (%s by %s), the model says %s: %s",
			op.ID, op.Kind, op.Part, op.K, op.Isolation, op.ReadVersion, want, at, w.operation, w.op.ID, r, op.Err)
	}
}

// checkDeclared compares what the op read and wrote (its journal) with
// what the model says it should have: a difference is a planning, reading
// or writing bug, or a model bug.
func (m *model) checkDeclared(op *opRecord, e *expectation) {
	if op.Outcome == outError {
		return
	}
	if got := setOf(op.ReadFiles); !maps.Equal(got, e.readFiles) {
		m.errorf("op %s (%s p=%s k=%d at version %d) read files %v, the model expects %v", op.ID, op.Kind, op.Part, op.K, op.ReadVersion, sortedKeys(got), sortedKeys(e.readFiles))
	}
	if op.Kind == opAppend || op.Outcome == outNoop {
		return
	}
	if got := setOf(op.Removes); !maps.Equal(got, e.removes) {
		m.errorf("op %s (%s p=%s at version %d) removes %v, the model expects %v", op.ID, op.Kind, op.Part, op.ReadVersion, sortedKeys(got), sortedKeys(e.removes))
	}
	if !slices.Equal(sortRows(op.Rows), sortRows(e.rows)) {
		m.errorf("op %s (%s p=%s k=%d at version %d) writes rows %v, the model expects %v", op.ID, op.Kind, op.Part, op.K, op.ReadVersion, sortRows(op.Rows), sortRows(e.rows))
	}
}

// checkOrphans: a crashed op's data files were written (the crash came
// after them) and are in no version.
func (m *model) checkOrphans(ctx context.Context, op *opRecord) {
	for _, p := range op.Written {
		if f := m.files[p]; f != nil {
			m.errorf("op %s crashed before its commit, yet version %d adds its file %s", op.ID, f.added, p)
		}
		if _, err := m.store.Head(ctx, p); err != nil {
			m.errorf("op %s crashed after writing %s, which is not there: %v", op.ID, p, err)
		}
	}
}

// checkScans compares the table's files and rows with the model at a few
// versions and at the end: every row once, none lost.
func (m *model) checkScans(ctx context.Context, final *deltalog.Snapshot) {
	latest := final.Version()
	var versions []int64
	for i := int64(1); i <= 8; i++ {
		versions = append(versions, latest*i/9)
	}
	for _, v := range versions {
		snap, err := deltalog.Open(ctx, m.store, "", deltalog.AtVersion(v))
		if err != nil {
			m.errorf("open version %d: %v", v, err)
			continue
		}
		m.compare(ctx, snap)
	}
	m.compare(ctx, final)
	want := map[string]int64{}
	for app, hist := range m.txns {
		want[app] = hist[len(hist)-1].txn
	}
	got := map[string]int64{}
	for app, t := range final.Txns() {
		got[app] = t.Version
	}
	if !maps.Equal(got, want) {
		m.errorf("final snapshot's app versions %v, the model's %v", got, want)
	}
	if got := final.Metadata().Configuration["model.alter"]; got != m.alter {
		m.errorf("final snapshot's model.alter is %q, the model's %q", got, m.alter)
	}
}

// compare checks one snapshot's files and rows against the model.
func (m *model) compare(ctx context.Context, snap *deltalog.Snapshot) {
	v := snap.Version()
	want := map[string]bool{}
	var wantRows []row
	for _, f := range m.liveAt(v) {
		want[f.path] = true
		wantRows = append(wantRows, f.rows...)
	}
	got := map[string]bool{}
	for f := range snap.Files() {
		got[actions.CanonicalPath(f.Path)] = true
	}
	if !maps.Equal(got, want) {
		m.errorf("version %d: the snapshot has %d files, the model %d: %s", v, len(got), len(want), setDiff(got, want))
	}
	sc, err := reader.NewScan(snap)
	if err != nil {
		m.errorf("version %d: scan: %v", v, err)
		return
	}
	var gotRows []row
	for rec, err := range sc.Records(ctx) {
		if err != nil {
			m.errorf("version %d: scan: %v", v, err)
			return
		}
		rows, err := rowsOf(rec)
		if err != nil {
			m.errorf("version %d: scan: %v", v, err)
			return
		}
		gotRows = append(gotRows, rows...)
	}
	ids := map[int64]int{}
	for _, r := range gotRows {
		ids[r.ID]++
		if ids[r.ID] == 2 {
			m.errorf("version %d: row id %d is in the table twice", v, r.ID)
		}
	}
	g, w := sortRows(gotRows), sortRows(wantRows)
	if !slices.Equal(g, w) {
		m.errorf("version %d: the scan has %d rows, the model %d: %s", v, len(g), len(w), rowDiff(g, w))
	}
}

func (m *model) summary(journal []*opRecord, latest int64) string {
	outcomes := map[string]int{}
	kinds := map[string]int{}
	faults := map[string]int{}
	attempts, commits, maxAttempts := 0, 0, 0
	for _, op := range journal {
		if op.Outcome == outCommitted {
			attempts += op.Attempts
			commits++
			maxAttempts = max(maxAttempts, op.Attempts)
		}
		outcomes[op.Outcome]++
		if op.Outcome == outConflict {
			kinds[op.ConflictKind]++
		}
		if op.Fault != "" {
			faults[op.Fault]++
		}
	}
	mean := 0.0
	if commits > 0 {
		mean = float64(attempts) / float64(commits)
	}
	return fmt.Sprintf("%d versions; outcomes %v; conflicts %v; faults %v; attempts per commit %.1f (most %d)", latest, outcomes, kinds, faults, mean, maxAttempts)
}

func setOf(s []string) map[string]bool {
	out := make(map[string]bool, len(s))
	for _, x := range s {
		out[x] = true
	}
	return out
}

func sortedKeys(m map[string]bool) []string {
	return slices.Sorted(maps.Keys(m))
}

func sortRows(rows []row) []row {
	out := slices.Clone(rows)
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	if out == nil {
		out = []row{}
	}
	return out
}

func setDiff(got, want map[string]bool) string {
	var b strings.Builder
	for p := range got {
		if !want[p] {
			fmt.Fprintf(&b, " +%s", p)
		}
	}
	for p := range want {
		if !got[p] {
			fmt.Fprintf(&b, " -%s", p)
		}
	}
	return b.String()
}

// rowDiff lists rows only in got (+) or only in want (-), both sorted by id.
func rowDiff(got, want []row) string {
	g, w := map[row]int{}, map[row]int{}
	for _, r := range got {
		g[r]++
	}
	for _, r := range want {
		w[r]++
	}
	var out []string
	for r, n := range g {
		if w[r] < n {
			out = append(out, fmt.Sprintf("+%v", r))
		}
	}
	for r, n := range w {
		if g[r] < n {
			out = append(out, fmt.Sprintf("-%v", r))
		}
	}
	sort.Strings(out)
	if len(out) > 20 {
		out = append(out[:20], fmt.Sprintf("... %d more", len(out)-20))
	}
	b, _ := json.Marshal(out)
	return string(b)
}
