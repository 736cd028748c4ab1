package actions

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Schema parses the table schema in SchemaString.
func (m *Metadata) Schema() (*StructType, error) {
	if m == nil {
		return nil, fmt.Errorf("actions: no metaData")
	}
	if m.SchemaString == "" {
		return nil, fmt.Errorf("actions: metaData %s has no schemaString", m.ID)
	}
	return ParseSchema(m.SchemaString)
}

// Prop returns the table property key and whether it is set.
func (m *Metadata) Prop(key string) (string, bool) {
	if m == nil {
		return "", false
	}
	v, ok := m.Configuration[key]
	return v, ok
}

// PropInt returns the table property key as an integer, or def when it is
// not set. A value that is not an integer is an error naming the key.
func PropInt(md *Metadata, key string, def int64) (int64, error) {
	v, ok := md.Prop(key)
	if !ok {
		return def, nil
	}
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil {
		return def, fmt.Errorf("actions: table property %s = %q is not an integer", key, v)
	}
	return n, nil
}

// PropBool returns the table property key as a boolean ("true" or
// "false", in any case), or def when it is not set. Any other value is an
// error naming the key.
func PropBool(md *Metadata, key string, def bool) (bool, error) {
	v, ok := md.Prop(key)
	if !ok {
		return def, nil
	}
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return def, fmt.Errorf("actions: table property %s = %q is not true or false", key, v)
}

// PropDuration returns the table property key as a duration, or def when
// it is not set. See ParseInterval for the forms accepted. A malformed
// value is an error naming the key.
func PropDuration(md *Metadata, key string, def time.Duration) (time.Duration, error) {
	v, ok := md.Prop(key)
	if !ok {
		return def, nil
	}
	d, err := ParseInterval(v)
	if err != nil {
		return def, fmt.Errorf("actions: table property %s: %w", key, err)
	}
	return d, nil
}

var intervalUnits = map[string]time.Duration{
	"microsecond": time.Microsecond,
	"millisecond": time.Millisecond,
	"second":      time.Second,
	"minute":      time.Minute,
	"hour":        time.Hour,
	"day":         24 * time.Hour,
	"week":        7 * 24 * time.Hour,
}

// ParseInterval parses a duration in the calendar-interval form Delta's
// table properties use: "interval 30 days", "interval 1 week", "30 days",
// "interval 1 day 12 hours". Case does not matter, "interval" is optional,
// and units are microsecond, millisecond, second, minute, hour, day and
// week, singular or plural. Each count is an integer, optionally signed.
// Months and years are refused: they have no fixed length.
func ParseInterval(s string) (time.Duration, error) {
	words := strings.Fields(strings.ToLower(s))
	if len(words) > 0 && words[0] == "interval" {
		words = words[1:]
	}
	if len(words) == 0 || len(words)%2 != 0 {
		return 0, fmt.Errorf("actions: bad interval %q, want e.g. \"interval 7 days\"", s)
	}
	var total time.Duration
	for i := 0; i < len(words); i += 2 {
		n, err := strconv.ParseInt(words[i], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("actions: bad interval %q: %q is not an integer", s, words[i])
		}
		unit := strings.TrimSuffix(words[i+1], "s")
		d, ok := intervalUnits[unit]
		if !ok {
			return 0, fmt.Errorf("actions: bad interval %q: unknown unit %q", s, words[i+1])
		}
		if n > int64(maxDuration/d) || n < -int64(maxDuration/d) {
			return 0, fmt.Errorf("actions: interval %q is too long", s)
		}
		part := time.Duration(n) * d
		if (part > 0 && total > maxDuration-part) || (part < 0 && total < -maxDuration-part) {
			return 0, fmt.Errorf("actions: interval %q is too long", s)
		}
		total += part
	}
	return total, nil
}

const maxDuration = time.Duration(1<<63 - 1)

// tableProperties are the delta.* table properties Delta's writers know
// (Spark's DeltaConfigs); a table property under delta. that is not here,
// nor under one of tablePropertyPrefixes, is refused at create, as Spark
// refuses it.
var tableProperties = map[string]bool{
	"delta.appendOnly":                                         true,
	"delta.autoOptimize.autoCompact":                           true,
	"delta.autoOptimize.optimizeWrite":                         true,
	"delta.checkpointInterval":                                 true,
	"delta.checkpointPolicy":                                   true,
	"delta.checkpointRetentionDuration":                        true,
	"delta.checkpoint.writeStatsAsJson":                        true,
	"delta.checkpoint.writeStatsAsStruct":                      true,
	"delta.columnMapping.maxColumnId":                          true,
	"delta.columnMapping.mode":                                 true,
	"delta.compatibility.symlinkFormatManifest.enabled":        true,
	"delta.dataSkippingNumIndexedCols":                         true,
	"delta.dataSkippingStatsColumns":                           true,
	"delta.deletedFileRetentionDuration":                       true,
	"delta.enableChangeDataFeed":                               true,
	"delta.enableDeletionVectors":                              true,
	"delta.enableExpiredLogCleanup":                            true,
	"delta.enableFullRetentionRollback":                        true,
	"delta.enableIcebergCompatV1":                              true,
	"delta.enableIcebergCompatV2":                              true,
	"delta.enableInCommitTimestamps":                           true,
	"delta.enableRowTracking":                                  true,
	"delta.enableTypeWidening":                                 true,
	"delta.inCommitTimestampEnablementTimestamp":               true,
	"delta.inCommitTimestampEnablementVersion":                 true,
	"delta.isolationLevel":                                     true,
	"delta.logRetentionDuration":                               true,
	"delta.minReaderVersion":                                   true,
	"delta.minWriterVersion":                                   true,
	"delta.randomPrefixLength":                                 true,
	"delta.randomizeFilePrefixes":                              true,
	"delta.rowTracking.materializedRowCommitVersionColumnName": true,
	"delta.rowTracking.materializedRowIdColumnName":            true,
	"delta.setTransactionRetentionDuration":                    true,
	"delta.targetFileSize":                                     true,
	"delta.tuneFileSizesForRewrites":                           true,
	"delta.universalFormat.enabledFormats":                     true,
}

// tablePropertyPrefixes name families of delta.* properties: CHECK
// constraints and table features (delta.feature.NAME = supported).
var tablePropertyPrefixes = []string{"delta.constraints.", "delta.feature."}

// KnownTableProperty reports whether key is a table property Delta knows:
// any key outside the delta. namespace (user properties), or one of
// Delta's own.
func KnownTableProperty(key string) bool {
	if !strings.HasPrefix(strings.ToLower(key), "delta.") {
		return true
	}
	if tableProperties[key] {
		return true
	}
	for _, p := range tablePropertyPrefixes {
		if strings.HasPrefix(key, p) {
			return true
		}
	}
	return false
}
