package actions

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Keys of the table properties (metaData.configuration) that Delta's
// writers know: Spark's DeltaConfigs, and the few others Delta clients
// write. Column mapping's are in columnmapping.go.
const (
	PropAppendOnly                       = "delta.appendOnly"
	PropAutoCompact                      = "delta.autoOptimize.autoCompact"
	PropOptimizeWrite                    = "delta.autoOptimize.optimizeWrite"
	PropCheckpointInterval               = "delta.checkpointInterval"
	PropCheckpointPolicy                 = "delta.checkpointPolicy"
	PropCheckpointRetentionDuration      = "delta.checkpointRetentionDuration"
	PropCheckpointWriteStatsAsJSON       = "delta.checkpoint.writeStatsAsJson"
	PropCheckpointWriteStatsAsStruct     = "delta.checkpoint.writeStatsAsStruct"
	PropSymlinkFormatManifest            = "delta.compatibility.symlinkFormatManifest.enabled"
	PropDataSkippingNumIndexedCols       = "delta.dataSkippingNumIndexedCols"
	PropDataSkippingStatsColumns         = "delta.dataSkippingStatsColumns"
	PropDeletedFileRetentionDuration     = "delta.deletedFileRetentionDuration"
	PropEnableChangeDataFeed             = "delta.enableChangeDataFeed"
	PropEnableChangeDataCapture          = "delta.enableChangeDataCapture" // enableChangeDataFeed's legacy name
	PropEnableDeletionVectors            = "delta.enableDeletionVectors"
	PropEnableExpiredLogCleanup          = "delta.enableExpiredLogCleanup"
	PropEnableFullRetentionRollback      = "delta.enableFullRetentionRollback"
	PropEnableIcebergCompatV1            = "delta.enableIcebergCompatV1"
	PropEnableIcebergCompatV2            = "delta.enableIcebergCompatV2"
	PropEnableInCommitTimestamps         = "delta.enableInCommitTimestamps"
	PropEnableRowTracking                = "delta.enableRowTracking"
	PropEnableTypeWidening               = "delta.enableTypeWidening"
	PropInCommitTimestampEnablementTime  = "delta.inCommitTimestampEnablementTimestamp"
	PropInCommitTimestampEnablementVer   = "delta.inCommitTimestampEnablementVersion"
	PropIsolationLevel                   = "delta.isolationLevel"
	PropLogRetentionDuration             = "delta.logRetentionDuration"
	PropMinReaderVersion                 = "delta.minReaderVersion"
	PropMinWriterVersion                 = "delta.minWriterVersion"
	PropRandomPrefixLength               = "delta.randomPrefixLength"
	PropRandomizeFilePrefixes            = "delta.randomizeFilePrefixes"
	PropMaterializedRowCommitVersionName = "delta.rowTracking.materializedRowCommitVersionColumnName"
	PropMaterializedRowIDName            = "delta.rowTracking.materializedRowIdColumnName"
	PropSetTransactionRetentionDuration  = "delta.setTransactionRetentionDuration"
	PropTargetFileSize                   = "delta.targetFileSize"
	PropTuneFileSizesForRewrites         = "delta.tuneFileSizesForRewrites"
	PropUniversalFormatEnabledFormats    = "delta.universalFormat.enabledFormats"
	// PropIcebergAtomicConversion is set by Spark on IcebergCompatV2
	// tables; lakelog reads it and ignores it.
	PropIcebergAtomicConversion = "delta.universalFormat.iceberg.atomicConversion.supported"
)

// Prefixes of families of delta.* keys: CHECK constraints
// (delta.constraints.NAME = expression) and table features
// (delta.feature.NAME = supported).
const (
	PropConstraintPrefix = "delta.constraints."
	PropFeaturePrefix    = "delta.feature."
)

// Defaults of the table properties, as Spark's DeltaConfigs and
// PROTOCOL.md give them.
const (
	DefaultCheckpointInterval         = 10
	DefaultDataSkippingNumIndexedCols = 32
	DefaultLogRetention               = 30 * 24 * time.Hour
	DefaultDeletedFileRetention       = 7 * 24 * time.Hour
	DefaultCheckpointRetention        = 2 * 24 * time.Hour
	DefaultRandomPrefixLength         = 2
)

// Isolation levels delta.isolationLevel may name. Spark accepts only
// Serializable in new properties; lakelog also accepts WriteSerializable,
// its default, which Spark reads.
const (
	IsolationSerializable      = "Serializable"
	IsolationWriteSerializable = "WriteSerializable"
)

// Checkpoint policies delta.checkpointPolicy may name.
const (
	CheckpointPolicyClassic = "classic"
	CheckpointPolicyV2      = "v2"
)

// TableProperties are a table's properties (metaData.configuration)
// typed: parsed once, by ParseTableProperties, with Spark's rules
// (DeltaConfigs): booleans are "true" or "false" in any case but not
// padded, integers are decimal without padding, durations are calendar
// intervals without months (ParseInterval), column mapping modes any
// case. Each field holds the property's value, or its default when the
// property is unset or invalid; Invalid lists the invalid ones. Values
// are read-only: a snapshot shares one TableProperties with its readers.
type TableProperties struct {
	// AppendOnly (delta.appendOnly): no row may be removed or changed.
	AppendOnly bool
	// EnableChangeDataFeed (delta.enableChangeDataFeed, or its legacy
	// name delta.enableChangeDataCapture): operations that change rows
	// record change data.
	EnableChangeDataFeed bool
	// EnableDeletionVectors (delta.enableDeletionVectors): operations may
	// mark rows deleted with deletion vectors instead of rewriting files.
	EnableDeletionVectors bool
	// EnableRowTracking (delta.enableRowTracking).
	EnableRowTracking bool
	// EnableTypeWidening (delta.enableTypeWidening).
	EnableTypeWidening bool
	// EnableInCommitTimestamps (delta.enableInCommitTimestamps): commits
	// carry their timestamp in commitInfo.inCommitTimestamp from
	// InCommitTimestampEnablementVersion on.
	EnableInCommitTimestamps bool
	// InCommitTimestampEnablementVersion and ...Timestamp (ms): where
	// in-commit timestamps begin; 0 when unset.
	InCommitTimestampEnablementVersion   int64
	InCommitTimestampEnablementTimestamp int64
	// EnableIcebergCompatV1 and V2 (delta.enableIcebergCompatV1, V2).
	EnableIcebergCompatV1, EnableIcebergCompatV2 bool
	// UniversalFormats (delta.universalFormat.enabledFormats): "iceberg"
	// and/or "hudi"; nil when unset.
	UniversalFormats []string

	// CheckpointInterval (delta.checkpointInterval, default 10): a
	// checkpoint every this many versions; always positive.
	CheckpointInterval int64
	// CheckpointPolicy (delta.checkpointPolicy): "classic" (default) or "v2".
	CheckpointPolicy string
	// CheckpointWriteStatsAsJSON (delta.checkpoint.writeStatsAsJson,
	// default true) and CheckpointWriteStatsAsStruct
	// (delta.checkpoint.writeStatsAsStruct, default false): the stats
	// columns checkpoints carry.
	CheckpointWriteStatsAsJSON, CheckpointWriteStatsAsStruct bool

	// ColumnMappingMode (delta.columnMapping.mode): "none" (default),
	// "name" or "id", lower-cased. Readers honour it only when the
	// protocol supports columnMapping.
	ColumnMappingMode string
	// ColumnMappingMaxColumnID (delta.columnMapping.maxColumnId).
	ColumnMappingMaxColumnID int64

	// DataSkippingNumIndexedCols (delta.dataSkippingNumIndexedCols,
	// default 32): the leading leaf columns that get stats; -1 for all.
	DataSkippingNumIndexedCols int64
	// DataSkippingStatsColumns (delta.dataSkippingStatsColumns): the
	// columns that get stats, each a path of field names (a struct names
	// all its leaves), matched case-insensitively; it takes precedence
	// over DataSkippingNumIndexedCols. nil when unset; empty (not nil)
	// when set to no column.
	DataSkippingStatsColumns [][]string

	// Retention durations: delta.logRetentionDuration (default 30 days),
	// delta.deletedFileRetentionDuration (7 days),
	// delta.checkpointRetentionDuration (2 days), and
	// delta.setTransactionRetentionDuration (0: app transactions never
	// expire).
	LogRetention, DeletedFileRetention, CheckpointRetention, SetTransactionRetention time.Duration
	// EnableExpiredLogCleanup (delta.enableExpiredLogCleanup, default
	// true): checkpoints remove log files older than LogRetention.
	EnableExpiredLogCleanup bool
	// EnableFullRetentionRollback (delta.enableFullRetentionRollback,
	// default true).
	EnableFullRetentionRollback bool

	// IsolationLevel (delta.isolationLevel): "Serializable" or
	// "WriteSerializable" (named in any case); "" when unset.
	IsolationLevel string
	// TargetFileSize (delta.targetFileSize): bytes, positive; 0 when unset.
	TargetFileSize int64
	// RandomizeFilePrefixes and RandomPrefixLength
	// (delta.randomizeFilePrefixes, delta.randomPrefixLength, default 2).
	RandomizeFilePrefixes bool
	RandomPrefixLength    int64
	// MaterializedRowIDColumnName and MaterializedRowCommitVersionColumnName
	// (delta.rowTracking.materialized...ColumnName): row tracking's hidden
	// columns; "" when unset.
	MaterializedRowIDColumnName, MaterializedRowCommitVersionColumnName string
	// Constraints are the table's CHECK constraints
	// (delta.constraints.NAME = expression): the expression text by
	// name, the name as its key spells it (lower case, as Spark writes
	// it). Nil when there is none.
	Constraints map[string]string

	// Invalid lists the properties whose values do not parse, sorted by
	// key; their fields hold the defaults. Err joins them.
	Invalid []*PropertyError
}

// PropertyError is a table property whose value is not of its form. It
// names the property, the value and what the property takes.
type PropertyError struct {
	Key, Value string
	Want       string // what the property takes: "a boolean (true or false)", ...
}

func (e *PropertyError) Error() string {
	return fmt.Sprintf("actions: table property %s = %q: %s", e.Key, e.Value, e.Want)
}

// Err is nil when every property parsed, else the errors of Invalid
// joined, each naming its property.
func (p *TableProperties) Err() error {
	errs := make([]error, len(p.Invalid))
	for i, e := range p.Invalid {
		errs[i] = e
	}
	return errors.Join(errs...)
}

// InvalidProperty returns the error of the property key, nil when it is
// valid or unset.
func (p *TableProperties) InvalidProperty(key string) *PropertyError {
	for _, e := range p.Invalid {
		if e.Key == key {
			return e
		}
	}
	return nil
}

// DefaultTableProperties are the properties of a table that sets none.
func DefaultTableProperties() *TableProperties {
	return &TableProperties{
		CheckpointInterval:          DefaultCheckpointInterval,
		CheckpointPolicy:            CheckpointPolicyClassic,
		CheckpointWriteStatsAsJSON:  true,
		ColumnMappingMode:           ColumnMappingNone,
		DataSkippingNumIndexedCols:  DefaultDataSkippingNumIndexedCols,
		LogRetention:                DefaultLogRetention,
		DeletedFileRetention:        DefaultDeletedFileRetention,
		CheckpointRetention:         DefaultCheckpointRetention,
		EnableExpiredLogCleanup:     true,
		EnableFullRetentionRollback: true,
		RandomPrefixLength:          DefaultRandomPrefixLength,
	}
}

// ParseTableProperties types the table properties conf, the one parser
// of them: every key of the catalogue (KnownTableProperty) that conf sets
// is parsed by its rule, keys matched exactly as Spark reads them
// (SetTableProperties-style normalisation of their case happens where
// properties are set: NormalizeTableProperties). Invalid values are
// listed in Invalid and leave the default; other keys are ignored.
func ParseTableProperties(conf map[string]string) *TableProperties {
	p := DefaultTableProperties()
	for _, key := range slices.Sorted(maps.Keys(conf)) {
		if name, ok := strings.CutPrefix(key, PropConstraintPrefix); ok {
			if p.Constraints == nil {
				p.Constraints = map[string]string{}
			}
			p.Constraints[name] = conf[key]
			continue
		}
		spec, ok := propertySpecs[key]
		if !ok || spec.parse == nil {
			continue
		}
		if key == PropEnableChangeDataCapture {
			if _, modern := conf[PropEnableChangeDataFeed]; modern {
				continue // Spark reads the legacy name only when the new one is unset
			}
		}
		if want := spec.parse(p, conf[key]); want != "" {
			p.Invalid = append(p.Invalid, &PropertyError{Key: key, Value: conf[key], Want: want})
		}
	}
	return p
}

// Properties parses the metadata's table properties
// (ParseTableProperties). A nil metadata has the defaults. Callers that
// hold a snapshot use its parsed properties instead of parsing again.
func (m *Metadata) Properties() *TableProperties {
	if m == nil {
		return DefaultTableProperties()
	}
	return ParseTableProperties(m.Configuration)
}

// propertySpec is one entry of the catalogue: how a property's value is
// parsed into TableProperties. parse returns "" when the value is valid,
// else what the property takes; a nil parse accepts any value.
type propertySpec struct {
	parse func(p *TableProperties, v string) (want string)
}

// propertySpecs is the catalogue of Delta's table properties. A delta.*
// key that is not here, nor under PropConstraintPrefix or
// PropFeaturePrefix, is unknown, and refused where properties are set,
// as Spark refuses it.
var propertySpecs = map[string]propertySpec{
	PropAppendOnly:                   boolProp(func(p *TableProperties) *bool { return &p.AppendOnly }),
	PropAutoCompact:                  enumProp([]string{"true", "false"}, true, nil), // lower-cased, unlike the booleans
	PropOptimizeWrite:                boolProp(nil),
	PropCheckpointInterval:           intProp(1, 1<<31-1, func(p *TableProperties) *int64 { return &p.CheckpointInterval }),
	PropCheckpointPolicy:             enumProp([]string{CheckpointPolicyClassic, CheckpointPolicyV2}, false, func(p *TableProperties) *string { return &p.CheckpointPolicy }),
	PropCheckpointRetentionDuration:  durationProp(func(p *TableProperties) *time.Duration { return &p.CheckpointRetention }),
	PropCheckpointWriteStatsAsJSON:   boolProp(func(p *TableProperties) *bool { return &p.CheckpointWriteStatsAsJSON }),
	PropCheckpointWriteStatsAsStruct: boolProp(func(p *TableProperties) *bool { return &p.CheckpointWriteStatsAsStruct }),
	PropColumnMappingMaxColumnID:     intProp(-1<<63, 1<<63-1, func(p *TableProperties) *int64 { return &p.ColumnMappingMaxColumnID }),
	PropColumnMappingMode:            enumProp([]string{ColumnMappingNone, ColumnMappingID, ColumnMappingName}, true, func(p *TableProperties) *string { return &p.ColumnMappingMode }),
	PropSymlinkFormatManifest:        boolProp(nil),
	PropDataSkippingNumIndexedCols:   intProp(-1, 1<<31-1, func(p *TableProperties) *int64 { return &p.DataSkippingNumIndexedCols }),
	PropDataSkippingStatsColumns:     {parse: parseStatsColumnsProp},
	PropDeletedFileRetentionDuration: durationProp(func(p *TableProperties) *time.Duration { return &p.DeletedFileRetention }),
	PropEnableChangeDataFeed:         boolProp(func(p *TableProperties) *bool { return &p.EnableChangeDataFeed }),
	PropEnableChangeDataCapture:      boolProp(func(p *TableProperties) *bool { return &p.EnableChangeDataFeed }),
	PropEnableDeletionVectors:        boolProp(func(p *TableProperties) *bool { return &p.EnableDeletionVectors }),
	PropEnableExpiredLogCleanup:      boolProp(func(p *TableProperties) *bool { return &p.EnableExpiredLogCleanup }),
	PropEnableFullRetentionRollback:  boolProp(func(p *TableProperties) *bool { return &p.EnableFullRetentionRollback }),
	PropEnableIcebergCompatV1:        boolProp(func(p *TableProperties) *bool { return &p.EnableIcebergCompatV1 }),
	PropEnableIcebergCompatV2:        boolProp(func(p *TableProperties) *bool { return &p.EnableIcebergCompatV2 }),
	PropEnableInCommitTimestamps:     boolProp(func(p *TableProperties) *bool { return &p.EnableInCommitTimestamps }),
	PropEnableRowTracking:            boolProp(func(p *TableProperties) *bool { return &p.EnableRowTracking }),
	PropEnableTypeWidening:           boolProp(func(p *TableProperties) *bool { return &p.EnableTypeWidening }),
	PropInCommitTimestampEnablementTime: intProp(-1<<63, 1<<63-1, func(p *TableProperties) *int64 {
		return &p.InCommitTimestampEnablementTimestamp
	}),
	PropInCommitTimestampEnablementVer: intProp(-1<<63, 1<<63-1, func(p *TableProperties) *int64 {
		return &p.InCommitTimestampEnablementVersion
	}),
	PropIsolationLevel:                   enumProp([]string{IsolationSerializable, IsolationWriteSerializable}, true, func(p *TableProperties) *string { return &p.IsolationLevel }),
	PropLogRetentionDuration:             durationProp(func(p *TableProperties) *time.Duration { return &p.LogRetention }),
	PropMinReaderVersion:                 intProp(1, 3, nil),
	PropMinWriterVersion:                 intProp(1, 7, nil),
	PropRandomPrefixLength:               intProp(1, 1<<31-1, func(p *TableProperties) *int64 { return &p.RandomPrefixLength }),
	PropRandomizeFilePrefixes:            boolProp(func(p *TableProperties) *bool { return &p.RandomizeFilePrefixes }),
	PropMaterializedRowCommitVersionName: stringProp(func(p *TableProperties) *string { return &p.MaterializedRowCommitVersionColumnName }),
	PropMaterializedRowIDName:            stringProp(func(p *TableProperties) *string { return &p.MaterializedRowIDColumnName }),
	PropSetTransactionRetentionDuration:  durationProp(func(p *TableProperties) *time.Duration { return &p.SetTransactionRetention }),
	PropTargetFileSize:                   intProp(1, 1<<63-1, func(p *TableProperties) *int64 { return &p.TargetFileSize }),
	PropTuneFileSizesForRewrites:         boolProp(nil),
	PropUniversalFormatEnabledFormats:    {parse: parseUniversalFormats},
	PropIcebergAtomicConversion:          boolProp(nil),

	// checkpointProtection's boundary and materializePartitionColumns'
	// best-effort knob (deltalog's CleanupLog and the writer read them).
	PropRequireCheckpointProtectionBeforeVersion: intProp(0, 1<<63-1, nil),
	PropWritePartitionColumnsToParquet:           boolProp(nil),
}

// The properties of the checkpointProtection and
// materializePartitionColumns features.
const (
	PropRequireCheckpointProtectionBeforeVersion = "delta.requireCheckpointProtectionBeforeVersion"
	PropWritePartitionColumnsToParquet           = "delta.writePartitionColumnsToParquet"
)

// ParseBool parses a boolean table property as Spark does (Scala's
// toBoolean): "true" or "false" in any case, nothing around them.
func ParseBool(v string) (bool, bool) {
	switch {
	case strings.EqualFold(v, "true"):
		return true, true
	case strings.EqualFold(v, "false"):
		return false, true
	}
	return false, false
}

func boolProp(field func(*TableProperties) *bool) propertySpec {
	return propertySpec{parse: func(p *TableProperties, v string) string {
		b, ok := ParseBool(v)
		if !ok {
			return "needs to be a boolean (true or false, in any case)"
		}
		if field != nil {
			*field(p) = b
		}
		return ""
	}}
}

// intProp parses a decimal integer in [lo, hi] as Java's parseInt and
// parseLong do (an optional sign, ASCII digits, nothing around them).
func intProp(lo, hi int64, field func(*TableProperties) *int64) propertySpec {
	return propertySpec{parse: func(p *TableProperties, v string) string {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < lo || n > hi {
			switch {
			case lo == -1<<63:
				return "needs to be an integer"
			case hi == 1<<63-1 || hi == 1<<31-1:
				return fmt.Sprintf("needs to be an integer of at least %d", lo)
			}
			return fmt.Sprintf("needs to be an integer from %d to %d", lo, hi)
		}
		if field != nil {
			*field(p) = n
		}
		return ""
	}}
}

// enumProp accepts one of values, exactly or (fold) in any case; the
// field gets the value as listed.
func enumProp(values []string, fold bool, field func(*TableProperties) *string) propertySpec {
	return propertySpec{parse: func(p *TableProperties, v string) string {
		for _, w := range values {
			if v == w || fold && asciiLower(v) == asciiLower(w) {
				if field != nil {
					*field(p) = w
				}
				return ""
			}
		}
		if fold {
			return "needs to be one of " + strings.Join(values, ", ") + " (in any case)"
		}
		return "needs to be one of " + strings.Join(values, ", ")
	}}
}

func stringProp(field func(*TableProperties) *string) propertySpec {
	return propertySpec{parse: func(p *TableProperties, v string) string {
		*field(p) = v
		return ""
	}}
}

// durationProp parses a calendar interval (ParseInterval) that has no
// months and is not negative, as Spark's isValidIntervalConfigValue
// requires.
func durationProp(field func(*TableProperties) *time.Duration) propertySpec {
	return propertySpec{parse: func(p *TableProperties, v string) string {
		const want = "needs to be a calendar interval such as 'interval 2 weeks' or '7 days'; months and years are not accepted (use 365 days for a year), nor negative lengths"
		iv, err := ParseInterval(v)
		if err != nil {
			return want
		}
		d, ok := iv.Duration()
		if !ok || d < 0 {
			return want
		}
		*field(p) = d
		return ""
	}}
}

func parseStatsColumnsProp(p *TableProperties, v string) string {
	cols, err := ParseColumnList(v)
	if err != nil {
		return "needs to be a comma-separated list of column names (a.b for a nested field, `a name` quoted with backticks): " + err.Error()
	}
	p.DataSkippingStatsColumns = cols
	return ""
}

// parseUniversalFormats takes Spark's form: formats split on commas as
// Java splits (trailing empty parts dropped), each "iceberg" or "hudi",
// none twice; "" is none.
func parseUniversalFormats(p *TableProperties, v string) string {
	fs := strings.Split(v, ",")
	for len(fs) > 0 && fs[len(fs)-1] == "" {
		fs = fs[:len(fs)-1]
	}
	for i, f := range fs {
		if (f != "iceberg" && f != "hudi") || slices.Contains(fs[:i], f) {
			return "needs to be a comma-separated list of distinct formats among iceberg, hudi"
		}
	}
	p.UniversalFormats = append([]string{}, fs...)
	return ""
}

// TablePropertyKeys lists the keys of the catalogue of table
// properties, sorted.
func TablePropertyKeys() []string { return slices.Sorted(maps.Keys(propertySpecs)) }

// KnownTableProperty reports whether key is a table property Delta knows:
// any key outside the delta. namespace (user properties), one of the
// catalogue's, or one under delta.constraints. or delta.feature.. The
// match is exact; NormalizeTableProperties fixes the case of keys first.
func KnownTableProperty(key string) bool {
	if !strings.HasPrefix(asciiLower(key), "delta.") {
		return true
	}
	if _, ok := propertySpecs[key]; ok {
		return true
	}
	return strings.HasPrefix(key, PropConstraintPrefix) || strings.HasPrefix(key, PropFeaturePrefix)
}

// canonicalKeys maps the lower-cased keys of the catalogue to their
// spelling.
var canonicalKeys = func() map[string]string {
	m := make(map[string]string, len(propertySpecs))
	for k := range propertySpecs {
		m[asciiLower(k)] = k
	}
	return m
}()

// NormalizePropertyKey returns key as Delta stores it, as Spark
// normalises the keys of CREATE TABLE and ALTER TABLE (DeltaConfigs):
// a delta.* key of the catalogue in any case takes its canonical
// spelling, a delta.feature.* key is lower-cased, any other key is kept.
func NormalizePropertyKey(key string) string {
	l := asciiLower(key)
	switch {
	case strings.HasPrefix(l, PropConstraintPrefix):
		return key
	case strings.HasPrefix(l, asciiLower(PropFeaturePrefix)):
		return l
	case strings.HasPrefix(l, "delta."):
		if k, ok := canonicalKeys[l]; ok {
			return k
		}
	}
	return key
}

// NormalizeTableProperties returns conf with its keys normalised
// (NormalizePropertyKey). Two keys that normalise to one are an error
// naming both.
func NormalizeTableProperties(conf map[string]string) (map[string]string, error) {
	out := make(map[string]string, len(conf))
	from := make(map[string]string, len(conf))
	for _, k := range slices.Sorted(maps.Keys(conf)) {
		n := NormalizePropertyKey(k)
		if prev, dup := from[n]; dup {
			return nil, fmt.Errorf("actions: table properties %q and %q are the same property %s", prev, k, n)
		}
		from[n] = k
		out[n] = conf[k]
	}
	return out, nil
}

// ConstraintKey is the table property that holds the CHECK constraint
// name: delta.constraints. and the name in lower case, as Spark names it
// (constraint names are case-insensitive).
func ConstraintKey(name string) string { return PropConstraintPrefix + strings.ToLower(name) }
