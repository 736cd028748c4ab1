package interop

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/deltasql"
	"github.com/lakelog/lakelog/reader"
	"github.com/lakelog/lakelog/test/testseed"
	"github.com/lakelog/lakelog/writer/input"
)

var csvInferLong = flag.Bool("csvinfer.long", false, "TestCSVInferenceAgainstSpark: more and larger files")

// TestCSVInferenceAgainstSpark is the differential test of CSV type
// inference: random CSV files whose columns mix the shapes users' files
// have (small and huge integers, decimals, exponents, NaN and Inf, dates,
// timestamps with and without zones, booleans in any case, text, empty
// fields, values padded with spaces, and columns whose values change
// shape part way, in either order) are read by Spark (a temporary view
// USING csv with header and inferSchema, one JVM request for all of them)
// and by lakelog (read_files with the same options). The inferred type
// of each column must be Spark's, and each value, cast to a string by
// each engine's own CAST, must be Spark's. CSVINFER_SEED replays a run;
// -csvinfer.long runs more files.
func TestCSVInferenceAgainstSpark(t *testing.T) {
	sp := requirePeer(t, spark)
	seed := testseed.From(t, "CSVINFER_SEED")
	rng := rand.New(rand.NewPCG(seed, seed^0x5bd1e995))
	nFiles, maxRows := 40, 12
	if *csvInferLong {
		nFiles, maxRows = 400, 60
	}
	dir := t.TempDir()
	type csvCase struct {
		path     string
		cols     []string
		header   bool
		sep      string
		contents string
	}
	var cases []csvCase
	stmts := []string{"SET spark.sql.session.timeZone = UTC"}
	for i := range nFiles {
		c := csvCase{path: filepath.Join(dir, fmt.Sprintf("f%d.csv", i)), header: rng.IntN(5) > 0, sep: ","}
		if rng.IntN(4) == 0 {
			c.sep = ";"
		}
		ncols := 1 + rng.IntN(5)
		styles := make([]csvStyle, ncols)
		for j := range ncols {
			c.cols = append(c.cols, fmt.Sprintf("c%d", j))
			styles[j] = csvStyles[rng.IntN(len(csvStyles))]
		}
		if !c.header {
			for j := range c.cols {
				c.cols[j] = fmt.Sprintf("_c%d", j)
			}
		}
		var b strings.Builder
		if c.header {
			b.WriteString(strings.Join(c.cols, c.sep) + "\n")
		}
		nrows := 1 + rng.IntN(maxRows)
		for range nrows {
			cells := make([]string, ncols)
			for j := range ncols {
				style := styles[j]
				if rng.IntN(8) == 0 { // a column changes shape part way
					style = csvStyles[rng.IntN(len(csvStyles))]
				}
				cells[j] = style(rng)
				if cells[j] == "" && ncols == 1 {
					cells[j] = "x" // a one-column row of "" is a blank line, which Spark skips
				}
				if strings.Contains(cells[j], c.sep) {
					cells[j] = `"` + cells[j] + `"`
				}
			}
			b.WriteString(strings.Join(cells, c.sep) + "\n")
		}
		c.contents = b.String()
		if err := os.WriteFile(c.path, []byte(c.contents), 0o644); err != nil {
			t.Fatal(err)
		}
		cases = append(cases, c)
		view := fmt.Sprintf("v%d", i)
		stmts = append(stmts,
			fmt.Sprintf("CREATE OR REPLACE TEMP VIEW %s USING csv OPTIONS (path '%s', header '%v', inferSchema 'true', sep '%s')", view, c.path, c.header, c.sep),
			"DESCRIBE "+view,
			fmt.Sprintf("SELECT %s FROM %s", castAll(c.cols), view))
	}
	res, err := sp.doWithin(request{Op: "sql_rows", Statements: stmts}, 3*time.Minute+time.Duration(len(stmts))*200*time.Millisecond)
	if err != nil {
		t.Fatalf("spark: %v", err)
	}
	if len(res.StatementRows) != len(stmts) {
		t.Fatalf("Spark answered %d statements of %d", len(res.StatementRows), len(stmts))
	}
	ctx := context.Background()
	sess := deltasql.New()
	defer sess.Close()
	differ := 0
	for i, c := range cases {
		what := fmt.Sprintf("%s (header %v, sep %q):\n%s", filepath.Base(c.path), c.header, c.sep, c.contents)
		// Types: DESCRIBE's rows are [col_name, data_type, comment].
		var sparkTypes []string
		for _, r := range res.StatementRows[1+3*i+1].Rows {
			sparkTypes = append(sparkTypes, deltaTypeName(r[1].(string)))
		}
		opts := []input.Option{input.WithFormat(input.CSV), input.WithHeader(c.header), input.WithComma(rune(c.sep[0]))}
		schema, err := input.MergeSchema(ctx, &actions.StructType{}, []string{c.path}, opts...)
		if err != nil {
			differ++
			t.Errorf("%s: lakelog cannot infer: %v", what, err)
			continue
		}
		var lakeTypes []string
		for _, f := range schema.Fields {
			lakeTypes = append(lakeTypes, f.Type.String())
		}
		if strings.Join(lakeTypes, ", ") != strings.Join(sparkTypes, ", ") {
			differ++
			t.Errorf("%s: lakelog infers (%s), Spark (%s)", what, strings.Join(lakeTypes, ", "), strings.Join(sparkTypes, ", "))
			continue
		}
		// Values, each cast to a string by its own engine.
		q := fmt.Sprintf("SELECT %s FROM read_files('%s', format => 'csv', header => %v, sep => '%s')", castAll(c.cols), c.path, c.header, c.sep)
		lake, err := lakelogStrings(ctx, sess, q)
		if err != nil {
			differ++
			t.Errorf("%s: lakelog cannot read: %v", what, err)
			continue
		}
		spark := res.StatementRows[1+3*i+2].Rows
		if len(lake) != len(spark) {
			differ++
			t.Errorf("%s: lakelog reads %d rows, Spark %d", what, len(lake), len(spark))
			continue
		}
		for r := range spark {
			for j := range spark[r] {
				var sv *string
				if s, ok := spark[r][j].(string); ok {
					sv = &s
				}
				lv := lake[r][j]
				if sv != nil && lv != nil && lakeTypes[j] == "double" && sameDouble(*sv, *lv) {
					continue // see sameDouble
				}
				if (sv == nil) != (lv == nil) || (sv != nil && *sv != *lv) {
					differ++
					t.Errorf("%s: row %d, %s (%s): lakelog %s, Spark %s", what, r+1, c.cols[j], lakeTypes[j], show(lv), show(sv))
				}
			}
		}
	}
	if differ > 0 {
		t.Errorf("%d differences from Spark (CSVINFER_SEED=%d replays)", differ, seed)
	}
}

// sameDouble compares two doubles' text by value: a double's text may
// differ in its last digits between the JVM's Double.toString, which is
// not always the shortest that round-trips, and expr's (the inference
// and the values read are what this test is about).
func sameDouble(a, b string) bool {
	x, err1 := strconv.ParseFloat(a, 64)
	y, err2 := strconv.ParseFloat(b, 64)
	return err1 == nil && err2 == nil && x == y
}

func show(s *string) string {
	if s == nil {
		return "NULL"
	}
	return fmt.Sprintf("%q", *s)
}

// castAll is CAST(c AS STRING) AS c for each column.
func castAll(cols []string) string {
	out := make([]string, len(cols))
	for i, c := range cols {
		out[i] = fmt.Sprintf("CAST(%s AS STRING) AS %s", c, c)
	}
	return strings.Join(out, ", ")
}

// deltaTypeName is a Spark SQL type name as Delta spells it.
func deltaTypeName(s string) string {
	switch s {
	case "int":
		return "integer"
	case "bigint":
		return "long"
	case "smallint":
		return "short"
	case "tinyint":
		return "byte"
	}
	return s
}

// lakelogStrings runs a query whose columns are strings and returns its
// rows.
func lakelogStrings(ctx context.Context, sess *deltasql.Session, query string) ([][]*string, error) {
	stmts, err := deltasql.Parse(query)
	if err != nil {
		return nil, err
	}
	res, err := sess.Run(ctx, stmts[0])
	if err != nil {
		return nil, err
	}
	var rows [][]*string
	for rec, err := range res.Rows() {
		if err != nil {
			return nil, err
		}
		for i := range int(rec.NumRows()) {
			line, err := reader.AppendCanonicalRow(nil, rec, i)
			if err != nil {
				return nil, err
			}
			var m map[string]*string
			if err := json.Unmarshal(line, &m); err != nil {
				return nil, err
			}
			row := make([]*string, rec.NumCols())
			for j, f := range rec.Schema().Fields() {
				row[j] = m[f.Name]
			}
			rows = append(rows, row)
		}
	}
	return rows, nil
}

// A csvStyle makes one cell of a column of some shape ("" is null).
type csvStyle func(r *rand.Rand) string

var csvStyles = []csvStyle{
	// small integers, with signs and leading zeros now and then
	func(r *rand.Rand) string {
		return pick(r, fmt.Sprint(r.IntN(2000)-1000), "+7", "007", "-0", "0", "")
	},
	// integers around and past the int and long bounds
	func(r *rand.Rand) string {
		return pick(r, "2147483647", "2147483648", "-2147483649", "9223372036854775807", "9223372036854775808",
			"-9223372036854775809", "12345678901234567890123", strings.Repeat("9", 38), strings.Repeat("9", 39), fmt.Sprint(r.Int64()))
	},
	// decimals and doubles
	func(r *rand.Rand) string {
		return pick(r, fmt.Sprintf("%.2f", r.Float64()*1000-500), "1.5", "-0.25", "1e3", "2.5E-2", "1E+10", "NaN", "Inf", "-Inf", "5.", ".5", "")
	},
	// dates
	func(r *rand.Rand) string {
		return pick(r, fmt.Sprintf("20%02d-%02d-%02d", r.IntN(40), 1+r.IntN(12), 1+r.IntN(28)), "2024-02-29", "2023-02-29", "1999-12-31", "")
	},
	// timestamps, with and without zones
	func(r *rand.Rand) string {
		return pick(r, fmt.Sprintf("2024-%02d-%02d %02d:%02d:%02d", 1+r.IntN(12), 1+r.IntN(28), r.IntN(24), r.IntN(60), r.IntN(60)),
			"2024-01-15T10:00:00Z", "2024-01-15T10:00:00.123456", "2024-01-15 10:00:00+02:00", "2024-03-10T02:30:00-08:00",
			"2024-1-5", "2024-01-15 10:00", " 2024-01-15 ", "")
	},
	// booleans
	func(r *rand.Rand) string { return pick(r, "true", "false", "TRUE", "False", "") },
	// text, some of it looking almost like numbers
	func(r *rand.Rand) string {
		return pick(r, "abc", "héllo", "1,5", "12abc", "0x1F", "yes", "null", "NULL", " 5", "3 ", "", "2024-13-01")
	},
}

func pick(r *rand.Rand, vs ...string) string { return vs[r.IntN(len(vs))] }
