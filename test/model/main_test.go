package model

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/conflict"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/objstore"
)

var (
	seedFlag = flag.Uint64("seed", 0, "seed of the model test (default: LAKELOG_MODEL_SEED, else the clock)")
	opsFlag  = flag.Int("ops", 0, "operations in the model test (default 2000, 240 with -short)")
	keepFlag = flag.Bool("keep", false, "keep the table and journals of the model test, and print where")
)

// seedEnv replays a seed without the flag.
const seedEnv = "LAKELOG_MODEL_SEED"

// childEnv turns the test binary into a writer process; its value is a
// childSpec in JSON.
const childEnv = "LAKELOG_MODEL_CHILD"

// crashExit is the exit code of a writer process that crashed on purpose.
const crashExit = 77

// childSpec tells a writer process what to do.
type childSpec struct {
	Table   string    `json:"table"`
	Journal string    `json:"journal"`
	Seed    uint64    `json:"seed"`
	Name    string    `json:"name"`
	Index   int       `json:"index"`
	Inc     int       `json:"inc"`
	Ops     int       `json:"ops"`
	Retry   *opRecord `json:"retry,omitempty"`
	Mutant  string    `json:"mutant,omitempty"`
}

func TestMain(m *testing.M) {
	if spec := os.Getenv(childEnv); spec != "" {
		os.Exit(runChild(spec))
	}
	os.Exit(m.Run())
}

// runChild is a writer process: it does its operations and journals each
// to its own file, one JSON line per write, so that a crash loses nothing
// it journalled.
func runChild(specJSON string) int {
	var spec childSpec
	if err := json.Unmarshal([]byte(specJSON), &spec); err != nil {
		fmt.Fprintln(os.Stderr, "model child: bad spec:", err)
		return 2
	}
	st, err := objstore.NewLocal(spec.Table)
	if err != nil {
		fmt.Fprintln(os.Stderr, "model child:", err)
		return 1
	}
	j, err := os.OpenFile(spec.Journal, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		fmt.Fprintln(os.Stderr, "model child:", err)
		return 1
	}
	w := newWorker(st, spec.Name, spec.Index, spec.Inc, spec.Seed)
	w.process = true
	w.txnOpts = mutantOptions(spec.Mutant)
	w.exit = func() { os.Exit(crashExit) }
	w.journal = func(rec *opRecord) error {
		b, err := json.Marshal(rec)
		if err != nil {
			return err
		}
		_, err = j.Write(append(b, '\n'))
		return err
	}
	if err := w.run(context.Background(), spec.Ops, spec.Retry); err != nil {
		fmt.Fprintln(os.Stderr, "model child:", err)
		return 1
	}
	if err := j.Close(); err != nil {
		fmt.Fprintln(os.Stderr, "model child:", err)
		return 1
	}
	return 0
}

// modelSeed is the seed from -seed, LAKELOG_MODEL_SEED or the clock.
func modelSeed(t *testing.T) uint64 {
	if *seedFlag != 0 {
		return *seedFlag
	}
	if s := os.Getenv(seedEnv); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("%s=%q: %v", seedEnv, s, err)
		}
		return v
	}
	return uint64(time.Now().UnixNano())
}

// The acceptance test of concurrent writers: goroutine and process writers
// run random operations with injected faults on one table, and the log,
// the journals and the table's rows must agree with the model.
func TestConcurrentWriters(t *testing.T) {
	seed := modelSeed(t)
	fmt.Printf("model: seed %d (replay with -seed %d or %s=%d)\n", seed, seed, seedEnv, seed)
	t.Logf("seed %d", seed)
	total := 2000
	if testing.Short() {
		total = 240
	}
	if *opsFlag > 0 {
		total = *opsFlag
	}
	summary, errs := runModel(t, runConfig{seed: seed, ops: total, goroutines: 8, processes: 4, keep: *keepFlag})
	for i, e := range errs {
		if i == 40 {
			t.Errorf("seed %d: ... and %d more", seed, len(errs)-i)
			break
		}
		t.Errorf("seed %d: %s", seed, e)
	}
	t.Logf("seed %d: %s", seed, summary)
}

// TestConcurrentWritersSchemaChanges is TestConcurrentWriters on a
// column-mapped table where writers also add, rename, drop and widen
// columns (package schema) between the appends, overwrites,
// replaceWhere, DELETE, UPDATE, MERGE and OPTIMIZE, with the same faults:
// every schema change is one metadata commit that aborts the
// transactions it wins against, and no row is lost or duplicated at any
// sampled version.
func TestConcurrentWritersSchemaChanges(t *testing.T) {
	seed := modelSeed(t)
	fmt.Printf("model (schema changes): seed %d (replay with -seed %d or %s=%d)\n", seed, seed, seedEnv, seed)
	total := 600
	if testing.Short() {
		total = 160
	}
	if *opsFlag > 0 {
		total = *opsFlag
	}
	summary, errs := runModel(t, runConfig{seed: seed, ops: total, goroutines: 6, processes: 2, keep: *keepFlag, mapped: true})
	for i, e := range errs {
		if i == 40 {
			t.Errorf("seed %d: ... and %d more", seed, len(errs)-i)
			break
		}
		t.Errorf("seed %d: %s", seed, e)
	}
	t.Logf("seed %d: %s", seed, summary)
}

// The model notices a conflict checker that is wrong either way: one that
// lets every transaction rebase (lost updates, duplicated rows), one that
// aborts every transaction that lost a race, and Spark's checker that
// checks every transaction at Serializable, counting the adds of blind
// appends under WriteSerializable too.
func TestModelCatchesBrokenChecker(t *testing.T) {
	seed := modelSeed(t)
	for _, mutant := range []string{mutantRebaseAll, mutantAbortAll, mutantSerializable} {
		t.Run(mutant, func(t *testing.T) {
			summary, errs := runModel(t, runConfig{seed: seed, ops: 160, goroutines: 8, mutant: mutant})
			if len(errs) == 0 {
				t.Errorf("seed %d: the model found nothing wrong with a checker that %s: %s", seed, mutant, summary)
			}
			t.Logf("seed %d: %d findings, the first: %s", seed, len(errs), first(errs))
		})
	}
}

func first(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[0]
}

// Checkers that are wrong on purpose.
const (
	mutantRebaseAll    = "rebases-always"
	mutantAbortAll     = "aborts-always"
	mutantSerializable = "ignores-WriteSerializable"
)

// mutantOptions are the transaction options that install a mutant checker.
func mutantOptions(mutant string) []deltalog.CommitOption {
	switch mutant {
	case mutantRebaseAll:
		return []deltalog.CommitOption{deltalog.WithChecker(func(*conflict.Txn, *conflict.Winner) error { return nil })}
	case mutantAbortAll:
		return []deltalog.CommitOption{deltalog.WithChecker(func(_ *conflict.Txn, w *conflict.Winner) error {
			return &conflict.Error{Kind: conflict.ErrConcurrentAppend, WinningVersion: w.Version}
		})}
	case mutantSerializable:
		schema, err := actions.ParseDDL(schemaDDL)
		if err != nil {
			panic(err) // a constant
		}
		text, err := actions.SchemaString(schema)
		if err != nil {
			panic(err)
		}
		table, err := actions.NewTableConfig(&actions.Protocol{MinReaderVersion: 1, MinWriterVersion: 2},
			&actions.Metadata{SchemaString: text, PartitionColumns: []string{"p"}})
		if err != nil {
			panic(err)
		}
		check := conflict.NewChecker(table)
		return []deltalog.CommitOption{deltalog.WithChecker(func(tx *conflict.Txn, w *conflict.Winner) error {
			strict := *tx
			if strict.Isolation == conflict.WriteSerializable {
				strict.Isolation = conflict.Serializable
			}
			return check(&strict, w)
		})}
	}
	return nil
}

// runConfig is one run of the model.
type runConfig struct {
	seed                  uint64
	ops                   int
	goroutines, processes int
	mutant                string // a broken checker, for TestModelCatchesBrokenChecker
	keep                  bool
	// mapped makes the table column-mapped (mode name, physical names
	// the column names), on which writers also change its shape.
	mapped bool
}

// runModel runs the writers and checks the outcome against the model. It
// fails t itself only when the harness breaks; disagreements with the
// model are returned.
func runModel(t *testing.T, cfg runConfig) (string, []string) {
	t.Helper()
	seed := cfg.seed
	perProc := 0
	if cfg.processes > 0 {
		perProc = cfg.ops / 5 / cfg.processes
	}
	perGoroutine := (cfg.ops - perProc*cfg.processes) / cfg.goroutines
	extra := cfg.ops - perProc*cfg.processes - perGoroutine*cfg.goroutines

	dir := t.TempDir()
	if cfg.keep {
		var err error
		if dir, err = os.MkdirTemp("", "lakelog-model-"); err != nil {
			t.Fatal(err)
		}
		fmt.Printf("model: seed %d: table and journals kept in %s\n", seed, dir)
	}
	tableDir := filepath.Join(dir, "table")
	st, err := objstore.NewLocal(tableDir)
	if err != nil {
		t.Fatal(err)
	}
	createTable(t, st, cfg.mapped)

	ctx := context.Background()
	start := time.Now()
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		journal  []*opRecord
		restarts atomic.Int64
	)
	shared := new(atomic.Int64)
	for g := range cfg.goroutines {
		n := perGoroutine
		if g < extra {
			n++
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			w := newWorker(st, fmt.Sprintf("g%d", g), g, 0, seed)
			w.txnOpts = mutantOptions(cfg.mutant)
			if g < 4 {
				w.shared = shared
			}
			w.journal = func(rec *opRecord) error {
				c := *rec
				mu.Lock()
				defer mu.Unlock()
				journal = append(journal, &c)
				return nil
			}
			if err := w.run(ctx, n, nil); err != nil {
				t.Errorf("seed %d: writer g%d: %v", seed, g, err)
			}
		}()
	}
	procJournals := make([]string, cfg.processes)
	for p := range cfg.processes {
		procJournals[p] = filepath.Join(dir, fmt.Sprintf("journal-p%d.jsonl", p))
		wg.Add(1)
		go func() {
			defer wg.Done()
			n, err := runProcess(tableDir, procJournals[p], seed, p, cfg.goroutines+p, perProc, cfg.mutant)
			restarts.Add(int64(n))
			if err != nil {
				t.Errorf("seed %d: writer p%d: %v", seed, p, err)
			}
		}()
	}
	wg.Wait()
	if t.Failed() {
		return "", nil
	}
	for _, path := range procJournals {
		recs, err := readJournal(path)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		journal = append(journal, recs...)
	}
	ran := time.Since(start)

	m := newModel(seed, st)
	stats, errs := m.verify(ctx, journal)
	return fmt.Sprintf("%d operations by %d goroutines and %d processes (%d process restarts after crashes) in %v; %s",
		len(journal), cfg.goroutines, cfg.processes, restarts.Load(), ran.Round(time.Millisecond), stats), errs
}

// runProcess runs writer process p until it has done ops operations,
// restarting it after each crash. It returns the number of restarts.
func runProcess(table, journal string, seed uint64, p, index, ops int, mutant string) (int, error) {
	for inc := 0; ; inc++ {
		if inc > 200 {
			return inc, errors.New("too many restarts")
		}
		recs, err := readJournal(journal)
		if err != nil {
			return inc, err
		}
		done := 0
		var retry *opRecord
		for _, r := range recs {
			if r.RetryOf == "" {
				done++
			}
			retry = nil
			if r.Outcome == outPending && (r.Fault == faultCrash || r.Fault == faultCrashAfter) && r.AppID != "" {
				retry = r
			}
		}
		if done >= ops && retry == nil {
			return inc, nil
		}
		spec, err := json.Marshal(childSpec{
			Table: table, Journal: journal, Seed: seed, Name: fmt.Sprintf("p%d", p),
			Index: index, Inc: inc, Ops: max(ops-done, 0), Retry: retry, Mutant: mutant,
		})
		if err != nil {
			return inc, err
		}
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), childEnv+"="+string(spec))
		out, err := cmd.CombinedOutput()
		var exit *exec.ExitError
		switch {
		case err == nil:
			return inc, nil
		case errors.As(err, &exit) && exit.ExitCode() == crashExit:
			continue
		default:
			return inc, fmt.Errorf("incarnation %d: %v\n%s", inc, err, out)
		}
	}
}

// readJournal reads a process's journal; for each operation the last
// line wins. A missing file is an empty journal.
func readJournal(path string) ([]*opRecord, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []*opRecord
	index := map[string]int{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var r opRecord
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return nil, fmt.Errorf("journal %s: %w", path, err)
		}
		if i, ok := index[r.ID]; ok {
			out[i] = &r
			continue
		}
		index[r.ID] = len(out)
		out = append(out, &r)
	}
	return out, sc.Err()
}

// createTable creates the model's table at the store's root. A mapped
// one has column mapping mode name with physical names equal to the
// column names (as when mapping is enabled on an existing table; the
// model reads stats and partition values by them) and type widening, in
// version 0.
func createTable(t *testing.T, st objstore.Store, mapped bool) {
	t.Helper()
	schema, err := actions.ParseDDL(schemaDDL)
	if err != nil {
		t.Fatal(err)
	}
	var props map[string]string
	if mapped {
		var maxID int64
		schema, maxID = actions.AssignColumnMapping(schema, 0, true)
		props = map[string]string{actions.PropColumnMappingMode: "name", actions.PropColumnMappingMaxColumnID: strconv.FormatInt(maxID, 10), actions.PropEnableTypeWidening: "true"}
	}
	s, err := actions.SchemaString(schema)
	if err != nil {
		t.Fatal(err)
	}
	tx, err := deltalog.Create(st, "", &actions.Metadata{SchemaString: s, PartitionColumns: []string{"p"}, Configuration: props})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Commit(context.Background()); err != nil {
		t.Fatal(err)
	}
}
