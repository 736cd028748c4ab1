package actions

import (
	"flag"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

var (
	propsSeed   = flag.Uint64("props.seed", 0, "seed of TestTablePropertiesRandom (0: a fresh one, printed)")
	propsTrials = flag.Int("props.trials", 3000, "configurations TestTablePropertiesRandom parses")
)

// propCase describes one property for the randomized test: how to read
// its field, its default, and a generator of random spellings that
// knows, independently of the parser, what each spelling means.
type propCase struct {
	get func(*TableProperties) any // nil: a property lakelog validates but does not keep
	def any
	// gen returns a random value and the field value it means, or ok
	// false for a value the property refuses.
	gen func(r *rand.Rand) (v string, want any, ok bool)
}

// propCases are the random-spelling generators of every property of the
// catalogue; the test fails when the catalogue has a property without one.
var propCases = map[string]propCase{
	PropAppendOnly:                   boolCase(func(p *TableProperties) any { return p.AppendOnly }, false),
	PropAutoCompact:                  enumCase([]string{"true", "false"}, true, nil, nil),
	PropOptimizeWrite:                boolCase(nil, nil),
	PropCheckpointInterval:           intCase(1, math.MaxInt32, func(p *TableProperties) any { return p.CheckpointInterval }, int64(10)),
	PropCheckpointPolicy:             enumCase([]string{"classic", "v2"}, false, func(p *TableProperties) any { return p.CheckpointPolicy }, "classic"),
	PropCheckpointRetentionDuration:  durationCase(func(p *TableProperties) any { return p.CheckpointRetention }, 2*24*time.Hour),
	PropCheckpointWriteStatsAsJSON:   boolCase(func(p *TableProperties) any { return p.CheckpointWriteStatsAsJSON }, true),
	PropCheckpointWriteStatsAsStruct: boolCase(func(p *TableProperties) any { return p.CheckpointWriteStatsAsStruct }, false),
	PropColumnMappingMaxColumnID:     intCase(math.MinInt64, math.MaxInt64, func(p *TableProperties) any { return p.ColumnMappingMaxColumnID }, int64(0)),
	PropColumnMappingMode:            enumCase([]string{"none", "id", "name"}, true, func(p *TableProperties) any { return p.ColumnMappingMode }, "none"),
	PropSymlinkFormatManifest:        boolCase(nil, nil),
	PropDataSkippingNumIndexedCols:   intCase(-1, math.MaxInt32, func(p *TableProperties) any { return p.DataSkippingNumIndexedCols }, int64(32)),
	PropDataSkippingStatsColumns:     {get: func(p *TableProperties) any { return p.DataSkippingStatsColumns }, def: [][]string(nil), gen: columnListCase},
	PropDeletedFileRetentionDuration: durationCase(func(p *TableProperties) any { return p.DeletedFileRetention }, 7*24*time.Hour),
	PropEnableChangeDataFeed:         boolCase(func(p *TableProperties) any { return p.EnableChangeDataFeed }, false),
	PropEnableChangeDataCapture:      boolCase(func(p *TableProperties) any { return p.EnableChangeDataFeed }, false),
	PropEnableDeletionVectors:        boolCase(func(p *TableProperties) any { return p.EnableDeletionVectors }, false),
	PropEnableExpiredLogCleanup:      boolCase(func(p *TableProperties) any { return p.EnableExpiredLogCleanup }, true),
	PropEnableFullRetentionRollback:  boolCase(func(p *TableProperties) any { return p.EnableFullRetentionRollback }, true),
	PropEnableIcebergCompatV1:        boolCase(func(p *TableProperties) any { return p.EnableIcebergCompatV1 }, false),
	PropEnableIcebergCompatV2:        boolCase(func(p *TableProperties) any { return p.EnableIcebergCompatV2 }, false),
	PropEnableInCommitTimestamps:     boolCase(func(p *TableProperties) any { return p.EnableInCommitTimestamps }, false),
	PropEnableRowTracking:            boolCase(func(p *TableProperties) any { return p.EnableRowTracking }, false),
	PropEnableTypeWidening:           boolCase(func(p *TableProperties) any { return p.EnableTypeWidening }, false),
	PropInCommitTimestampEnablementTime: intCase(math.MinInt64, math.MaxInt64, func(p *TableProperties) any {
		return p.InCommitTimestampEnablementTimestamp
	}, int64(0)),
	PropInCommitTimestampEnablementVer: intCase(math.MinInt64, math.MaxInt64, func(p *TableProperties) any {
		return p.InCommitTimestampEnablementVersion
	}, int64(0)),
	PropIsolationLevel:                   enumCase([]string{"Serializable", "WriteSerializable"}, true, func(p *TableProperties) any { return p.IsolationLevel }, ""),
	PropLogRetentionDuration:             durationCase(func(p *TableProperties) any { return p.LogRetention }, 30*24*time.Hour),
	PropMinReaderVersion:                 intCase(1, 3, nil, nil),
	PropMinWriterVersion:                 intCase(1, 7, nil, nil),
	PropRandomPrefixLength:               intCase(1, math.MaxInt32, func(p *TableProperties) any { return p.RandomPrefixLength }, int64(2)),
	PropRandomizeFilePrefixes:            boolCase(func(p *TableProperties) any { return p.RandomizeFilePrefixes }, false),
	PropMaterializedRowCommitVersionName: stringCase(func(p *TableProperties) any { return p.MaterializedRowCommitVersionColumnName }),
	PropMaterializedRowIDName:            stringCase(func(p *TableProperties) any { return p.MaterializedRowIDColumnName }),
	PropSetTransactionRetentionDuration:  durationCase(func(p *TableProperties) any { return p.SetTransactionRetention }, time.Duration(0)),
	PropTargetFileSize:                   intCase(1, math.MaxInt64, func(p *TableProperties) any { return p.TargetFileSize }, int64(0)),
	PropTuneFileSizesForRewrites:         boolCase(nil, nil),
	PropUniversalFormatEnabledFormats:    {get: func(p *TableProperties) any { return p.UniversalFormats }, def: []string(nil), gen: formatsCase},
	PropIcebergAtomicConversion:          boolCase(nil, nil),

	PropRequireCheckpointProtectionBeforeVersion: intCase(0, math.MaxInt64, nil, nil),
	PropWritePartitionColumnsToParquet:           boolCase(nil, nil),
}

// TestTablePropertiesRandom parses random configurations: every property
// of the catalogue, spelled at random (any case for booleans and column
// mapping modes, signs and zeros for integers, every interval unit and
// form), valid and not. Each field must hold the value the spelling means,
// or, for an invalid one, the default with an error naming the property.
func TestTablePropertiesRandom(t *testing.T) {
	seed := *propsSeed
	if seed == 0 {
		seed = rand.Uint64()
	}
	t.Logf("seed %d (replay: go test ./actions -run TestTablePropertiesRandom -props.seed %d)", seed, seed)
	for k := range propertySpecs {
		if _, ok := propCases[k]; !ok {
			t.Fatalf("property %s has no random spellings in propCases", k)
		}
	}
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	keys := slices.Sorted(maps.Keys(propCases))
	for trial := range *propsTrials {
		conf := map[string]string{"user.property": "x", "delta.constraints.c": "a > 0"}
		wants := map[string]any{}
		valid := map[string]bool{}
		for _, k := range keys {
			if r.IntN(3) == 0 {
				continue
			}
			v, want, ok := propCases[k].gen(r)
			conf[k], wants[k], valid[k] = v, want, ok
		}
		p := ParseTableProperties(conf)
		for _, k := range keys {
			c := propCases[k]
			v, set := conf[k]
			if k == PropEnableChangeDataCapture {
				if _, modern := conf[PropEnableChangeDataFeed]; modern {
					set = false // read only when the new name is unset
				}
			}
			e := p.InvalidProperty(k)
			switch {
			case set && !valid[k]:
				if e == nil {
					t.Fatalf("trial %d: %s = %q parses; it is invalid", trial, k, v)
				}
				if !strings.Contains(e.Error(), k) || e.Key != k || e.Value != v {
					t.Fatalf("trial %d: the error of %s = %q does not name it: %v", trial, k, v, e)
				}
			case e != nil:
				t.Fatalf("trial %d: %s = %q (set %v): %v", trial, k, v, set, e)
			}
			if c.get == nil || k == PropEnableChangeDataCapture {
				continue // the legacy name is checked through the new one's field
			}
			want := c.def
			_, legacy := conf[PropEnableChangeDataCapture]
			switch {
			case set && valid[k]:
				want = wants[k]
			case k == PropEnableChangeDataFeed && !set && legacy && valid[PropEnableChangeDataCapture]:
				want = wants[PropEnableChangeDataCapture]
			}
			if got := c.get(p); !reflect.DeepEqual(got, want) {
				t.Fatalf("trial %d: %s = %q: field %#v, want %#v", trial, k, v, got, want)
			}
		}
		if len(p.Invalid) > 0 && (p.Err() == nil || !strings.Contains(p.Err().Error(), p.Invalid[0].Key)) {
			t.Fatalf("trial %d: Err() = %v", trial, p.Err())
		}
	}
}

func randomCase(r *rand.Rand, s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'a' && c <= 'z' && r.IntN(2) == 0 {
			b[i] = c - 'a' + 'A'
		} else if c >= 'A' && c <= 'Z' && r.IntN(2) == 0 {
			b[i] = c - 'A' + 'a'
		}
	}
	return string(b)
}

func pad(r *rand.Rand, s string) string {
	spaces := []string{" ", "  ", "\t", "\n", " \t"}
	switch r.IntN(3) {
	case 0:
		return spaces[r.IntN(len(spaces))] + s
	case 1:
		return s + spaces[r.IntN(len(spaces))]
	}
	return spaces[r.IntN(len(spaces))] + s + spaces[r.IntN(len(spaces))]
}

func randomWord(r *rand.Rand) string {
	words := []string{"", "x", "yes", "no", "1", "0", "on", "auto", "legacy", "tru", "falsey", "null", "✓"}
	return words[r.IntN(len(words))]
}

// boolCase spells "true" and "false" in any case; padded or other words
// are invalid, as Scala's toBoolean refuses them.
func boolCase(get func(*TableProperties) any, def any) propCase {
	return propCase{get: get, def: def, gen: func(r *rand.Rand) (string, any, bool) {
		b := r.IntN(2) == 0
		s := randomCase(r, strconv.FormatBool(b))
		switch r.IntN(6) {
		case 0:
			return pad(r, s), nil, false
		case 1:
			return randomWord(r), nil, false
		}
		return s, b, true
	}}
}

func intCase(lo, hi int64, get func(*TableProperties) any, def any) propCase {
	return propCase{get: get, def: def, gen: func(r *rand.Rand) (string, any, bool) {
		var n int64
		switch r.IntN(4) {
		case 0:
			n = lo
		case 1:
			n = hi
		default:
			span := uint64(hi - lo)
			if span == math.MaxUint64 {
				n = int64(r.Uint64())
			} else {
				n = lo + int64(r.Uint64N(min(span+1, 1<<uint(r.IntN(63)+1))))
			}
		}
		s := strconv.FormatInt(n, 10)
		if n >= 0 && r.IntN(4) == 0 {
			s = "+" + s
		}
		if r.IntN(4) == 0 {
			sign := ""
			if s[0] == '+' || s[0] == '-' {
				sign, s = s[:1], s[1:]
			}
			s = sign + strings.Repeat("0", r.IntN(3)+1) + s
		}
		switch r.IntN(8) {
		case 0:
			return pad(r, s), nil, false
		case 1:
			bad := []string{"", "1.0", "1e3", "0x10", "1_000", "ten", "+-1", "--1", "9223372036854775808", "-9223372036854775809"}
			return bad[r.IntN(len(bad))], nil, false
		case 2:
			if lo > math.MinInt64 {
				return strconv.FormatInt(lo-1-r.Int64N(3), 10), nil, false
			}
		case 3:
			if hi < math.MaxInt64 {
				return strconv.FormatInt(hi+1+r.Int64N(3), 10), nil, false
			}
		}
		return s, n, true
	}}
}

func enumCase(values []string, fold bool, get func(*TableProperties) any, def any) propCase {
	return propCase{get: get, def: def, gen: func(r *rand.Rand) (string, any, bool) {
		v := values[r.IntN(len(values))]
		s := v
		if fold {
			s = randomCase(r, v)
		}
		switch r.IntN(5) {
		case 0:
			return pad(r, s), nil, false
		case 1:
			return randomWord(r), nil, false
		case 2:
			if !fold && strings.ToUpper(v) != v {
				return strings.ToUpper(v), nil, false
			}
		}
		return s, v, true
	}}
}

func stringCase(get func(*TableProperties) any) propCase {
	return propCase{get: get, def: "", gen: func(r *rand.Rand) (string, any, bool) {
		s := pad(r, randomWord(r)+"_col")
		return s, s, true
	}}
}

// intervalUnits are the units of Spark's intervals with a fixed length.
var intervalUnits = []struct {
	name string
	d    time.Duration
}{
	{"week", 7 * 24 * time.Hour}, {"day", 24 * time.Hour}, {"hour", time.Hour}, {"minute", time.Minute},
	{"second", time.Second}, {"millisecond", time.Millisecond}, {"microsecond", time.Microsecond},
}

// durationCase writes random intervals: "interval" or not, one to three
// terms of random units, plural or not, in any case, signed counts,
// fractional seconds, runs of whitespace; months, years, negative totals,
// fractions of other units and unknown units are invalid.
func durationCase(get func(*TableProperties) any, def any) propCase {
	return propCase{get: get, def: def, gen: func(r *rand.Rand) (string, any, bool) {
		var terms []string
		var total time.Duration
		for range r.IntN(3) + 1 {
			u := intervalUnits[r.IntN(len(intervalUnits))]
			n := r.Int64N(1000)
			if r.IntN(6) == 0 {
				n = -n
			}
			count := strconv.FormatInt(n, 10)
			if n >= 0 && r.IntN(5) == 0 {
				count = "+" + count
			}
			d := time.Duration(n) * u.d
			if u.name == "second" && r.IntN(3) == 0 {
				frac := r.IntN(1000)
				count = fmt.Sprintf("%s.%03d", count, frac)
				if n < 0 || strings.HasPrefix(count, "-") {
					d -= time.Duration(frac) * time.Millisecond
				} else {
					d += time.Duration(frac) * time.Millisecond
				}
			}
			unit := u.name
			if r.IntN(2) == 0 {
				unit += "s"
			}
			sep := []string{" ", "  ", "\t"}[r.IntN(3)]
			terms = append(terms, count+sep+unit)
			total += d
		}
		s := strings.Join(terms, []string{" ", "   "}[r.IntN(2)])
		if r.IntN(2) == 0 {
			s = "interval " + s
		}
		s = randomCase(r, s)
		if r.IntN(4) == 0 {
			s = pad(r, s) // intervals are trimmed
		}
		switch r.IntN(8) {
		case 0:
			return s + " 1 " + []string{"month", "year", "months", "years"}[r.IntN(4)], nil, false
		case 1:
			bad := []string{"", "interval", "7", "days", "interval 1 fortnight", "1.5 days", "1 day 2", "x days", "1 dayz", "1 day,", "interval1 day"}
			return bad[r.IntN(len(bad))], nil, false
		}
		if total < 0 {
			return s, nil, false
		}
		return s, total, true
	}}
}

// columnListCase writes random lists of column paths: plain or
// backquoted names (with dots, spaces, commas and doubled backticks
// inside), whitespace around names, dots and commas.
func columnListCase(r *rand.Rand) (string, any, bool) {
	sp := func() string { return []string{"", "", " ", "  ", "\t"}[r.IntN(5)] }
	n := r.IntN(4)
	if n == 0 {
		return sp(), [][]string{}, true
	}
	var items []string
	var want [][]string
	for range n {
		var parts []string
		var names []string
		for range r.IntN(3) + 1 {
			var name, text string
			switch r.IntN(4) {
			case 0:
				name = []string{"a b", "x.y", "c,d", "we`ird", "é", "1", "", "-"}[r.IntN(8)]
				text = "`" + strings.ReplaceAll(name, "`", "``") + "`"
			default:
				name = []string{"a", "B", "col_1", "_x", "value2", "Id", "x1y"}[r.IntN(7)]
				text = name
			}
			names = append(names, name)
			parts = append(parts, sp()+text+sp())
		}
		items = append(items, strings.Join(parts, "."))
		want = append(want, names)
	}
	s := strings.Join(items, ",")
	switch r.IntN(6) {
	case 0:
		bad := []string{s + ",", "," + s, s + ",,a", "`a", "123", "a-b", "1L", "2e5", ".a", "é"}
		return bad[r.IntN(len(bad))], nil, false
	}
	return s, want, true
}

func formatsCase(r *rand.Rand) (string, any, bool) {
	switch r.IntN(6) {
	case 0:
		return []string{"", ",", ",,"}[r.IntN(3)], []string{}, true
	case 1:
		bad := []string{"iceberg,iceberg", "iceberg, hudi", "Iceberg", "delta", ",iceberg", "hudi,,iceberg"}
		return bad[r.IntN(len(bad))], nil, false
	}
	fs := []string{"iceberg", "hudi"}
	r.Shuffle(2, func(i, j int) { fs[i], fs[j] = fs[j], fs[i] })
	fs = fs[:r.IntN(2)+1]
	return strings.Join(fs, ",") + []string{"", ","}[r.IntN(2)], fs, true
}

func TestParseInterval(t *testing.T) {
	for in, want := range map[string]Interval{
		"interval 30 days":           {Days: 30},
		"30 days":                    {Days: 30},
		"INTERVAL 1 WEEK":            {Days: 7},
		"interval 1 day 12 hours":    {Days: 1, Micros: 12 * 3600e6},
		"1 hour 30 minutes 5 second": {Micros: 5405e6},
		"250 milliseconds":           {Micros: 250e3},
		"1 microsecond":              {Micros: 1},
		"interval -1 days":           {Days: -1},
		"  interval   2   weeks  ":   {Days: 14},
		"1.5 seconds":                {Micros: 1.5e6},
		"-1.25 seconds":              {Micros: -1.25e6},
		".5 seconds":                 {Micros: 5e5},
		"1 day -1 hour":              {Days: 1, Micros: -3600e6},
		"- 3 days":                   {Days: -3},
		"1 month":                    {Months: 1},
		"2 years 1 month":            {Months: 25},
		"15000 weeks 15000 weeks":    {Days: 210000},
	} {
		got, err := ParseInterval(in)
		if err != nil || got != want {
			t.Errorf("%q = %+v, %v; want %+v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "interval", "30", "days", "x days", "1.5 days", "interval 1 day 2", "1 dayz",
		"1000000000 weeks", "3000000000 days", "1 day,", "1..5 seconds", "1.0000000001 seconds", "interval\t1\tday", "1e3 days"} {
		if got, err := ParseInterval(in); err == nil {
			t.Errorf("%q = %+v, want an error", in, got)
		}
	}
	if d, err := ParseDuration("interval 7 days"); err != nil || d != 7*24*time.Hour {
		t.Errorf("ParseDuration = %v, %v", d, err)
	}
	if _, err := ParseDuration("1 month"); err == nil {
		t.Error("a month has a fixed length")
	}
	if d, _ := ParseDuration("2000000 days"); d != time.Duration(math.MaxInt64) {
		t.Errorf("2000000 days = %v, want the longest duration", d)
	}
}

func FuzzParseInterval(f *testing.F) {
	for _, s := range []string{"interval 1 day", "1.5 seconds", "-1 week 2 hours", ".5 s", "interval"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		iv, err := ParseInterval(s)
		if err != nil {
			return
		}
		iv.Duration()
	})
}

func TestParseColumnList(t *testing.T) {
	// Checked against Spark 4.4's DeltaSqlParserUtils.parseMultipartColumnList.
	for in, want := range map[string][][]string{
		"":                       {},
		"  ":                     {},
		"\f":                     {},
		"a":                      {{"a"}},
		" a , b.c ":              {{"a"}, {"b", "c"}},
		"`x.y`,`a``b`.c":         {{"x.y"}, {"a`b", "c"}},
		"a . b":                  {{"a", "b"}},
		"x1, _y, 1x, a1L, a.b.c": {{"x1"}, {"_y"}, {"1x"}, {"a1L"}, {"a", "b", "c"}},
		"select":                 {{"select"}},
		"a.":                     {{"a"}},
		"a b":                    {{"a"}},
		"a;b":                    {{"a"}},
		"a.1":                    {{"a"}},
		"a.1b":                   {{"a", "1b"}},
		"a /* c */":              {{"a"}},
		"a , b c":                {{"a"}, {"b"}},
		"a.b c.d, e":             {{"a", "b"}},
		"a..b":                   {{"a"}},
		"a.`":                    {{"a"}},
		"a--x\n,b":               {{"a"}, {"b"}},
		"a.`b`c":                 {{"a", "b"}},
		"x.1e5":                  {{"x"}},
		"a$b":                    {{"a"}},
		"a . 1x":                 {{"a", "1x"}},
		"`é`":                    {{"é"}},
	} {
		got, err := ParseColumnList(in)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%q = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{",", "a,", ",a", "a,,b", "a,b,", ".a", "`a", "1", "12L", "1e5", "a-b", "é"} {
		if got, err := ParseColumnList(in); err == nil {
			t.Errorf("%q = %q, want an error", in, got)
		}
	}
}

func TestNormalizeTableProperties(t *testing.T) {
	got, err := NormalizeTableProperties(map[string]string{
		"DELTA.enablechangedatafeed":    "true",
		"delta.Feature.DeletionVectors": "supported",
		"delta.constraints.Positive":    "x > 0",
		"Owner":                         "ops",
		"delta.unknownThing":            "1",
	})
	want := map[string]string{
		"delta.enableChangeDataFeed":    "true",
		"delta.feature.deletionvectors": "supported",
		"delta.constraints.Positive":    "x > 0",
		"Owner":                         "ops",
		"delta.unknownThing":            "1",
	}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("NormalizeTableProperties = %v, %v; want %v", got, err, want)
	}
	if _, err := NormalizeTableProperties(map[string]string{"delta.appendOnly": "true", "delta.APPENDONLY": "false"}); err == nil || !strings.Contains(err.Error(), "delta.APPENDONLY") {
		t.Errorf("two spellings of one key: %v", err)
	}
	if KnownTableProperty("delta.enablechangedatafeed") || !KnownTableProperty("delta.enableChangeDataFeed") || !KnownTableProperty("owner") {
		t.Error("KnownTableProperty matches keys exactly")
	}
}
