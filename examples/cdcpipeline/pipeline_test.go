package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"maps"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	s3sdk "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/objstore/cloudtest"
	"github.com/lakelog/lakelog/objstore/s3"
	"github.com/lakelog/lakelog/reader"
)

var (
	pipelineSeed = flag.Uint64("pipeline.seed", 0, "seed of the pipeline test's workload and kills (0: the time)")
	pipelineSoak = flag.Bool("pipeline.soak", false, "run the pipeline test longer: more rounds, rows and kills")
)

// mainEnv makes the test binary run main: the stages must be processes
// that a SIGKILL really ends.
const mainEnv = "CDCPIPELINE_TEST_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(mainEnv) == "1" {
		main()
	}
	os.Exit(m.Run())
}

// services are the pipeline's servers, as .ci/services.sh exports them.
type services struct {
	pgHost, pgPort, pgUser string
	brokers, connect       string
}

func requireServices(t *testing.T) services {
	return services{
		pgHost:  cloudtest.Require(t, "LAKELOG_PG_HOST", "PostgreSQL"),
		pgPort:  cloudtest.Require(t, "LAKELOG_PG_PORT", "PostgreSQL"),
		pgUser:  cloudtest.Require(t, "LAKELOG_PG_USER", "PostgreSQL"),
		brokers: cloudtest.Require(t, "LAKELOG_KAFKA_BROKERS", "Kafka"),
		connect: cloudtest.Require(t, "LAKELOG_CONNECT_URL", "Kafka Connect"),
	}
}

// psql runs SQL on the test database and returns its unaligned output.
func (s services) psql(t *testing.T, sql string) string {
	t.Helper()
	out, err := s.psqlErr(sql)
	if err != nil {
		t.Fatalf("psql: %v\n%s", err, sql)
	}
	return out
}

func (s services) psqlErr(sql string) (string, error) {
	cmd := exec.Command("psql", "-h", s.pgHost, "-p", s.pgPort, "-U", s.pgUser, "-d", "postgres",
		"-v", "ON_ERROR_STOP=1", "-qAtX", "-F", "|")
	cmd.Stdin = strings.NewReader(sql)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("%w: %s", err, errOut.String())
	}
	return out.String(), nil
}

// connector registers Debezium's Postgres connector for table, its
// events with or without the schema part, and removes it (and its slot
// and publication) when the test ends.
func (s services) connector(t *testing.T, table string, withSchema bool) (topic string) {
	t.Helper()
	cfg := map[string]string{
		"connector.class":                "io.debezium.connector.postgresql.PostgresConnector",
		"plugin.name":                    "pgoutput",
		"database.hostname":              s.pgHost,
		"database.port":                  s.pgPort,
		"database.user":                  s.pgUser,
		"database.password":              "unused",
		"database.dbname":                "postgres",
		"topic.prefix":                   table,
		"table.include.list":             "public." + table,
		"slot.name":                      table,
		"publication.name":               table,
		"publication.autocreate.mode":    "filtered",
		"snapshot.mode":                  "initial",
		"tasks.max":                      "1",
		"key.converter":                  "org.apache.kafka.connect.json.JsonConverter",
		"value.converter":                "org.apache.kafka.connect.json.JsonConverter",
		"key.converter.schemas.enable":   fmt.Sprint(withSchema),
		"value.converter.schemas.enable": fmt.Sprint(withSchema),
	}
	if !withSchema {
		// Without the schema part a decimal's base64 bytes cannot be read
		// (the scale is in the schema): have Debezium send them as text.
		cfg["decimal.handling.mode"] = "string"
	}
	body, err := json.Marshal(map[string]any{"name": table, "config": cfg})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Post(s.connect+"/connectors", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		t.Fatalf("registering the connector: %s", resp.Status)
	}
	t.Cleanup(func() {
		req, _ := http.NewRequest(http.MethodDelete, s.connect+"/connectors/"+table, nil)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
		// The slot is released when the task stops.
		for range 50 {
			if _, err := s.psqlErr(fmt.Sprintf("select pg_drop_replication_slot('%s') from pg_replication_slots where slot_name = '%s'", table, table)); err == nil {
				break
			}
			time.Sleep(200 * time.Millisecond)
		}
		s.psqlErr(fmt.Sprintf("drop publication if exists %s; drop table if exists %s", table, table))
	})
	// Running, with its task.
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := http.Get(s.connect + "/connectors/" + table + "/status")
		if err == nil {
			var st struct {
				Tasks []struct{ State, Trace string }
			}
			json.NewDecoder(resp.Body).Decode(&st)
			resp.Body.Close()
			if len(st.Tasks) > 0 && st.Tasks[0].State == "RUNNING" {
				break
			}
			if len(st.Tasks) > 0 && st.Tasks[0].State == "FAILED" {
				t.Fatalf("the connector's task failed: %s", st.Tasks[0].Trace)
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("the connector did not start in 60 s")
		}
		time.Sleep(200 * time.Millisecond)
	}
	return table + ".public." + table
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
// with the tables on local disk and events with Connect's schema part.
func TestPipelineLocal(t *testing.T) {
	svc := requireServices(t)
	dir := t.TempDir()
	runPipeline(t, svc, dir, filepath.Join(dir, "bronze"), filepath.Join(dir, "silver"), true)
}

// TestPipelineMinIO: the same with the tables on MinIO and events
// without the schema part.
func TestPipelineMinIO(t *testing.T) {
	svc := requireServices(t)
	cloudtest.Require(t, "AWS_ENDPOINT_URL", "MinIO")
	bucket := cloudtest.Name("lakelog-cdc-")
	st, err := s3.New(t.Context(), bucket, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Client().CreateBucket(t.Context(), &s3sdk.CreateBucketInput{Bucket: &bucket}); err != nil {
		t.Fatal(err)
	}
	runPipeline(t, svc, t.TempDir(), "s3://"+bucket+"/bronze", "s3://"+bucket+"/silver", false)
}

// runPipeline drives a random Postgres workload (inserts, updates,
// deletes, a column added mid-run, one transaction touching every row)
// while the bronze and silver processes are killed with SIGKILL at random
// points and restarted; then silver must equal the Postgres table row for
// row, and bronze must hold every Debezium event exactly once.
func runPipeline(t *testing.T, svc services, dir, bronzeURI, silverURI string, withSchema bool) {
	seed := *pipelineSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (replay the workload and kill times with -pipeline.seed %d)", seed, seed)
	rng := rand.New(rand.NewPCG(seed, 1))
	rounds, kills := 24, 6
	if *pipelineSoak {
		rounds, kills = 200, 40
	}
	table := cloudtest.Name("cdc_")
	table = strings.ReplaceAll(table, "-", "_")
	svc.psql(t, fmt.Sprintf("create table %s (id bigint primary key, name text, qty integer, price numeric(10,2))", table))
	svc.psql(t, fmt.Sprintf("insert into %s select g, 'seed-' || g, g %% 7, g * 1.25 from generate_series(1, 20) g", table))
	topic := svc.connector(t, table, withSchema)

	bronze := newStage(t, dir, "bronze", "bronze", "-table", bronzeURI, "-brokers", svc.brokers, "-topic", topic,
		"-group", table, "-instance-id", table+"-bronze", "-app", "bronze", "-max-records", "500")
	silver := newStage(t, dir, "silver", "silver", "-bronze", bronzeURI, "-table", silverURI, "-key", "id",
		"-app", "silver", "-poll", "100ms")
	bronze.start()
	silver.start()
	defer func() {
		bronze.kill(syscall.SIGTERM)
		silver.kill(syscall.SIGTERM)
		if t.Failed() {
			t.Logf("bronze's log:\n%s", tail(bronze.logText(), 60))
			t.Logf("silver's log:\n%s", tail(silver.logText(), 60))
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
			case <-time.After(time.Duration(300+krng.IntN(2500)) * time.Millisecond):
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

	// The workload.
	nextID := 21
	hasNote := false
	for round := range rounds {
		if bronze.exited() || silver.exited() {
			t.Fatalf("a stage died by itself (round %d)", round)
		}
		var sql strings.Builder
		switch {
		case round == rounds/2:
			sql.WriteString(fmt.Sprintf("alter table %s add column note text;\n", table))
			hasNote = true
		case round == rounds/3:
			// One transaction touching every row, and many new ones.
			fmt.Fprintf(&sql, "begin;\nupdate %s set qty = qty + 1;\n", table)
			fmt.Fprintf(&sql, "insert into %s (id, name, qty, price) select g, 'bulk-' || g, 1, 0.5 from generate_series(%d, %d) g;\ncommit;\n", table, nextID, nextID+299)
			nextID += 300
		}
		for range 1 + rng.IntN(6) {
			switch op := rng.IntN(10); {
			case op < 4:
				note := "null"
				if hasNote && rng.IntN(2) == 0 {
					note = fmt.Sprintf("'note %d'", rng.IntN(100))
				}
				cols, vals := "id, name, qty, price", fmt.Sprintf("%d, 'n%d', %d, %d.%02d", nextID, nextID, rng.IntN(50), rng.IntN(1000), rng.IntN(100))
				if hasNote {
					cols, vals = cols+", note", vals+", "+note
				}
				fmt.Fprintf(&sql, "insert into %s (%s) values (%s);\n", table, cols, vals)
				nextID++
			case op < 7:
				set := fmt.Sprintf("qty = qty + %d, name = name || '+'", 1+rng.IntN(3))
				if hasNote {
					set += fmt.Sprintf(", note = 'u%d'", rng.IntN(100))
				}
				fmt.Fprintf(&sql, "update %s set %s where id %% 5 = %d;\n", table, set, rng.IntN(5))
			default:
				fmt.Fprintf(&sql, "delete from %s where id in (select id from %s order by random() limit %d);\n", table, table, 1+rng.IntN(3))
			}
		}
		svc.psql(t, sql.String())
		time.Sleep(time.Duration(50+rng.IntN(300)) * time.Millisecond)
	}
	// Let the killer finish its kills, then wait for silver to catch up.
	nKills := waitKills(stop, killed, 60*time.Second)
	t.Logf("%d rounds, %d kills", rounds, nKills)
	if nKills < kills && !*pipelineSoak {
		t.Errorf("only %d of %d kills happened", nKills, kills)
	}
	want := svc.psql(t, fmt.Sprintf("select id, coalesce(name, 'NULL'), coalesce(qty::text, 'NULL'), coalesce(price::text, 'NULL'), coalesce(note, 'NULL') from %s order by id", table))
	wantRows := strings.Split(strings.TrimSpace(want), "\n")
	var got []string
	deadline := time.Now().Add(120 * time.Second)
	for {
		if bronze.exited() || silver.exited() {
			t.Fatal("a stage died by itself while catching up")
		}
		got = readSilver(t, silverURI)
		if slices.Equal(got, wantRows) || time.Now().After(deadline) {
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	if !slices.Equal(got, wantRows) {
		t.Fatalf("silver differs from the Postgres table (%d rows vs %d): %s", len(got), len(wantRows), diffRows(got, wantRows))
	}
	checkBronze(t, svc, bronzeURI, topic)
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

// readSilver is silver's rows as the psql query prints them, by id.
func readSilver(t *testing.T, uri string) []string {
	t.Helper()
	ctx := t.Context()
	snap, err := deltalog.OpenURI(ctx, uri)
	if err != nil {
		return nil // not created yet
	}
	scan, err := reader.NewScan(snap, reader.WithColumns("id", "name", "qty", "price"))
	if err != nil {
		t.Fatal(err)
	}
	withNote := snap.Schema().Field("note") != nil
	if withNote {
		if scan, err = reader.NewScan(snap, reader.WithColumns("id", "name", "qty", "price", "note")); err != nil {
			t.Fatal(err)
		}
	}
	type row struct {
		id   int64
		text string
	}
	var rows []row
	for rec, err := range scan.Records(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		for i := range int(rec.NumRows()) {
			var cols []string
			for c := range int(rec.NumCols()) {
				switch col := rec.Column(c).(type) {
				case *array.Decimal128:
					if col.IsNull(i) {
						cols = append(cols, "NULL")
					} else {
						cols = append(cols, col.Value(i).ToString(col.DataType().(*arrow.Decimal128Type).Scale))
					}
				default:
					if col.IsNull(i) {
						cols = append(cols, "NULL")
					} else {
						cols = append(cols, col.ValueStr(i))
					}
				}
			}
			if !withNote {
				cols = append(cols, "NULL")
			}
			var id int64
			fmt.Sscan(cols[0], &id)
			rows = append(rows, row{id, strings.Join(cols, "|")})
		}
	}
	slices.SortFunc(rows, func(a, b row) int { return int(a.id - b.id) })
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = r.text
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
		if !g[r] && n < 10 {
			fmt.Fprintf(&b, "\n  missing from silver: %s", r)
			n++
		}
	}
	for _, r := range got {
		if !w[r] && n < 20 {
			fmt.Fprintf(&b, "\n  not in Postgres:     %s", r)
			n++
		}
	}
	return b.String()
}

// checkBronze checks that bronze holds every event of the topic exactly
// once: one row per record with a value, none for tombstones, each with
// the record's op and LSN.
func checkBronze(t *testing.T, svc services, uri, topic string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	type ev struct{ op, lsn string }
	events := map[string]ev{} // partition/offset -> event
	cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(svc.brokers, ",")...), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxWait(200*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	// The whole topic: read until nothing comes for 3 s (the workload is
	// over); bronze must come to hold up to its last offset.
	read := map[int32]int64{}
	for {
		pctx, pcancel := context.WithTimeout(ctx, 3*time.Second)
		fs := cl.PollFetches(pctx)
		pcancel()
		if ctx.Err() != nil {
			t.Fatalf("reading %s back: %v", topic, ctx.Err())
		}
		if fs.NumRecords() == 0 && pctx.Err() != nil {
			break
		}
		fs.EachRecord(func(r *kgo.Record) {
			read[r.Partition] = r.Offset
			e, err := decodeEvent(r.Value)
			if err != nil {
				return // a tombstone
			}
			lsn := "NULL"
			if e.lsn != nil {
				lsn = fmt.Sprint(*e.lsn)
			}
			events[fmt.Sprintf("%d/%d", r.Partition, r.Offset)] = ev{e.op, lsn}
		})
	}
	if len(read) == 0 {
		t.Fatalf("%s holds no records", topic)
	}
	// Bronze's recorded offsets, once they reach the topic's ends: silver
	// can match Postgres before bronze lands a partition's last records
	// (a trailing tombstone changes no row), so bronze is given time to.
	var snap *deltalog.Snapshot
	ends := map[int32]int64{}
	for {
		var err error
		if snap, err = deltalog.OpenURI(ctx, uri); err != nil {
			t.Fatal(err)
		}
		clear(ends)
		for app, txn := range snap.Txns() {
			var p int32
			if _, err := fmt.Sscanf(app[strings.LastIndex(app, "/")+1:], "%d", &p); err == nil {
				ends[p] = txn.Version
			}
		}
		if maps.Equal(read, ends) {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the topic ends at offsets %v, bronze records %v", read, ends)
		case <-time.After(300 * time.Millisecond):
		}
	}
	scan, err := reader.NewScan(snap, reader.WithColumns(colPartition, colOffset, colOp, colLSN))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for rec, err := range scan.Records(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		for i := range int(rec.NumRows()) {
			k := rec.Column(0).ValueStr(i) + "/" + rec.Column(1).ValueStr(i)
			lsn := "NULL"
			if rec.Column(3).IsValid(i) {
				lsn = rec.Column(3).ValueStr(i)
			}
			if seen[k] {
				t.Fatalf("bronze holds the event at %s twice", k)
			}
			seen[k] = true
			want, ok := events[k]
			switch {
			case !ok:
				t.Fatalf("bronze holds an event at %s that the topic does not have (or a tombstone)", k)
			case want.op != rec.Column(2).ValueStr(i) || want.lsn != lsn:
				t.Fatalf("bronze's event at %s is op %s lsn %s, the topic's op %s lsn %s", k, rec.Column(2).ValueStr(i), lsn, want.op, want.lsn)
			}
		}
	}
	for k := range events {
		if !seen[k] {
			t.Fatalf("bronze lacks the event at %s", k)
		}
	}
	t.Logf("bronze: %d events exactly once, in %d versions; offsets %v", len(seen), snap.Version(), ends)
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
