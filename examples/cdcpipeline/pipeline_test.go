package main

import (
	"bytes"
	"cmp"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"iter"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	s3sdk "github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/cdc"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/maintenance"
	"github.com/lakelog/lakelog/objstore/cloudtest"
	"github.com/lakelog/lakelog/objstore/s3"
	"github.com/lakelog/lakelog/reader"
	"github.com/lakelog/lakelog/test/cdctest"
	"github.com/lakelog/lakelog/test/testseed"
)

var pipelineSoak = flag.Bool("pipeline.soak", false, "run the pipeline tests longer: more rounds, rows and kills")

// autoCompactMinFiles is the stages' auto compaction threshold: Spark's
// 50 is more files than a CI-size run writes.
const autoCompactMinFiles = 10

// mainEnv makes the test binary run main: the stages must be processes
// that a SIGKILL really ends.
const mainEnv = "CDCPIPELINE_TEST_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(mainEnv) == "1" {
		main()
	}
	os.Exit(m.Run())
}

// stage is a pipeline process the test kills and restarts.
type stage struct {
	t    *testing.T
	name string
	args []string
	log  *os.File
	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{}
}

func newStage(t *testing.T, dir, name string, args ...string) *stage {
	f, err := os.Create(filepath.Join(dir, name+".log"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return &stage{t: t, name: name, args: args, log: f}
}

func (s *stage) start() {
	s.mu.Lock()
	defer s.mu.Unlock()
	cmd := exec.Command(os.Args[0], s.args...)
	cmd.Env = append(os.Environ(), mainEnv+"=1")
	cmd.Stdout, cmd.Stderr = s.log, s.log
	if err := cmd.Start(); err != nil {
		s.t.Fatal(err)
	}
	s.cmd, s.done = cmd, make(chan struct{})
	go func(done chan struct{}) {
		cmd.Wait()
		close(done)
	}(s.done)
}

// kill ends the process with sig and waits for it.
func (s *stage) kill(sig syscall.Signal) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return
	}
	s.cmd.Process.Signal(sig)
	select {
	case <-s.done:
	case <-time.After(30 * time.Second):
		s.cmd.Process.Kill()
		<-s.done
	}
	fmt.Fprintf(s.log, "--- test: %s sent %v ---\n", s.name, sig)
	s.cmd = nil
}

// exited reports a process that ended by itself (an error).
func (s *stage) exited() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return false
	}
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}

func (s *stage) logText() string {
	b, _ := os.ReadFile(s.log.Name())
	return string(b)
}

// TestPipelineLocal runs Postgres -> Debezium -> Kafka -> bronze -> silver
// with the tables on local disk.
func TestPipelineLocal(t *testing.T) {
	svc := cdctest.Require(t)
	dir := t.TempDir()
	runPipeline(t, svc, dir, filepath.Join(dir, "bronze"), filepath.Join(dir, "silver"))
}

// TestPipelineMinIO: the same with the tables on MinIO.
func TestPipelineMinIO(t *testing.T) {
	svc := cdctest.Require(t)
	cloudtest.Require(t, "AWS_ENDPOINT_URL", "MinIO")
	bucket := cloudtest.Name("lakelog-cdc-")
	st, err := s3.New(t.Context(), bucket, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Client().CreateBucket(t.Context(), &s3sdk.CreateBucketInput{Bucket: &bucket}); err != nil {
		t.Fatal(err)
	}
	runPipeline(t, svc, t.TempDir(), "s3://"+bucket+"/bronze", "s3://"+bucket+"/silver")
}

// column is a column of the test's source table: its Postgres type, the
// SQL that prints a value canonically, and a generator of SQL literals.
type column struct {
	name, pgType string
	text         string // SQL of the canonical text, %s the column
	gen          func(r *rand.Rand) string
	notNull      bool
}

func intGen(lim int64) func(*rand.Rand) string {
	return func(r *rand.Rand) string {
		switch r.IntN(10) {
		case 0:
			return fmt.Sprint(lim - 1)
		case 1:
			return fmt.Sprint(-lim)
		}
		return fmt.Sprint(r.Int64N(2*lim) - lim)
	}
}

// The source table: the types of a real table, with edge values and
// values large enough to be TOASTed out of line.
var sourceColumns = []column{
	{"n", "integer", "%s::text", intGen(math.MaxInt32 + 1), false},
	{"s", "smallint", "%s::text", intGen(math.MaxInt16 + 1), false},
	{"amount", "numeric(12,2)", "%s::text", func(r *rand.Rand) string {
		return fmt.Sprintf("%d.%02d", r.Int64N(2e10)-1e10, r.IntN(100))
	}, false},
	// Debezium drops an unconstrained numeric's trailing zeros (1.50
	// comes as 1.5): the value is kept, its display scale is not.
	{"anynum", "numeric", "trim_scale(%s)::text", func(r *rand.Rand) string {
		return []string{"0", "-0.000001", "3.14159265358979323846264338327950288", "12345678901234567890.5", "1.50"}[r.IntN(5)]
	}, false},
	{"title", "text", "%s", func(r *rand.Rand) string {
		if r.IntN(4) == 0 {
			return fmt.Sprintf("big_text(%d)", 100+r.IntN(300)) // TOASTed
		}
		return []string{"''", "'ann'", "'x,y \"q\" ä'", "'it''s'"}[r.IntN(4)]
	}, false},
	{"code", "varchar(20)", "%s::text", func(r *rand.Rand) string { return fmt.Sprintf("'c%d'", r.IntN(1000)) }, false},
	{"flag", "boolean", "%s::text", func(r *rand.Rand) string { return []string{"true", "false"}[r.IntN(2)] }, false},
	{"ts", "timestamptz", "(extract(epoch from %s)*1000000)::bigint::text", func(r *rand.Rand) string {
		return fmt.Sprintf("'%s'", time.UnixMicro(r.Int64N(4e15)-1e15).UTC().Format("2006-01-02 15:04:05.999999Z07:00"))
	}, false},
	{"tsntz", "timestamp", "(extract(epoch from %s)*1000000)::bigint::text", func(r *rand.Rand) string {
		return fmt.Sprintf("'%s'", time.UnixMicro(r.Int64N(4e15)-1e15).UTC().Format("2006-01-02 15:04:05.999999"))
	}, false},
	{"d", "date", "(%s - date '1970-01-01')::text", func(r *rand.Rand) string {
		return fmt.Sprintf("'%s'", time.Unix(r.Int64N(4e10)-2e10, 0).UTC().Format(time.DateOnly))
	}, false},
	{"tm", "time", "%s::text", func(r *rand.Rand) string {
		return fmt.Sprintf("'%s'", time.UnixMicro(r.Int64N(86400e6)).UTC().Format("15:04:05.999999"))
	}, false},
	{"doc", "jsonb", "%s::text", func(r *rand.Rand) string {
		if r.IntN(4) == 0 {
			return fmt.Sprintf(`('{"k": "' || big_text(%d) || '"}')::jsonb`, 100+r.IntN(300))
		}
		return []string{`'{}'`, `'[1, 2.5, null]'`, `'{"a": {"b": "ä"}}'`}[r.IntN(3)]
	}, false},
	{"uid", "uuid", "%s::text", func(r *rand.Rand) string {
		return fmt.Sprintf("'%08x-0000-4000-8000-%012x'", r.Uint32(), r.Uint64()>>16)
	}, false},
	{"raw", "bytea", "encode(%s, 'hex')", func(r *rand.Rand) string {
		if r.IntN(4) == 0 {
			return fmt.Sprintf("decode(big_text(%d), 'hex')", 100+r.IntN(300))
		}
		return []string{`'\x'`, `'\x00ff10'`}[r.IntN(2)]
	}, false},
	{"tags", "text[]", "array_to_json(%s)::text", func(r *rand.Rand) string {
		if r.IntN(4) == 0 {
			return fmt.Sprintf("array[big_text(%d), 'b']", 100+r.IntN(300))
		}
		return []string{`'{}'`, `'{"x","y,z",NULL,""}'`}[r.IntN(2)]
	}, false},
	{"ratio", "double precision", "%s::text", func(r *rand.Rand) string {
		return []string{"'NaN'", "'Infinity'", "'-Infinity'", "0.3333333333333333", "-1e308", fmt.Sprint(float64(r.IntN(1e9)) / 1e4)}[r.IntN(6)]
	}, false},
	{"r", "real", "%s::text", func(r *rand.Rand) string { return []string{"1.5", "'NaN'", "-0.25", "3.4e38"}[r.IntN(4)] }, false},
}

// runPipeline drives a Postgres workload on a table of every type (large
// values TOASTed and updated under the default replica identity, source
// transactions of many rows, each schema change: a numeric's scale, a
// NOT NULL column with a default, smallint widened, a rename, a drop,
// TRUNCATE) while bronze and silver are killed with SIGKILL and
// restarted; then silver equals the table row for row and column by
// column, bronze holds each source change once, and no silver version
// shows part of a source transaction.
func runPipeline(t *testing.T, svc cdctest.Services, dir, bronzeURI, silverURI string) {
	seed := testseed.From(t, "PIPELINE_SEED")
	rng := rand.New(rand.NewPCG(seed, 1))
	rounds, kills := 30, 6
	if *pipelineSoak {
		rounds, kills = 200, 40
	}
	table := strings.ReplaceAll(cloudtest.Name("cdc_"), "-", "_")
	cols := slices.Clone(sourceColumns)
	var ddl []string
	for _, c := range cols {
		ddl = append(ddl, c.name+" "+c.pgType)
	}
	svc.Psql(t, `create or replace function big_text(n int) returns text language sql as $$ select string_agg(md5(g::text || random()::text), '') from generate_series(1, n) g $$;`)
	svc.Psql(t, fmt.Sprintf("create table %s (id bigint primary key, blk int, %s)", table, strings.Join(ddl, ", ")))
	t.Cleanup(func() { svc.PsqlErr("drop table if exists " + table) })
	nextID := int64(1)
	insert := func(sql *strings.Builder, n int, blk int) { insertRows(sql, rng, table, cols, &nextID, n, blk) }
	var seedSQL strings.Builder
	insert(&seedSQL, 20, 0)
	svc.Psql(t, seedSQL.String()) // read by the connector's snapshot

	name := table
	svc.Connector(t, svc.Connect, name, svc.ConnectorConfig(name, "public."+table))
	topic := name + ".public." + table
	bronze := newStage(t, dir, "bronze", "bronze", "-table", bronzeURI, "-brokers", svc.Brokers, "-topic", topic,
		"-tx-topic", name+".transaction", "-group", table, "-instance-id", table+"-bronze", "-numeric", "string", "-max-wait", "300ms",
		"-auto-compact-min-files", fmt.Sprint(autoCompactMinFiles))
	silver := newStage(t, dir, "silver", "silver", "-bronze", bronzeURI, "-table", silverURI, "-poll", "100ms", "-auto-compact-min-files", fmt.Sprint(autoCompactMinFiles))
	bronze.start()
	silver.start()
	defer func() {
		bronze.kill(syscall.SIGTERM)
		silver.kill(syscall.SIGTERM)
		if t.Failed() {
			t.Logf("bronze's log:\n%s", tail(bronze.logText(), 40))
			t.Logf("silver's log:\n%s", tail(silver.logText(), 40))
		}
	}()

	// The killer: at random times, SIGKILL one stage and restart it.
	stop := make(chan struct{})
	killed := make(chan int)
	go func() {
		n := 0
		defer func() { killed <- n }()
		krng := rand.New(rand.NewPCG(seed, 2))
		for n < kills {
			select {
			case <-stop:
				return
			case <-time.After(time.Duration(500+krng.IntN(3000)) * time.Millisecond):
			}
			s := bronze
			if krng.IntN(2) == 0 {
				s = silver
			}
			s.kill(syscall.SIGKILL)
			time.Sleep(time.Duration(krng.IntN(500)) * time.Millisecond)
			s.start()
			n++
		}
	}()

	// The workload, with a schema change at some rounds.
	blocks := map[int]int{} // a transaction's block -> its rows
	changes := map[int]string{
		rounds * 2 / 12:  "alter table %s alter column amount type numeric(14,3)",
		rounds * 4 / 12:  "alter table %s add column seven int not null default 7",
		rounds * 5 / 12:  "alter table %s alter column s type integer; update %[1]s set s = 100000 + id where id %% 3 = 0",
		rounds * 7 / 12:  "alter table %s rename column code to label",
		rounds * 8 / 12:  "alter table %s drop column r",
		rounds * 10 / 12: "truncate %s",
	}
	for round := range rounds {
		if bronze.exited() || silver.exited() {
			t.Fatalf("a stage died by itself (round %d)", round)
		}
		var sql strings.Builder
		if round == rounds*2/12 {
			// Before the first schema change (a widening): delta-rs reads
			// silver as Postgres has it.
			waitSilverEqual(t, svc, table, cols, silverURI, []*stage{bronze, silver})
			checkDeltaRS(t, silverURI, cols, false)
		}
		if ch, ok := changes[round]; ok {
			fmt.Fprintf(&sql, ch+";\n", table)
			switch {
			case strings.Contains(ch, "numeric(14,3)"):
				cols[slices.IndexFunc(cols, func(c column) bool { return c.name == "amount" })].gen = func(r *rand.Rand) string {
					return fmt.Sprintf("%d.%03d", r.Int64N(2e10)-1e10, r.IntN(1000))
				}
			case strings.Contains(ch, "seven"):
				cols = append(cols, column{"seven", "int", "%s::text", intGen(1000), true})
			case strings.Contains(ch, "type integer"):
				cols[slices.IndexFunc(cols, func(c column) bool { return c.name == "s" })].gen = intGen(math.MaxInt32 + 1)
			case strings.Contains(ch, "rename"):
				cols[slices.IndexFunc(cols, func(c column) bool { return c.name == "code" })].name = "label"
			case strings.Contains(ch, "drop column r"):
				cols = slices.DeleteFunc(cols, func(c column) bool { return c.name == "r" })
			}
		}
		switch rng.IntN(6) {
		case 0: // a transaction of many rows, checked whole in every silver version
			blk := round + 1
			n := 100 + rng.IntN(200)
			sql.WriteString("begin;\n")
			insert(&sql, n, blk)
			fmt.Fprintf(&sql, "update %s set flag = not flag where id %% 7 = %d;\ncommit;\n", table, rng.IntN(7))
			blocks[blk] = n
		default:
			for range 1 + rng.IntN(5) {
				switch op := rng.IntN(10); {
				case op < 4:
					insert(&sql, 1+rng.IntN(5), 0)
				case op < 8:
					// Updates of small columns: the large ones come as
					// Debezium's placeholder.
					c := cols[rng.IntN(3)]
					fmt.Fprintf(&sql, "update %s set %s = %s where id %% 5 = %d and blk = 0;\n", table, c.name, c.gen(rng), rng.IntN(5))
				default:
					fmt.Fprintf(&sql, "delete from %s where id in (select id from %[1]s where blk = 0 order by random() limit %d);\n", table, 1+rng.IntN(3))
				}
			}
		}
		svc.Psql(t, sql.String())
		time.Sleep(time.Duration(50+rng.IntN(300)) * time.Millisecond)
	}
	nKills := waitKills(stop, killed, 60*time.Second)
	t.Logf("%d rounds, %d kills", rounds, nKills)
	if nKills < kills && !*pipelineSoak {
		t.Errorf("only %d of %d kills happened", nKills, kills)
	}
	waitSilverEqual(t, svc, table, cols, silverURI, []*stage{bronze, silver})
	checkBronze(t, svc, bronzeURI, topic)
	checkWholeTransactions(t, silverURI, blocks)
	checkAutoCompacted(t, bronzeURI, autoCompactMinFiles, true)
	checkAutoCompacted(t, silverURI, autoCompactMinFiles, false)
	checkDeltaRS(t, silverURI, cols, true)
}

// checkAutoCompacted checks auto compaction on the table: the property
// is on, its OPTIMIZE commits (tagged auto) changed no data, the table
// holds fewer small files than the threshold (every commit writing data
// is followed by a compaction once there are as many), and an
// append-only table (bronze) that had enough appends was compacted.
func checkAutoCompacted(t *testing.T, uri string, minFiles int, appendOnly bool) {
	t.Helper()
	ctx := t.Context()
	snap, err := deltalog.OpenURI(ctx, uri)
	if err != nil {
		t.Fatal(err)
	}
	if !snap.Config().AutoCompact() {
		t.Fatalf("%s: auto compaction is off", uri)
	}
	auto, removed, appends := 0, 0, 0
	for vc, err := range deltalog.Commits(ctx, snap.Store(), snap.Root(), 0, snap.Version()) {
		if err != nil {
			t.Fatal(err)
		}
		if ci := vc.CommitInfo; ci == nil || ci.Operation != "OPTIMIZE" || ci.OperationParameters["auto"] != "true" {
			for _, a := range vc.Actions {
				if a.Add != nil && a.Add.DataChange {
					appends++
					break
				}
			}
			continue
		}
		auto++
		for _, a := range vc.Actions {
			if a.Add != nil && a.Add.DataChange || a.Remove != nil && a.Remove.DataChange {
				t.Fatalf("%s version %d: auto compaction changed data: %+v", uri, vc.Version, a)
			}
			if a.Remove != nil {
				removed++
			}
		}
	}
	small := 0
	for f := range snap.Files() {
		if f.Size < maintenance.AutoCompactMaxFileSize/2 {
			small++
		}
	}
	if small >= minFiles || appendOnly && appends >= minFiles && auto == 0 {
		t.Fatalf("%s: %d small files after %d commits writing data and %d auto compactions (threshold %d)", uri, small, appends, auto, minFiles)
	}
	t.Logf("%s: %d commits wrote data, %d auto compactions rewrote %d files; %d live files at version %d", uri, appends, auto, removed, snap.NumFiles(), snap.Version())
}

// insertRows writes an INSERT of n rows of block blk with random values
// of cols, ids from *nextID on.
func insertRows(sql *strings.Builder, rng *rand.Rand, table string, cols []column, nextID *int64, n, blk int) {
	names := []string{"id", "blk"}
	for _, c := range cols {
		names = append(names, c.name)
	}
	fmt.Fprintf(sql, "insert into %s (%s) values ", table, strings.Join(names, ", "))
	for i := range n {
		vals := []string{fmt.Sprint(*nextID), fmt.Sprint(blk)}
		*nextID++
		for _, c := range cols {
			if rng.IntN(8) == 0 && !c.notNull {
				vals = append(vals, "null")
			} else {
				vals = append(vals, c.gen(rng))
			}
		}
		if i > 0 {
			sql.WriteString(", ")
		}
		fmt.Fprintf(sql, "(%s)", strings.Join(vals, ", "))
	}
	sql.WriteString(";\n")
}

func waitKills(stop chan struct{}, killed chan int, grace time.Duration) int {
	select {
	case n := <-killed:
		return n
	case <-time.After(grace):
		close(stop)
		return <-killed
	}
}

// waitSilverEqual waits until silver equals the Postgres table, row by
// row and column by column.
func waitSilverEqual(t *testing.T, svc cdctest.Services, table string, cols []column, silverURI string, stages []*stage) {
	t.Helper()
	exprs := []string{"id::text"}
	names := []string{"id"}
	for _, c := range cols {
		exprs = append(exprs, fmt.Sprintf("coalesce(%s, 'NULL')", fmt.Sprintf(c.text, c.name)))
		names = append(names, c.name)
	}
	// Ordered by the column, not by the output column id (its text).
	want := strings.Split(strings.TrimSpace(svc.Psql(t, fmt.Sprintf("select %s from %s order by %[2]s.id", strings.Join(exprs, ", "), table))), "\n")
	if len(want) == 1 && want[0] == "" {
		want = nil
	}
	var got []string
	var err error
	deadline := time.Now().Add(180 * time.Second)
	for {
		for _, s := range stages {
			if s.exited() {
				t.Fatalf("%s died by itself while catching up", s.name)
			}
		}
		got, err = readSilver(t, silverURI, names)
		if err == nil && slices.Equal(got, want) || time.Now().After(deadline) {
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("silver differs from the Postgres table (%d rows vs %d; columns %s): %s", len(got), len(want), strings.Join(names, "|"), diffRows(got, want))
	}
	t.Logf("silver equals the table: %d rows of %d columns", len(got), len(names))
}

// readSilver is silver's rows, printed as the Postgres query prints them.
func readSilver(t *testing.T, uri string, names []string) ([]string, error) {
	ctx := t.Context()
	snap, err := deltalog.OpenURI(ctx, uri)
	if err != nil {
		return nil, err
	}
	for _, n := range names {
		if snap.Schema().Field(n) == nil {
			return nil, fmt.Errorf("silver has no column %s yet", n)
		}
	}
	scan, err := reader.NewScan(snap, reader.WithColumns(names...))
	if err != nil {
		return nil, err
	}
	return recordsText(scan.Records(ctx))
}

// recordsText prints rows (id first) as the Postgres query prints them,
// ordered by id.
func recordsText(recs iter.Seq2[arrow.RecordBatch, error]) ([]string, error) {
	type row struct {
		id   int64
		text string
	}
	var rows []row
	for rec, err := range recs {
		if err != nil {
			return nil, err
		}
		for i := range int(rec.NumRows()) {
			parts := make([]string, rec.NumCols())
			var id int64
			for c := range int(rec.NumCols()) {
				v, _ := actions.ArrowValue(rec.Column(c), i)
				if c == 0 {
					id, _ = v.(int64)
				}
				if v == nil && rec.Column(c).IsValid(i) {
					v = listValue(rec.Column(c), i)
				}
				parts[c] = pgText(v)
			}
			rows = append(rows, row{id, strings.Join(parts, "|")})
		}
	}
	slices.SortFunc(rows, func(a, b row) int { return cmp.Compare(a.id, b.id) })
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = r.text
	}
	return out, nil
}

// deltaRSScript reads a table with delta-rs (the peers' venv) and writes
// the columns asked for as an Arrow IPC file, its string, binary and
// list types made the plain ones.
const deltaRSScript = `
import sys, pyarrow as pa
from deltalake import DeltaTable
uri, out, names = sys.argv[1], sys.argv[2], sys.argv[3].split(",")
t = DeltaTable(uri).to_pyarrow_table(columns=names)
def plain(ty):
    if pa.types.is_large_string(ty) or pa.types.is_string_view(ty): return pa.string()
    if pa.types.is_large_binary(ty) or pa.types.is_binary_view(ty): return pa.binary()
    if pa.types.is_large_list(ty) or pa.types.is_list_view(ty) or pa.types.is_list(ty): return pa.list_(plain(ty.value_type))
    return ty
t = t.cast(pa.schema([pa.field(f.name, plain(f.type)) for f in t.schema]))
with pa.ipc.new_file(out, t.schema) as w:
    w.write_table(t)
`

// deltaRSRows reads the table at uri with delta-rs, printed as
// recordsText prints it; an error holds delta-rs's message.
func deltaRSRows(t *testing.T, uri string, names []string) ([]string, error) {
	t.Helper()
	python := cloudtest.Require(t, "LAKELOG_PYTHON", "the peers' Python venv (delta-rs)")
	out := filepath.Join(t.TempDir(), "rows.arrow")
	cmd := exec.Command(python, "-c", deltaRSScript, uri, out, strings.Join(names, ","))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if i := strings.LastIndex(msg, "\n"); i >= 0 {
			msg = msg[i+1:]
		}
		return nil, fmt.Errorf("delta-rs: %v: %s", err, msg)
	}
	f, err := os.Open(out)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r, err := ipc.NewFileReader(f)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return recordsText(func(yield func(arrow.RecordBatch, error) bool) {
		for i := range r.NumRecords() {
			rec, err := r.RecordBatch(i)
			if !yield(rec, err) || err != nil {
				return
			}
		}
	})
}

// checkDeltaRS reads silver with delta-rs: equal to what lakelog reads
// (which equals Postgres) when it can read it; after a type widening it
// cannot (delta-rs has no typeWidening), and must say so. Silver with
// deletion vectors (the default) it may refuse naming them (delta-rs
// 1.6 reads no deletion vector); when it reads it, it must read it right.
func checkDeltaRS(t *testing.T, uri string, cols []column, widened bool) {
	t.Helper()
	names := []string{"id"}
	for _, c := range cols {
		names = append(names, c.name)
	}
	want, err := readSilver(t, uri, names)
	if err != nil {
		t.Fatal(err)
	}
	got, err := deltaRSRows(t, uri, names)
	dvs := deletionVectors(t, uri)
	switch {
	case widened && err == nil:
		t.Fatalf("delta-rs read silver after a type widening: it lacks typeWidening, which this test expects it to refuse (%d rows)", len(got))
	case widened:
		t.Logf("delta-rs cannot read silver after the type widening (%v); lakelog's read equals Postgres", err)
	case err != nil && dvs != "" && strings.Contains(err.Error(), "deletionVectors"):
		t.Logf("delta-rs cannot read silver with deletion vectors (%s): %v; lakelog's read equals Postgres", dvs, err)
	case err != nil:
		t.Fatalf("delta-rs cannot read silver: %v", err)
	case !slices.Equal(got, want):
		t.Fatalf("delta-rs reads silver otherwise than lakelog, whose rows equal Postgres's (%d rows vs %d): %s", len(got), len(want), diffRows(got, want))
	default:
		t.Logf("delta-rs reads silver as Postgres has it: %d rows of %d columns (deletion vectors: %q)", len(got), len(names), dvs)
	}
}

// deletionVectors says how many of the table's active files have a
// deletion vector, "" when the table does not support them.
func deletionVectors(t *testing.T, uri string) string {
	t.Helper()
	snap, err := deltalog.OpenURI(t.Context(), uri)
	if err != nil {
		t.Fatal(err)
	}
	if !snap.Config().Supports(actions.FeatureDeletionVectors) {
		return ""
	}
	n := 0
	for f := range snap.Files() {
		if f.DeletionVector != nil {
			n++
		}
	}
	return fmt.Sprintf("%d of its %d active files with a deletion vector", n, snap.NumFiles())
}

// pgText prints a silver value as the test's Postgres query prints its
// column.
func pgText(v any) string {
	switch x := v.(type) {
	case nil:
		return "NULL"
	case actions.Decimal:
		return x.String()
	case actions.Timestamp:
		return fmt.Sprint(int64(x))
	case actions.TimestampNTZ:
		return fmt.Sprint(int64(x))
	case actions.Date:
		return fmt.Sprint(int32(x))
	case []byte:
		return hex.EncodeToString(x)
	case []any:
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		enc.Encode(x)
		return strings.TrimSpace(b.String())
	case float64:
		s, _ := actions.FormatPartitionValue(actions.TypeDouble, x) // NaN, Infinity: Postgres's names too
		return *s
	case float32:
		s, _ := actions.FormatPartitionValue(actions.TypeFloat, x)
		return *s
	}
	return fmt.Sprint(v)
}

// listValue reads row i of a list column.
func listValue(a arrow.Array, i int) any {
	l, ok := a.(*array.List)
	if !ok {
		return nil
	}
	start, end := l.ValueOffsets(i)
	out := []any{}
	for j := start; j < end; j++ {
		v, _ := actions.ArrowValue(l.ListValues(), int(j))
		out = append(out, v)
	}
	return out
}

func diffRows(got, want []string) string {
	g, w := map[string]bool{}, map[string]bool{}
	for _, r := range got {
		g[r] = true
	}
	for _, r := range want {
		w[r] = true
	}
	var b strings.Builder
	n := 0
	for _, r := range want {
		if !g[r] && n < 5 {
			fmt.Fprintf(&b, "\n  missing from silver: %.600s", r)
			n++
		}
	}
	for _, r := range got {
		if !w[r] && n < 10 {
			fmt.Fprintf(&b, "\n  not in Postgres:     %.600s", r)
			n++
		}
	}
	if n == 0 { // the same rows, in another order or number
		for i := range min(len(got), len(want)) {
			if got[i] != want[i] {
				fmt.Fprintf(&b, "\n  row %d: silver %.300s\n  Postgres       %.300s", i, got[i], want[i])
				break
			}
		}
	}
	return b.String()
}

// checkBronze checks that bronze holds each source change of the topic
// once: every streamed change's LSN (a change's identity: Debezium may
// have sent it twice, with another commit LSN) once, every snapshot read
// once per record.
func checkBronze(t *testing.T, svc cdctest.Services, uri, topic string) {
	t.Helper()
	dec := cdc.NewDecoder(cdc.WithVariableNumeric(cdc.NumericMode{AsString: true}))
	changes := map[int64]string{} // LSN -> op
	reads := 0
	for _, r := range svc.ReadTopics(t, 3*time.Second, topic) {
		e, err := dec.Decode(r.Key, r.Value)
		if errors.Is(err, cdc.ErrTombstone) {
			continue
		}
		if err != nil {
			t.Fatalf("%s offset %d: %v", topic, r.Offset, err)
		}
		if p, ok := e.Position(); ok {
			changes[p.LSN] = string(e.Op)
		} else {
			reads++
		}
	}
	ctx := t.Context()
	deadline := time.Now().Add(60 * time.Second)
	for {
		snap, err := deltalog.OpenURI(ctx, uri)
		if err != nil {
			t.Fatal(err)
		}
		scan, err := reader.NewScan(snap, reader.WithColumns(cdc.ColOp, cdc.ColLSN, cdc.ColTopic))
		if err != nil {
			t.Fatal(err)
		}
		seen := map[int64]int{}
		gotReads := 0
		for rec, err := range scan.Records(ctx) {
			if err != nil {
				t.Fatal(err)
			}
			for i := range int(rec.NumRows()) {
				op := rec.Column(0).ValueStr(i)
				if op == cdc.OpEnd || rec.Column(2).ValueStr(i) != topic {
					continue
				}
				if op == string(cdc.OpRead) {
					gotReads++
					continue
				}
				lsn, _ := strconv.ParseInt(rec.Column(1).ValueStr(i), 10, 64)
				seen[lsn]++
			}
		}
		var problems []string
		for p, n := range seen {
			if n > 1 {
				problems = append(problems, fmt.Sprintf("bronze holds the change at LSN %d %d times", p, n))
			}
			if _, ok := changes[p]; !ok {
				problems = append(problems, fmt.Sprintf("bronze holds a change at LSN %d that the topic does not have", p))
			}
		}
		for p := range changes {
			if seen[p] == 0 {
				problems = append(problems, fmt.Sprintf("bronze lacks the change at LSN %d", p))
			}
		}
		if gotReads != reads {
			problems = append(problems, fmt.Sprintf("bronze holds %d snapshot reads, the topic %d", gotReads, reads))
		}
		if len(problems) == 0 {
			t.Logf("bronze: %d source changes and %d snapshot reads, each once, in %d versions", len(seen), reads, snap.Version())
			return
		}
		if time.Now().After(deadline) {
			slices.Sort(problems)
			t.Fatalf("%d problems, the first: %s", len(problems), strings.Join(problems[:min(5, len(problems))], "; "))
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// checkWholeTransactions reads every version of silver: a block of rows
// inserted by one source transaction is there whole or not at all.
func checkWholeTransactions(t *testing.T, uri string, blocks map[int]int) {
	t.Helper()
	ctx := t.Context()
	latest, err := deltalog.OpenURI(ctx, uri)
	if err != nil {
		t.Fatal(err)
	}
	for v := int64(0); v <= latest.Version(); v++ {
		snap, err := deltalog.OpenURI(ctx, uri, deltalog.AtVersion(v))
		if err != nil {
			t.Fatal(err)
		}
		if snap.Schema().Field("blk") == nil {
			continue
		}
		scan, err := reader.NewScan(snap, reader.WithColumns("blk"))
		if err != nil {
			t.Fatal(err)
		}
		count := map[int]int{}
		for rec, err := range scan.Records(ctx) {
			if err != nil {
				t.Fatal(err)
			}
			for i := range int(rec.NumRows()) {
				b, _ := strconv.Atoi(rec.Column(0).ValueStr(i))
				count[b]++
			}
		}
		for b, n := range blocks {
			if count[b] != 0 && count[b] != n {
				t.Fatalf("silver version %d holds %d of the %d rows of one source transaction", v, count[b], n)
			}
		}
	}
	t.Logf("no silver version of %d shows part of a source transaction (%d transactions checked)", latest.Version()+1, len(blocks))
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
