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
	const goroutines, processes = 8, 4
	perProc := total / 5 / processes
	perGoroutine := (total - perProc*processes) / goroutines
	extra := total - perProc*processes - perGoroutine*goroutines

	dir := t.TempDir()
	if *keepFlag {
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
	createTable(t, st)

	ctx := context.Background()
	start := time.Now()
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		journal  []*opRecord
		failures []string
		restarts atomic.Int64
	)
	fail := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		failures = append(failures, fmt.Sprintf(format, args...))
	}
	shared := new(atomic.Int64)
	for g := range goroutines {
		n := perGoroutine
		if g < extra {
			n++
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			w := newWorker(st, fmt.Sprintf("g%d", g), g, 0, seed)
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
				fail("seed %d: writer g%d: %v", seed, g, err)
			}
		}()
	}
	procJournals := make([]string, processes)
	for p := range processes {
		procJournals[p] = filepath.Join(dir, fmt.Sprintf("journal-p%d.jsonl", p))
		wg.Add(1)
		go func() {
			defer wg.Done()
			n, err := runProcess(tableDir, procJournals[p], seed, p, goroutines+p, perProc)
			restarts.Add(int64(n))
			if err != nil {
				fail("seed %d: writer p%d: %v", seed, p, err)
			}
		}()
	}
	wg.Wait()
	for _, f := range failures {
		t.Error(f)
	}
	if t.Failed() {
		return
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
	for i, e := range errs {
		if i == 40 {
			t.Errorf("seed %d: ... and %d more", seed, len(errs)-i)
			break
		}
		t.Errorf("seed %d: %s", seed, e)
	}
	t.Logf("seed %d: %d operations by %d goroutines and %d processes (%d process restarts after crashes) in %v; %s",
		seed, len(journal), goroutines, processes, restarts.Load(), ran.Round(time.Millisecond), stats)
}

// runProcess runs writer process p until it has done ops operations,
// restarting it after each crash. It returns the number of restarts.
func runProcess(table, journal string, seed uint64, p, index, ops int) (int, error) {
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
			Index: index, Inc: inc, Ops: max(ops-done, 0), Retry: retry,
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

// createTable creates the model's table at the store's root.
func createTable(t *testing.T, st objstore.Store) {
	t.Helper()
	schema, err := actions.ParseDDL(schemaDDL)
	if err != nil {
		t.Fatal(err)
	}
	s, err := actions.SchemaString(schema)
	if err != nil {
		t.Fatal(err)
	}
	tx, err := deltalog.Create(st, "", &actions.Metadata{SchemaString: s, PartitionColumns: []string{"p"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Commit(context.Background()); err != nil {
		t.Fatal(err)
	}
}
