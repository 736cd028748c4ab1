package deltalog

import (
	"fmt"
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

// feature is what lakelog knows and does about one table feature, the one
// record that decides it (delta-kernel-rs's FeatureInfo). A feature
// without a record is refused by every operation that must know it:
// readers for a reader-writer feature, writers for any.
type feature struct {
	name string // an actions.Feature* constant
	// ops are the operations lakelog does on a table that has the
	// feature. Making a feature writable is adding write operations here
	// (and an enabled func when new tables should get it).
	ops opSet
	// check, when set, refuses an operation of ops on a particular table:
	// one whose schema or properties use the feature in a way lakelog
	// does not honour yet.
	check func(t *tableConfig, op Operation) error
	// enabled, when set, says whether the table's properties or schema
	// use the feature: such a table is checked as if its protocol listed
	// it, and a new table's protocol (MinimalProtocol) lists it.
	enabled func(t *tableConfig) bool
}

// features are the records, in the order a new table's protocol lists
// them (Spark's).
var features = []feature{
	{name: actions.FeatureAppendOnly, ops: allOps, check: appendOnlyCheck,
		enabled: func(t *tableConfig) bool { return t.props.AppendOnly }},
	{name: actions.FeatureInvariants, ops: allOps, check: invariantsCheck,
		enabled: func(t *tableConfig) bool { return hasInvariants(t.schema) }},
	{name: actions.FeatureChangeDataFeed, ops: allOps, // appends need no cdc files; DML writes them
		enabled: func(t *tableConfig) bool { return t.props.EnableChangeDataFeed }},
	{name: actions.FeatureTimestampNTZ, ops: allOps,
		enabled: func(t *tableConfig) bool { return usesType(t.schema, actions.TypeTimestampNTZ) }},
	{name: actions.FeatureDeletionVectors, ops: allOps,
		enabled: func(t *tableConfig) bool { return t.props.EnableDeletionVectors }},
	{name: actions.FeatureInCommitTimestamp, ops: allOps, // written by Commit
		enabled: func(t *tableConfig) bool { return t.props.EnableInCommitTimestamps }},
	{name: actions.FeatureColumnMapping, ops: allOps, check: columnMappingCheck,
		enabled: func(t *tableConfig) bool {
			return t.props.ColumnMappingMode != actions.ColumnMappingNone || t.props.InvalidProperty(actions.PropColumnMappingMode) != nil
		}},
	{name: actions.FeatureIcebergCompatV1, ops: allOps, check: icebergCompatCheck(1),
		enabled: func(t *tableConfig) bool { return t.props.EnableIcebergCompatV1 }},
	{name: actions.FeatureIcebergCompatV2, ops: allOps, check: icebergCompatCheck(2),
		enabled: func(t *tableConfig) bool { return t.props.EnableIcebergCompatV2 }},
	{name: actions.FeatureCheckConstraints, ops: allOps, // writers check every new row
		enabled: func(t *tableConfig) bool { return len(t.props.Constraints) > 0 }},
	{name: actions.FeatureGeneratedColumns, ops: allOps, check: generatedColumnsCheck,
		enabled: func(t *tableConfig) bool { return hasGenerated(t.schema) }},
	// Writers generate identity values (writer.Identity) and move the
	// high-water mark; UPDATE and MERGE refuse to change them.
	{name: actions.FeatureIdentityColumns, ops: allOps, check: identityColumnsCheck,
		enabled: func(t *tableConfig) bool { return hasIdentity(t.schema) }},
	// Transaction.SetDomainMetadata writes user domains; row tracking
	// needs the feature for its high-water mark.
	{name: actions.FeatureDomainMetadata, ops: allOps,
		enabled: func(t *tableConfig) bool { return t.props.EnableRowTracking }},
	// Row IDs are assigned by the commit loop (rowtracking.go); the
	// rewrites that would move rows to new files are refused until they
	// materialize the rows' IDs.
	{name: actions.FeatureRowTracking, ops: rowTrackingOps, check: rowTrackingCheck,
		enabled: func(t *tableConfig) bool { return t.props.EnableRowTracking }},
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
	{name: actions.FeatureV2Checkpoint, ops: readOps},
	// Writers write the current types; readers widen older files.
	{name: actions.FeatureTypeWidening, ops: allOps,
		enabled: func(t *tableConfig) bool { return t.props.EnableTypeWidening }},
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

// tableConfig is what the feature records look at: a table's protocol,
// metadata, properties and schema (a snapshot's, or those a transaction
// commits).
type tableConfig struct {
	protocol *actions.Protocol
	metadata *actions.Metadata
	props    *actions.TableProperties
	schema   *actions.StructType
}

// check says whether lakelog can do op on the table: nil, or an error
// wrapping ErrUnsupportedFeature naming the feature in the way. Every
// operation needs the reader features known; a read needs them to
// support it; a write needs every writer feature the protocol lists, and
// every feature the table's properties or schema use, to support it.
func (t *tableConfig) check(op Operation) error {
	p := t.protocol
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
	for i := range features {
		r := &features[i]
		if r.enabled != nil && r.enabled(t) && !p.HasWriterFeature(r.name) {
			if err := r.allows(t, op, "writer"); err != nil {
				return err
			}
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
func (r *feature) allows(t *tableConfig, op Operation, kind string) error {
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
func rowTrackingCheck(t *tableConfig, op Operation) error {
	if t.props.EnableRowTracking && (t.props.MaterializedRowIDColumnName == "" || t.props.MaterializedRowCommitVersionColumnName == "") && !readOps.has(op) {
		return fmt.Errorf("delta.enableRowTracking is set but the materialized column names (%s, %s) are not", actions.PropMaterializedRowIDName, actions.PropMaterializedRowCommitVersionName)
	}
	return nil
}

func appendOnlyCheck(t *tableConfig, op Operation) error {
	if removesRows.has(op) && t.props.AppendOnly {
		return fmt.Errorf("the table is append-only (delta.appendOnly=true) and %s removes rows", op)
	}
	return nil
}

func invariantsCheck(t *tableConfig, op Operation) error {
	if readOps.has(op) {
		return nil
	}
	return unusedFieldMetadata(t.schema, "delta.invariants", "column invariants")
}

// generatedColumnsCheck: writers compute generated columns and check
// the values given, so every generation expression must be one lakelog
// evaluates (expr's syntax: operators, CAST; Spark's functions such as
// year() are not there yet).
func generatedColumnsCheck(t *tableConfig, op Operation) error {
	if readOps.has(op) {
		return nil
	}
	for _, f := range t.schema.Fields {
		text, ok := f.Metadata[actions.MetaGenerationExpression].(string)
		if !ok {
			continue
		}
		e, err := expr.Parse(text)
		if err == nil {
			_, err = expr.BindAssignment(e, t.schema, f.Type)
		}
		if err != nil {
			return fmt.Errorf("generated column %q: lakelog cannot evaluate its expression %s: %v", f.Name, text, err)
		}
	}
	return nil
}

// hasGenerated reports whether a top-level column is generated.
func hasGenerated(s *actions.StructType) bool {
	if s == nil {
		return false
	}
	for _, f := range s.Fields {
		if _, ok := f.Metadata[actions.MetaGenerationExpression]; ok {
			return true
		}
	}
	return false
}

// identityColumnsCheck: every identity column has a definition writers
// can follow (a long, a non-zero step, numbers where Spark writes them),
// at the top level, where Spark allows them.
func identityColumnsCheck(t *tableConfig, op Operation) error {
	if readOps.has(op) || t.schema == nil {
		return nil
	}
	for _, f := range t.schema.Fields {
		if _, _, err := actions.IdentityOf(f); err != nil {
			return err
		}
		if t.metadata != nil && actions.IsIdentity(f) && slices.ContainsFunc(t.metadata.PartitionColumns, func(c string) bool { return strings.EqualFold(c, f.Name) }) {
			return fmt.Errorf("identity column %q is a partition column, which Spark does not allow", f.Name)
		}
	}
	for _, f := range t.schema.Fields {
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

// hasIdentity reports whether a top-level column is an identity column.
func hasIdentity(s *actions.StructType) bool {
	if s == nil {
		return false
	}
	for _, f := range s.Fields {
		if actions.IsIdentity(f) {
			return true
		}
	}
	return false
}

// columnMappingCheck: column-mapped tables (mode name or id) are read
// and written (data files under physical names and field ids, every
// column with both), and their change data feed read. A mode
// property the protocol does not support is ignored by readers, and a
// write to such a table refused: its files would be misread.
func columnMappingCheck(t *tableConfig, op Operation) error {
	if e := t.props.InvalidProperty(actions.PropColumnMappingMode); e != nil {
		return fmt.Errorf("column mapping mode %q (%s is none, name or id, in any case)", e.Value, actions.PropColumnMappingMode)
	}
	m := t.props.ColumnMappingMode
	switch {
	case m == actions.ColumnMappingNone || readOps.has(op):
		return nil
	case !t.protocol.HasReaderFeature(actions.FeatureColumnMapping):
		return fmt.Errorf("%s is %q but the protocol (%d, %d) does not support the columnMapping feature", actions.PropColumnMappingMode, m, t.protocol.MinReaderVersion, t.protocol.MinWriterVersion)
	}
	// maxColumnId is checked where the schema changes, as Spark checks it.
	if err := actions.CheckColumnMapping(t.schema, max(t.props.ColumnMappingMaxColumnID, actions.MaxColumnID(t.schema))); err != nil {
		return fmt.Errorf("column mapping (mode %q): %v", m, err)
	}
	return nil
}

// MinimalProtocol is the smallest protocol that the table's schema and
// properties need, as Spark chooses it: a legacy protocol when every
// feature they use (the records' enabled) has a legacy version ((1, 2)
// at least, (1, 4) for the change data feed); otherwise reader version 3
// (1 without reader-writer features) and writer version 7, listing
// exactly the features needed, each once.
func MinimalProtocol(md *actions.Metadata, schema *actions.StructType) *actions.Protocol {
	return minimalProtocol(md.Properties(), schema)
}

func minimalProtocol(props *actions.TableProperties, schema *actions.StructType) *actions.Protocol {
	t := &tableConfig{props: props, schema: schema}
	var reader, writer []string
	legacy := &actions.Protocol{MinReaderVersion: 1, MinWriterVersion: 2}
	legacyOnly := true
	for i := range features {
		r := &features[i]
		if r.enabled == nil || !r.enabled(t) {
			continue
		}
		writer = append(writer, r.name)
		if actions.IsReaderWriterFeature(r.name) {
			reader = append(reader, r.name)
		}
		lr, lw := actions.LegacyReaderVersion(r.name), actions.LegacyWriterVersion(r.name)
		if lr == 0 || lw == 0 {
			legacyOnly = false
			continue
		}
		legacy.MinReaderVersion = max(legacy.MinReaderVersion, lr)
		legacy.MinWriterVersion = max(legacy.MinWriterVersion, lw)
	}
	switch {
	case legacyOnly:
		return legacy
	case len(reader) > 0:
		return &actions.Protocol{MinReaderVersion: 3, MinWriterVersion: 7, ReaderFeatures: reader, WriterFeatures: writer}
	}
	return &actions.Protocol{MinReaderVersion: 1, MinWriterVersion: 7, WriterFeatures: writer}
}

// hasInvariants reports whether the schema holds what Spark's Invariants
// feature covers: a NOT NULL field or a delta.invariants expression,
// looking through structs but not into arrays and maps, as Spark does.
func hasInvariants(s *actions.StructType) bool {
	for _, f := range s.Fields {
		if !f.Nullable {
			return true
		}
		if _, ok := f.Metadata["delta.invariants"]; ok {
			return true
		}
		if sub, ok := f.Type.(*actions.StructType); ok && hasInvariants(sub) {
			return true
		}
	}
	return false
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
