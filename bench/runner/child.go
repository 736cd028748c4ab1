package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/bench/runner/workload"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/expr"
	"github.com/lakelog/lakelog/objstore"
	_ "github.com/lakelog/lakelog/objstore/s3" // s3:// tables
	"github.com/lakelog/lakelog/reader"
	"github.com/lakelog/lakelog/writer"
)

// childMain runs one operation of the lakelog engine in this process and
// prints its Outcome as one JSON line. See Spec for the operations.
func childMain(specJSON string) error {
	var spec Spec
	if err := json.Unmarshal([]byte(specJSON), &spec); err != nil {
		return fmt.Errorf("runner child: bad spec: %w", err)
	}
	ctx := context.Background()
	// LAKELOG_CPUPROFILE=FILE profiles the operation (for profiling one
	// row by hand; the runner never sets it).
	if path := os.Getenv("LAKELOG_CPUPROFILE"); path != "" {
		f, err := os.Create(path)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	o, err := lakelogOp(ctx, spec)
	if err != nil {
		return fmt.Errorf("runner child %s: %w", spec.Op, err)
	}
	o.PeakKB = peakKB()
	return json.NewEncoder(os.Stdout).Encode(o)
}

// peakKB is this process's peak resident set in KiB (VmHWM), 0 when
// /proc does not say.
func peakKB() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return n
		}
	}
	return 0
}

// barrier tells the parent this child is set up and waits for its go.
func barrier(spec Spec) error {
	if !spec.Barrier {
		return nil
	}
	fmt.Println(`{"ready":true}`)
	_, err := bufio.NewReader(os.Stdin).ReadString('\n')
	return err
}

func lakelogOp(ctx context.Context, spec Spec) (Outcome, error) {
	switch spec.Op {
	case "idle":
		return Outcome{Info: runtime.Version()}, nil
	case "gen":
		return lakelogGen(spec)
	case "append":
		return lakelogAppend(ctx, spec)
	case "scan", "select":
		return lakelogScan(ctx, spec)
	case "open":
		return lakelogOpen(ctx, spec)
	case "plan":
		return lakelogPlan(ctx, spec)
	case "checkpoint":
		return lakelogCheckpoint(ctx, spec)
	case "list":
		return lakelogList(ctx, spec)
	case "create":
		return lakelogCreate(ctx, spec)
	case "commits":
		return lakelogCommits(ctx, spec)
	case "write-commits":
		return lakelogWriteCommits(ctx, spec)
	case "changes":
		return lakelogChanges(ctx, spec)
	case "raw-create":
		return rawCreates(spec)
	case "raw-put":
		return rawPuts(ctx, spec)
	case "delete", "update", "merge":
		return lakelogDML(ctx, spec)
	case "optimize", "restore", "vacuum":
		return lakelogMaintenance(ctx, spec)
	case "convert":
		return lakelogConvert(ctx, spec)
	}
	return Outcome{}, fmt.Errorf("unknown op %q", spec.Op)
}

// lakelogGen: generate the rows and fold them into a checksum, writing
// nothing: the cost of the input alone.
func lakelogGen(spec Spec) (Outcome, error) {
	start := time.Now()
	var c workload.Checksum
	for rec, err := range workload.Batches(nil, spec.Rows) {
		if err != nil {
			return Outcome{}, err
		}
		c.Add(rec)
	}
	return Outcome{Seconds: time.Since(start).Seconds(), Count: c.Rows, Checksum: (*Checksum)(&c)}, nil
}

// lakelogAppend: create the table and write the generated rows into it in
// one commit (writer.CreateTable), generation included; partitioned by p
// unless Unpartitioned; with Commits above 1, the rows in that many
// commits of equal id ranges (CreateTable, then writer.Append).
func lakelogAppend(ctx context.Context, spec Spec) (Outcome, error) {
	st, err := objstore.Open(ctx, spec.Table)
	if err != nil {
		return Outcome{}, err
	}
	md := workload.Metadata()
	if spec.Unpartitioned {
		md.PartitionColumns = []string{}
	}
	commits := int64(max(1, spec.Commits))
	start := time.Now()
	res, err := writer.CreateTable(ctx, st, "", md, workload.Range(nil, 0, spec.Rows/commits),
		writer.WithTargetFileSize(spec.TargetFileSize))
	if err != nil {
		return Outcome{}, err
	}
	snap, err := res.Snapshot()
	if err != nil {
		return Outcome{}, err
	}
	for k := int64(1); k < commits; k++ {
		to := spec.Rows * (k + 1) / commits
		if k == commits-1 {
			to = spec.Rows
		}
		if res, err = writer.Append(ctx, snap, workload.Range(nil, spec.Rows*k/commits, to), writer.WithTargetFileSize(spec.TargetFileSize)); err != nil {
			return Outcome{}, err
		}
		if snap, err = res.Snapshot(); err != nil {
			return Outcome{}, err
		}
	}
	secs := time.Since(start).Seconds()
	return Outcome{Seconds: secs, Count: spec.Rows, Files: int64(snap.NumFiles()), Version: snap.Version()}, nil
}

// scanStringsEnv says how lakelogScan returns strings: "plain" (the
// default options of reader.NewScan) or views (anything else); the
// runner's -strings sets it for its children.
const scanStringsEnv = "LAKELOG_SCAN_STRINGS"

// lakelogScan: open the table, plan and read every batch (all columns,
// strings as views unless scanStringsEnv says plain), folding each into a
// checksum. "select" adds id BETWEEN Lo AND Hi; Columns narrows the
// columns read.
func lakelogScan(ctx context.Context, spec Spec) (Outcome, error) {
	st, err := objstore.Open(ctx, spec.Table)
	if err != nil {
		return Outcome{}, err
	}
	start := time.Now()
	snap, err := deltalog.Open(ctx, st, "")
	if err != nil {
		return Outcome{}, err
	}
	// Strings as views, as DataFusion returns them (Utf8View), or plain
	// as a Go user gets them by default; the checksum takes both.
	var opts []reader.Option
	if os.Getenv(scanStringsEnv) != "plain" {
		opts = append(opts, reader.WithStringViews())
	}
	if spec.Op == "select" {
		pred, err := expr.Parse(fmt.Sprintf("id BETWEEN %d AND %d", spec.Lo, spec.Hi))
		if err != nil {
			return Outcome{}, err
		}
		opts = append(opts, reader.WithFilter(pred))
	}
	if len(spec.Columns) > 0 {
		opts = append(opts, reader.WithColumns(spec.Columns...))
	}
	sc, err := reader.NewScan(snap, opts...)
	if err != nil {
		return Outcome{}, err
	}
	var c workload.Checksum
	for rec, err := range sc.Records(ctx) {
		if err != nil {
			return Outcome{}, err
		}
		c.Add(rec)
	}
	secs := time.Since(start).Seconds()
	m := sc.Metrics()
	return Outcome{Seconds: secs, Count: c.Rows, Checksum: (*Checksum)(&c), Files: int64(snap.NumFiles()), FilesRead: m.FilesRead, Version: snap.Version()}, nil
}

// openTimed opens the latest snapshot of the table at uri and says how
// long deltalog.Open took.
func openTimed(ctx context.Context, uri string, opts ...deltalog.Option) (*deltalog.Snapshot, float64, error) {
	st, err := objstore.Open(ctx, uri)
	if err != nil {
		return nil, 0, err
	}
	start := time.Now()
	snap, err := deltalog.Open(ctx, st, "", opts...)
	return snap, time.Since(start).Seconds(), err
}

// lakelogOpen: load the latest snapshot (deltalog.Open), from the newest
// checkpoint if there is one, else by replaying every commit. Method
// "stats" also loads the stats of a checkpoint's files in the same read of
// it (deltalog.WithStats), as delta-rs does in its open; method
// "loadstats" loads them after the open (Snapshot.LoadStats, a second read
// of the checkpoint's stats column).
func lakelogOpen(ctx context.Context, spec Spec) (Outcome, error) {
	var opts []deltalog.Option
	if spec.Method == "stats" {
		opts = append(opts, deltalog.WithStats())
	}
	snap, secs, err := openTimed(ctx, spec.Table, opts...)
	if err != nil {
		return Outcome{}, err
	}
	if spec.Method == "loadstats" {
		start := time.Now()
		if err := snap.LoadStats(ctx); err != nil {
			return Outcome{}, err
		}
		secs += time.Since(start).Seconds()
	}
	return Outcome{Seconds: secs, Count: int64(snap.NumFiles()), Files: int64(snap.NumFiles()), Version: snap.Version()}, nil
}

// lakelogCheckpoint: open (setup, reported apart), then write the
// checkpoint of the latest version and _last_checkpoint (measured).
func lakelogCheckpoint(ctx context.Context, spec Spec) (Outcome, error) {
	snap, setup, err := openTimed(ctx, spec.Table)
	if err != nil {
		return Outcome{}, err
	}
	start := time.Now()
	lc, err := snap.Checkpoint(ctx, time.Now())
	if err != nil {
		return Outcome{}, err
	}
	secs := time.Since(start).Seconds()
	return Outcome{Seconds: secs, SetupSeconds: setup, Count: int64(snap.NumFiles()), Files: int64(snap.NumFiles()),
		Version: snap.Version(), Info: fmt.Sprintf("checkpoint of version %d holds %d actions", lc.Version, lc.Size)}, nil
}

// lakelogList: open (setup), then iterate the active files, reading each
// path (measured).
func lakelogList(ctx context.Context, spec Spec) (Outcome, error) {
	snap, setup, err := openTimed(ctx, spec.Table)
	if err != nil {
		return Outcome{}, err
	}
	start := time.Now()
	var n, bytes int64
	for f := range snap.Files() {
		n++
		bytes += int64(len(f.Path))
	}
	secs := time.Since(start).Seconds()
	return Outcome{Seconds: secs, SetupSeconds: setup, Count: n, Files: n, Version: snap.Version(), Info: fmt.Sprintf("%d path bytes", bytes)}, nil
}

// lakelogCreate: create an empty data-path table (version 0).
func lakelogCreate(ctx context.Context, spec Spec) (Outcome, error) {
	st, err := objstore.Open(ctx, spec.Table)
	if err != nil {
		return Outcome{}, err
	}
	start := time.Now()
	tx, err := deltalog.Create(st, "", workload.Metadata())
	if err != nil {
		return Outcome{}, err
	}
	if _, err := tx.Commit(ctx); err != nil {
		return Outcome{}, err
	}
	return Outcome{Seconds: time.Since(start).Seconds(), Count: 1}, nil
}

// commitStats is the stats string of the files the commit loops add, the
// same for both engines.
const commitStats = `{"numRecords":1000,"minValues":{"id":1,"v":0.001,"s":"s000001"},"maxValues":{"id":1000,"v":0.999,"s":"s099999"},"nullCount":{"id":0,"v":0,"s":0}}`

// commitAdd is the add action of the i-th commit of a loop.
func commitAdd(part string, i int) *actions.Add {
	return &actions.Add{
		Path:             fmt.Sprintf("p=%s/part-00000-%s-c000.snappy.parquet", part, uuid.NewString()),
		PartitionValues:  map[string]*string{"p": &part},
		Size:             123456 + int64(i),
		ModificationTime: time.Now().UnixMilli(),
		DataChange:       true,
		Stats:            commitStats,
	}
}

// lakelogCommits: open the table (setup), then commit one-file appends
// to partition p=Partition, N of them or for Seconds, each on the
// snapshot the previous commit returned (no re-read of the log).
// Checkpoints are off, as the delta-rs loop's are. A commit that fails
// with ErrTooManyAttempts is counted in Failed (not in Count or the
// latencies), and the loop reloads the table and goes on.
func lakelogCommits(ctx context.Context, spec Spec) (Outcome, error) {
	st, err := objstore.Open(ctx, spec.Table)
	if err != nil {
		return Outcome{}, err
	}
	snap, err := deltalog.Open(ctx, st, "")
	if err != nil {
		return Outcome{}, err
	}
	if err := barrier(spec); err != nil {
		return Outcome{}, err
	}
	part := spec.Partition
	if part == "" {
		part = "p0"
	}
	var lat []float64
	var attempts, failed int64
	start := time.Now()
	deadline := start.Add(time.Duration(spec.Seconds * float64(time.Second)))
	for i := 0; ; i++ {
		if spec.Seconds > 0 && !time.Now().Before(deadline) || spec.Seconds == 0 && i >= spec.N {
			break
		}
		t := time.Now()
		tx := snap.NewTransaction(deltalog.WithPostCommit("off"))
		tx.Add(actions.Action{Add: commitAdd(part, i)})
		tx.SetOperation("WRITE", map[string]any{"mode": "Append"}, nil)
		res, err := tx.Commit(ctx)
		if errors.Is(err, deltalog.ErrTooManyAttempts) {
			// Starved by the other writers: count it, catch up, go on.
			failed++
			if snap, err = deltalog.Open(ctx, st, ""); err != nil {
				return Outcome{}, err
			}
			continue
		}
		if err != nil {
			return Outcome{}, err
		}
		if snap, err = res.Snapshot(); err != nil {
			return Outcome{}, err
		}
		lat = append(lat, time.Since(t).Seconds())
		attempts += int64(res.Attempts)
	}
	secs := time.Since(start).Seconds()
	return Outcome{Seconds: secs, Count: int64(len(lat)), Attempts: attempts, Failed: failed, Latency: summarize(lat), Version: snap.Version(),
		Waits: secondsToMS(lat)}, nil
}

// commitBody is the bytes of a one-file append commit as lakelog writes
// it, for the raw create and put floors.
func commitBody() ([]byte, error) {
	ts := time.Now().UnixMilli()
	rv := int64(41)
	blind := true
	info := &actions.CommitInfo{Timestamp: &ts, Operation: "WRITE", OperationParameters: map[string]any{"mode": "Append"},
		ReadVersion: &rv, IsolationLevel: "Serializable", IsBlindAppend: &blind, EngineInfo: deltalog.EngineInfo, TxnID: uuid.NewString()}
	return actions.MarshalCommit([]actions.Action{{CommitInfo: info}, {Add: commitAdd("p0", 0)}})
}

// rawCreates: N durable create-if-absent writes of a commit-sized file in
// the folder Table, exactly the system calls a local lakelog commit makes:
// write a temp file, fsync it, link it to the final name, remove the temp,
// fsync the folder.
func rawCreates(spec Spec) (Outcome, error) {
	body, err := commitBody()
	if err != nil {
		return Outcome{}, err
	}
	if err := os.MkdirAll(spec.Table, 0o755); err != nil {
		return Outcome{}, err
	}
	var lat []float64
	start := time.Now()
	for i := range spec.N {
		t := time.Now()
		if err := durableCreate(spec.Table, deltalog.CommitName(int64(i)), body); err != nil {
			return Outcome{}, err
		}
		lat = append(lat, time.Since(t).Seconds())
	}
	return Outcome{Seconds: time.Since(start).Seconds(), Count: int64(spec.N), Latency: summarize(lat), Info: strconv.Itoa(len(body)) + " bytes"}, nil
}

func durableCreate(dir, name string, body []byte) error {
	tmp := filepath.Join(dir, "."+name+".tmp")
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(body)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Link(tmp, filepath.Join(dir, name))
	}
	if rerr := os.Remove(tmp); err == nil {
		err = rerr
	}
	if err != nil {
		return err
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// rawPuts: N create-if-absent puts of a commit-sized object under fresh
// keys through the store of Table (for s3://, a PutObject with
// If-None-Match: *): the request a cloud commit cannot do without.
func rawPuts(ctx context.Context, spec Spec) (Outcome, error) {
	body, err := commitBody()
	if err != nil {
		return Outcome{}, err
	}
	st, err := objstore.Open(ctx, spec.Table)
	if err != nil {
		return Outcome{}, err
	}
	var lat []float64
	start := time.Now()
	for i := range spec.N {
		t := time.Now()
		err := st.Put(ctx, "_delta_log/"+deltalog.CommitName(int64(i)), bytes.NewReader(body), objstore.PutOptions{IfAbsent: true, Size: int64(len(body))})
		if err != nil {
			if errors.Is(err, objstore.ErrExists) {
				return Outcome{}, fmt.Errorf("raw put %d: key exists; use a fresh table URI: %w", i, err)
			}
			return Outcome{}, err
		}
		lat = append(lat, time.Since(t).Seconds())
	}
	return Outcome{Seconds: time.Since(start).Seconds(), Count: int64(spec.N), Latency: summarize(lat), Info: strconv.Itoa(len(body)) + " bytes"}, nil
}
