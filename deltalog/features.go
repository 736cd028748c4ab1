package deltalog

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/expr"
)

// maxReaderVersion and maxWriterVersion are the highest protocol versions
// lakelog understands (3 and 7 are the table-features versions).
const (
	maxReaderVersion = 3
	maxWriterVersion = 7
)

// feature is what lakelog does with one table feature, the one record
// that decides it (delta-kernel-rs's FeatureInfo). What the protocol says
// of the feature (reader-writer or not, its legacy versions, when the
// metadata needs it and whether that upgrades a protocol by itself) is in
// actions; a feature without a record here is refused by every operation
// that must know it: readers for a reader-writer feature, writers for
// any.
type feature struct {
	name string // an actions.Feature* constant
	// ops are the operations lakelog does on a table that has the
	// feature. Making a feature writable is adding write operations here.
	ops opSet
	// check, when set, refuses an operation of ops on a particular table:
	// one whose schema or properties use the feature in a way lakelog
	// does not honour yet.
	check func(t *actions.TableConfig, op Operation) error
}

// features are the records.
var features = []feature{
	{name: actions.FeatureAppendOnly, ops: allOps, check: appendOnlyCheck},
	{name: actions.FeatureInvariants, ops: allOps, check: invariantsCheck},
	{name: actions.FeatureChangeDataFeed, ops: allOps}, // appends need no cdc files; DML writes them
	{name: actions.FeatureTimestampNTZ, ops: allOps},
	{name: actions.FeatureDeletionVectors, ops: allOps},
	{name: actions.FeatureInCommitTimestamp, ops: allOps}, // written by Commit
	{name: actions.FeatureColumnMapping, ops: allOps, check: columnMappingCheck},
	{name: actions.FeatureIcebergCompatV1, ops: allOps, check: icebergCompatCheck(1)},
	{name: actions.FeatureIcebergCompatV2, ops: allOps, check: icebergCompatCheck(2)},
	{name: actions.FeatureCheckConstraints, ops: allOps}, // writers check every new row
	{name: actions.FeatureGeneratedColumns, ops: allOps, check: generatedColumnsCheck},
	// Writers generate identity values (writer.Identity) and move the
	// high-water mark; UPDATE and MERGE refuse to change them.
	{name: actions.FeatureIdentityColumns, ops: allOps, check: identityColumnsCheck},
	// Transaction.SetDomainMetadata writes user domains; row tracking
	// needs the feature for its high-water mark.
	{name: actions.FeatureDomainMetadata, ops: allOps},
	// Row IDs are assigned by the commit loop (rowtracking.go); the
	// rewrites that would move rows to new files are refused until they
	// materialize the rows' IDs.
	{name: actions.FeatureRowTracking, ops: rowTrackingOps, check: rowTrackingCheck},
	// VACUUM checks the whole write protocol, as every write does
	// (Snapshot.Supports(OpVacuum)).
	{name: actions.FeatureVacuumProtocolCheck, ops: allOps},
	// CleanupLog keeps the checkpoints before
	// delta.requireCheckpointProtectionBeforeVersion unless it truncates
	// all of that history at once, removing commits before checkpoints;
	// Checkpoint writes one only for a protocol lakelog writes.
	{name: actions.FeatureCheckpointProtection, ops: allOps},
	// The writer puts partition columns into the data files too.
	{name: actions.FeatureMaterializePartitionColumns, ops: allOps},
	// Checkpoints of a table with delta.checkpointPolicy=v2 are written
	// in the V2 form (a UUID-named checkpoint with a checkpointMetadata
	// action).
	{name: actions.FeatureV2Checkpoint, ops: allOps},
	// Writers write the current types; readers widen older files.
	{name: actions.FeatureTypeWidening, ops: allOps},
	{name: actions.FeatureTypeWideningPreview, ops: allOps},
}

// featureByName indexes features.
var featureByName = func() map[string]*feature {
	m := make(map[string]*feature, len(features))
	for i := range features {
		m[features[i].name] = &features[i]
	}
	return m
}()

// opSet is a set of operations.
type opSet uint32

// operations are the operations of opSets, by bit.
var operations = []Operation{OpScan, OpChangeDataFeed, OpAppend, OpOverwrite, OpReplaceWhere, OpDelete, OpUpdate, OpMerge, OpOptimize, OpVacuum, OpRestore, opCommit}

func opsOf(list ...Operation) opSet {
	var s opSet
	for _, op := range list {
		for i, o := range operations {
			if o == op {
				s |= 1 << i
			}
		}
	}
	return s
}

func (s opSet) has(op Operation) bool { return s&opsOf(op) != 0 }

var (
	readOps  = opsOf(OpScan, OpChangeDataFeed)
	writeOps = opsOf(OpAppend, OpOverwrite, OpReplaceWhere, OpDelete, OpUpdate, OpMerge, OpOptimize, OpVacuum, OpRestore, opCommit)
	allOps   = readOps | writeOps
	// removesRows are the writes that remove data (dataChange removes),
	// which an append-only table forbids.
	removesRows = opsOf(OpOverwrite, OpReplaceWhere, OpDelete, OpUpdate, OpMerge, OpRestore)
)

// check says whether lakelog can do op on the table: nil, or an error
// wrapping ErrUnsupportedFeature naming the feature in the way. Every
// operation needs the reader features known; a read needs them to
// support it; a write needs every writer feature the protocol lists, and
// every feature the table's properties or schema use, to support it.
func check(t *actions.TableConfig, op Operation) error {
	p := t.Protocol()
	if err := checkReadable(p); err != nil {
		return err
	}
	if readOps.has(op) {
		for _, f := range p.ReaderFeatureSet() {
			if err := featureByName[f].allows(t, op, "reader"); err != nil {
				return err
			}
		}
		return nil
	}
	if p.MinWriterVersion < 1 || p.MinWriterVersion > maxWriterVersion {
		return fmt.Errorf("%w: writer version %d (lakelog writes versions 1 to %d)", ErrUnsupportedFeature, p.MinWriterVersion, maxWriterVersion)
	}
	listed := p.WriterFeatureSet()
	for _, f := range listed {
		r := featureByName[f]
		if r == nil {
			return fmt.Errorf("%w: writer feature %q", ErrUnsupportedFeature, f)
		}
		if err := r.allows(t, op, "writer"); err != nil {
			return err
		}
	}
	for _, f := range t.NeededFeatures() {
		if p.HasWriterFeature(f) {
			continue
		}
		r := featureByName[f]
		if r == nil {
			return fmt.Errorf("%w: writer feature %q", ErrUnsupportedFeature, f)
		}
		if err := r.allows(t, op, "writer"); err != nil {
			return err
		}
	}
	return nil
}

// checkReadable is the gate of every operation, a snapshot's too: a
// reader version lakelog reads, and every reader feature known.
func checkReadable(p *actions.Protocol) error {
	if p.MinReaderVersion < 1 || p.MinReaderVersion > maxReaderVersion {
		return fmt.Errorf("%w: reader version %d (lakelog reads versions 1 to %d)", ErrUnsupportedFeature, p.MinReaderVersion, maxReaderVersion)
	}
	var missing []string
	for _, f := range p.ReaderFeatureSet() {
		if featureByName[f] == nil {
			missing = append(missing, f)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("%w: reader feature %s", ErrUnsupportedFeature, quoteList(missing))
	}
	return nil
}

// allows says whether the feature allows op on the table.
func (r *feature) allows(t *actions.TableConfig, op Operation, kind string) error {
	if !r.ops.has(op) {
		return fmt.Errorf("%w: %s feature %q", ErrUnsupportedFeature, kind, r.name)
	}
	if r.check == nil {
		return nil
	}
	if err := r.check(t, op); err != nil {
		return fmt.Errorf("%w: %s feature %q: %v", ErrUnsupportedFeature, kind, r.name, err)
	}
	return nil
}

// rowTrackingOps are the operations that keep every row's ID and commit
// version: reads, appends, overwrites (which add new rows only),
// DELETE/UPDATE/MERGE and OPTIMIZE (which materialize the IDs of the rows
// they move, dml/rowtracking.go, maintenance/rowtracking.go), VACUUM and
// RESTORE (which re-adds files with their baseRowId). replaceWhere does not
// materialize them yet.
var rowTrackingOps = readOps | opsOf(OpAppend, OpOverwrite, OpDelete, OpUpdate, OpMerge, OpOptimize, OpVacuum, OpRestore, opCommit)

// rowTrackingCheck names what is missing when a rewrite is refused.
func rowTrackingCheck(t *actions.TableConfig, op Operation) error {
	if t.Properties().EnableRowTracking && (t.Properties().MaterializedRowIDColumnName == "" || t.Properties().MaterializedRowCommitVersionColumnName == "") && !readOps.has(op) {
		return fmt.Errorf("delta.enableRowTracking is set but the materialized column names (%s, %s) are not", actions.PropMaterializedRowIDName, actions.PropMaterializedRowCommitVersionName)
	}
	return nil
}

func appendOnlyCheck(t *actions.TableConfig, op Operation) error {
	if removesRows.has(op) && t.Properties().AppendOnly {
		return fmt.Errorf("the table is append-only (delta.appendOnly=true) and %s removes rows", op)
	}
	return nil
}

func invariantsCheck(t *actions.TableConfig, op Operation) error {
	if readOps.has(op) {
		return nil
	}
	return unusedFieldMetadata(t.Schema(), actions.MetaInvariants, "column invariants")
}

// generatedColumnsCheck: writers compute generated columns and check
// the values given, so every generation expression must be one lakelog
// evaluates (expr's syntax: operators, CAST; Spark's functions such as
// year() are not there yet).
func generatedColumnsCheck(t *actions.TableConfig, op Operation) error {
	if readOps.has(op) {
		return nil
	}
	for _, f := range t.Schema().Fields {
		text, ok := f.Metadata[actions.MetaGenerationExpression].(string)
		if !ok {
			continue
		}
		e, err := expr.Parse(text)
		if err == nil {
			_, err = expr.BindAssignment(e, t.Schema(), f.Type)
		}
		if err != nil {
			return fmt.Errorf("generated column %q: lakelog cannot evaluate its expression %s: %v", f.Name, text, err)
		}
	}
	return nil
}

// identityColumnsCheck: every identity column has a definition writers
// can follow (a long, a non-zero step, numbers where Spark writes them),
// at the top level, where Spark allows them.
func identityColumnsCheck(t *actions.TableConfig, op Operation) error {
	if readOps.has(op) || t.Schema() == nil {
		return nil
	}
	for _, f := range t.Schema().Fields {
		if _, _, err := actions.IdentityOf(f); err != nil {
			return err
		}
		if t.Metadata() != nil && actions.IsIdentity(f) && slices.ContainsFunc(t.Metadata().PartitionColumns, func(c string) bool { return strings.EqualFold(c, f.Name) }) {
			return fmt.Errorf("identity column %q is a partition column, which Spark does not allow", f.Name)
		}
	}
	for _, f := range t.Schema().Fields {
		if err := unusedFieldMetadata(nestedOnly(f), actions.MetaIdentityStart, "a nested identity column"); err != nil {
			return err
		}
	}
	return nil
}

// nestedOnly is the struct of f's nested fields (none for a non-struct).
func nestedOnly(f *actions.StructField) *actions.StructType {
	return &actions.StructType{Fields: []*actions.StructField{{Name: f.Name, Type: f.Type}}}
}

// columnMappingCheck: column-mapped tables (mode name or id) are read
// and written (data files under physical names and field ids, every
// column with both), and their change data feed read. A mode
// property the protocol does not support is ignored by readers, and a
// write to such a table refused: its files would be misread.
func columnMappingCheck(t *actions.TableConfig, op Operation) error {
	if e := t.Properties().InvalidProperty(actions.PropColumnMappingMode); e != nil {
		return fmt.Errorf("column mapping mode %q (%s is none, name or id, in any case)", e.Value, actions.PropColumnMappingMode)
	}
	m := t.Properties().ColumnMappingMode
	switch {
	case m == actions.ColumnMappingNone || readOps.has(op):
		return nil
	case !t.Protocol().HasReaderFeature(actions.FeatureColumnMapping):
		return fmt.Errorf("%s is %q but the protocol (%d, %d) does not support the columnMapping feature", actions.PropColumnMappingMode, m, t.Protocol().MinReaderVersion, t.Protocol().MinWriterVersion)
	}
	// maxColumnId is checked where the schema changes, as Spark checks it.
	if err := actions.CheckColumnMapping(t.Schema(), max(t.Properties().ColumnMappingMaxColumnID, actions.MaxColumnID(t.Schema()))); err != nil {
		return fmt.Errorf("column mapping (mode %q): %v", m, err)
	}
	return nil
}

func unusedFieldMetadata(s *actions.StructType, key, what string) error {
	var found string
	var walk func(prefix string, t actions.DataType)
	walk = func(prefix string, t actions.DataType) {
		switch t := t.(type) {
		case *actions.StructType:
			for _, f := range t.Fields {
				if _, ok := f.Metadata[key]; ok && found == "" {
					found = prefix + f.Name
				}
				walk(prefix+f.Name+".", f.Type)
			}
		case *actions.ArrayType:
			walk(prefix, t.ElementType)
		case *actions.MapType:
			walk(prefix, t.KeyType)
			walk(prefix, t.ValueType)
		}
	}
	walk("", s)
	if found != "" {
		return fmt.Errorf("column %q uses %s, which lakelog does not enforce yet", found, what)
	}
	return nil
}

func quoteList(s []string) string {
	q := make([]string, len(s))
	for i, v := range s {
		q[i] = fmt.Sprintf("%q", v)
	}
	return strings.Join(q, ", ")
}

// knownFeatureNames lists the features lakelog has a record of.
func knownFeatureNames() []string {
	names := make([]string, len(features))
	for i, f := range features {
		names[i] = f.name
	}
	return names
}

// SplitFeatureProperties takes Spark's delta.feature.NAME = 'supported'
// (or 'enabled') entries out of a table configuration: they are no
// properties but requests to add the feature to the protocol
// (Transaction.EnableFeatures), as Spark strips them from the metadata.
// It returns the rest and the features asked for, sorted; another value
// is an error naming the property.
func SplitFeatureProperties(conf map[string]string) (map[string]string, []string, error) {
	var names []string
	var rest map[string]string
	for k, v := range conf {
		if !strings.HasPrefix(k, actions.PropFeaturePrefix) {
			continue
		}
		if w := strings.ToLower(strings.TrimSpace(v)); w != "supported" && w != "enabled" {
			return nil, nil, fmt.Errorf("%s=%q: a table feature is enabled with the value \"supported\"", k, v)
		}
		if rest == nil {
			rest = maps.Clone(conf)
		}
		delete(rest, k)
		name, _ := actions.FeatureName(strings.TrimPrefix(k, actions.PropFeaturePrefix))
		names = append(names, name)
	}
	if rest == nil {
		return conf, nil, nil
	}
	slices.Sort(names)
	return rest, names, nil
}
