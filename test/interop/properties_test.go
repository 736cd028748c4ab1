package interop

import (
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lakelog/lakelog/actions"
)

var (
	propsSeed   = flag.Uint64("props.seed", 0, "seed of TestTablePropertiesSpark (0: a fresh one, printed)")
	propsValues = flag.Int("props.values", 60, "random values per property in TestTablePropertiesSpark")
)

// propertyKinds says how TestTablePropertiesSpark spells each property of
// lakelog's catalogue and which field of actions.TableProperties holds it
// ("" for a property lakelog validates but does not keep).
var propertyKinds = map[string]struct{ kind, field string }{
	actions.PropAppendOnly:                               {"bool", "AppendOnly"},
	actions.PropAutoCompact:                              {"enum", ""},
	actions.PropOptimizeWrite:                            {"bool", ""},
	actions.PropCheckpointInterval:                       {"int", "CheckpointInterval"},
	actions.PropCheckpointPolicy:                         {"enum", "CheckpointPolicy"},
	actions.PropCheckpointRetentionDuration:              {"interval", "CheckpointRetention"},
	actions.PropCheckpointWriteStatsAsJSON:               {"bool", "CheckpointWriteStatsAsJSON"},
	actions.PropCheckpointWriteStatsAsStruct:             {"bool", "CheckpointWriteStatsAsStruct"},
	actions.PropColumnMappingMaxColumnID:                 {"int", "ColumnMappingMaxColumnID"},
	actions.PropColumnMappingMode:                        {"enum", "ColumnMappingMode"},
	actions.PropSymlinkFormatManifest:                    {"bool", ""},
	actions.PropDataSkippingNumIndexedCols:               {"int", "DataSkippingNumIndexedCols"},
	actions.PropDataSkippingStatsColumns:                 {"columns", "DataSkippingStatsColumns"},
	actions.PropDeletedFileRetentionDuration:             {"interval", "DeletedFileRetention"},
	actions.PropEnableChangeDataFeed:                     {"bool", "EnableChangeDataFeed"},
	actions.PropEnableChangeDataCapture:                  {"bool", "EnableChangeDataFeed"},
	actions.PropEnableDeletionVectors:                    {"bool", "EnableDeletionVectors"},
	actions.PropEnableExpiredLogCleanup:                  {"bool", "EnableExpiredLogCleanup"},
	actions.PropEnableFullRetentionRollback:              {"bool", "EnableFullRetentionRollback"},
	actions.PropEnableIcebergCompatV1:                    {"bool", "EnableIcebergCompatV1"},
	actions.PropEnableIcebergCompatV2:                    {"bool", "EnableIcebergCompatV2"},
	actions.PropEnableInCommitTimestamps:                 {"bool", "EnableInCommitTimestamps"},
	actions.PropEnableRowTracking:                        {"bool", "EnableRowTracking"},
	actions.PropEnableTypeWidening:                       {"bool", "EnableTypeWidening"},
	actions.PropInCommitTimestampEnablementTime:          {"int", "InCommitTimestampEnablementTimestamp"},
	actions.PropInCommitTimestampEnablementVer:           {"int", "InCommitTimestampEnablementVersion"},
	actions.PropIsolationLevel:                           {"enum", "IsolationLevel"},
	actions.PropLogRetentionDuration:                     {"interval", "LogRetention"},
	actions.PropMinReaderVersion:                         {"int", ""},
	actions.PropMinWriterVersion:                         {"int", ""},
	actions.PropRandomPrefixLength:                       {"int", "RandomPrefixLength"},
	actions.PropRandomizeFilePrefixes:                    {"bool", "RandomizeFilePrefixes"},
	actions.PropMaterializedRowCommitVersionName:         {"word", "MaterializedRowCommitVersionColumnName"},
	actions.PropMaterializedRowIDName:                    {"word", "MaterializedRowIDColumnName"},
	actions.PropSetTransactionRetentionDuration:          {"interval", "SetTransactionRetention"},
	actions.PropTargetFileSize:                           {"int", "TargetFileSize"},
	actions.PropTuneFileSizesForRewrites:                 {"bool", ""},
	actions.PropUniversalFormatEnabledFormats:            {"formats", "UniversalFormats"},
	actions.PropIcebergAtomicConversion:                  {"bool", ""},
	actions.PropRequireCheckpointProtectionBeforeVersion: {"int", ""},
	actions.PropWritePartitionColumnsToParquet:           {"bool", ""},
}

// knownDifferences are values lakelog takes on purpose where Spark
// refuses them: WriteSerializable, lakelog's default isolation level,
// which Spark reads but will not set.
func knownDifference(key, value string) bool {
	return key == actions.PropIsolationLevel && strings.EqualFold(value, actions.IsolationWriteSerializable)
}

// TestTablePropertiesSpark is a differential test of the one parser of
// table properties against Delta's own (Spark 4.4's DeltaConfigs): random
// spellings of every property, valid and not, must be accepted or refused
// alike and, when accepted, mean the same value.
func TestTablePropertiesSpark(t *testing.T) {
	sp := requirePeer(t, spark)
	seed := *propsSeed
	if seed == 0 {
		seed = rand.Uint64()
	}
	t.Logf("seed %d (replay: go test ./test/interop -run TestTablePropertiesSpark -props.seed %d)", seed, seed)
	r := rand.New(rand.NewPCG(seed, 0x5eed))
	var pairs [][2]string
	for _, key := range actions.TablePropertyKeys() {
		k, ok := propertyKinds[key]
		if !ok {
			t.Fatalf("property %s has no kind in propertyKinds", key)
		}
		for range *propsValues {
			pairs = append(pairs, [2]string{key, spellValue(r, key, k.kind)})
		}
	}
	resp := sp.call(t, request{Op: "properties", Pairs: pairs})
	if len(resp.Result) != len(pairs) {
		t.Fatalf("spark answered %d of %d values", len(resp.Result), len(pairs))
	}
	unknown := map[string]bool{}
	compared, accepted := 0, 0
	for i, pair := range pairs {
		key, value := pair[0], pair[1]
		status, sparkValue := *resp.Result[i][0], *resp.Result[i][1]
		if status == "unknown" {
			unknown[key] = true
			continue
		}
		props := actions.ParseTableProperties(map[string]string{key: value})
		e := props.InvalidProperty(key)
		lakelogOK := e == nil
		sparkOK := status == "ok"
		compared++
		if lakelogOK != sparkOK {
			if knownDifference(key, value) {
				continue
			}
			t.Errorf("%s = %q: lakelog valid %v (%v), Spark valid %v (%s)", key, value, lakelogOK, e, sparkOK, sparkValue)
			continue
		}
		if !sparkOK {
			continue
		}
		accepted++
		if field := propertyKinds[key].field; field != "" {
			got := reflect.ValueOf(*props).FieldByName(field).Interface()
			if !sameValue(t, propertyKinds[key].kind, got, sparkValue) {
				t.Errorf("%s = %q: lakelog reads %#v, Spark %q", key, value, got, sparkValue)
			}
		}
	}
	t.Logf("%d values compared (%d valid); properties Spark does not know: %v", compared, accepted, unknown)
	if accepted == 0 || accepted == compared {
		t.Fatalf("the values were all valid or all invalid (%d of %d valid): the generator is broken", accepted, compared)
	}
}

// sameValue compares lakelog's typed value with Spark's text of it.
func sameValue(t *testing.T, kind string, got any, spark string) bool {
	switch kind {
	case "interval":
		var months, days, micros int64
		if _, err := fmt.Sscan(spark, &months, &days, &micros); err != nil || months != 0 {
			t.Errorf("Spark's interval %q: %v", spark, err)
			return false
		}
		return got.(time.Duration) == time.Duration(days)*24*time.Hour+time.Duration(micros)*time.Microsecond
	case "columns":
		var want [][]string
		if err := json.Unmarshal([]byte(spark), &want); err != nil {
			t.Errorf("Spark's columns %q: %v", spark, err)
			return false
		}
		return reflect.DeepEqual(got, want)
	case "formats":
		return strings.Join(got.([]string), ",") == spark
	}
	return fmt.Sprint(got) == spark
}

// spellValue writes a random value for a property of kind: right and
// wrong spellings in even measure.
func spellValue(r *rand.Rand, key, kind string) string {
	pick := func(xs ...string) string { return xs[r.IntN(len(xs))] }
	switch kind {
	case "bool":
		return mutate(r, randomCase(r, pick("true", "false")), "yes", "1", "", "t", "on", "falſe", "truе")
	case "int":
		n := pick("0", "1", "-1", "2", "3", "7", "8", "10", "32", "2147483647", "2147483648", "-2147483648", "-2147483649",
			"9223372036854775807", "9223372036854775808", "-9223372036854775808", "4611686018427387904")
		if r.IntN(4) == 0 {
			n = strconv.FormatInt(r.Int64N(1<<uint(r.IntN(62)+1)), 10)
		}
		switch r.IntN(6) {
		case 0:
			n = "+" + n
		case 1:
			n = "00" + n
		}
		return mutate(r, n, "1.0", "1e3", "0x10", "1_000", "ten", "--1", "+")
	case "enum":
		vals := map[string][]string{
			actions.PropAutoCompact:       {"true", "false", "falſe"},
			actions.PropCheckpointPolicy:  {"classic", "v2"},
			actions.PropColumnMappingMode: {"none", "id", "name"},
			actions.PropIsolationLevel:    {"Serializable", "WriteSerializable", "SnapshotIsolation"},
		}[key]
		return mutate(r, randomCase(r, pick(vals...)), "", "position", "serial")
	case "interval":
		return mutate(r, randomInterval(r), "", "interval", "7", "days", "1 fortnight", "1.5 days", "1 day 2", "1 dayss", "x days", "1 sec", "interval\t1 day")
	case "columns":
		return randomColumns(r)
	case "formats":
		var parts []string
		for range r.IntN(3) {
			parts = append(parts, pick("iceberg", "hudi", "Iceberg", " hudi", "", "delta"))
		}
		return strings.Join(parts, ",")
	}
	return pick("", "x", "auto", "legacy", "true", "a b", "_col")
}

// mutate returns s, or (a third of the time) a padded s or a wrong value.
func mutate(r *rand.Rand, s string, wrong ...string) string {
	switch r.IntN(6) {
	case 0:
		return []string{" ", "\t", "\n", "\x0b", "\x7f"}[r.IntN(5)] + s
	case 1:
		return s + []string{" ", "\t", "\n", "\x0b", "\x7f"}[r.IntN(5)]
	case 2:
		return wrong[r.IntN(len(wrong))]
	}
	return s
}

func randomCase(r *rand.Rand, s string) string {
	b := []byte(s)
	for i, c := range b {
		if r.IntN(2) == 0 {
			switch {
			case c >= 'a' && c <= 'z':
				b[i] = c - 'a' + 'A'
			case c >= 'A' && c <= 'Z':
				b[i] = c - 'A' + 'a'
			}
		}
	}
	return string(b)
}

func randomInterval(r *rand.Rand) string {
	units := []string{"year", "month", "week", "day", "hour", "minute", "second", "millisecond", "microsecond"}
	var terms []string
	for range r.IntN(3) + 1 {
		n := strconv.Itoa(r.IntN(2000))
		switch r.IntN(8) {
		case 0:
			n = "-" + n
		case 1:
			n = "+" + n
		case 2:
			n += "." + strconv.Itoa(r.IntN(1000))
		case 3:
			n = "- " + n
		}
		u := units[r.IntN(len(units))]
		if r.IntN(2) == 0 {
			u += "s"
		}
		terms = append(terms, n+[]string{" ", "  ", "\t"}[r.IntN(3)]+u)
	}
	s := strings.Join(terms, " ")
	if r.IntN(2) == 0 {
		s = "interval " + s
	}
	return randomCase(r, s)
}

// randomColumns writes random column lists from names, backquoted names,
// dots, commas, whitespace and stray tokens.
func randomColumns(r *rand.Rand) string {
	pieces := []string{"a", "B", "col_1", "_x", "1x", "x1", "select", "`a.b`", "`c,d`", "`we``ird`", "`é`", "``",
		".", ".", ",", ",", ", ", " . ", " ", "\t", "-", ";", "1", "12L", "1e5", "1e-5", "é", "/* c */", "--c\n", "`"}
	var b strings.Builder
	for range r.IntN(7) {
		b.WriteString(pieces[r.IntN(len(pieces))])
	}
	return b.String()
}
