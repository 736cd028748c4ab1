package deltalog_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/objstore"
)

// childEnv names the variable that turns the test binary into a committing
// child process: "dir,process,commits".
const childEnv = "LAKELOG_TEST_COMMIT_CHILD"

func TestMain(m *testing.M) {
	if spec := os.Getenv(childEnv); spec != "" {
		os.Exit(commitChild(spec))
	}
	os.Exit(m.Run())
}

// commitChild appends n one-file commits, each naming its process and
// sequence, then exits 0; anything else is a failure.
func commitChild(spec string) int {
	parts := strings.Split(spec, ",")
	if len(parts) != 3 {
		fmt.Fprintln(os.Stderr, "bad spec", spec)
		return 2
	}
	proc := parts[1]
	n, _ := strconv.Atoi(parts[2])
	st, err := objstore.NewLocal(parts[0])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	ctx := context.Background()
	s, err := deltalog.Open(ctx, st, "")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	for i := 0; i < n; i++ {
		// Each commit starts from the previous one's result, so a loser
		// reads only the winners it raced and rebases over them.
		tx := s.NewTransaction()
		tx.Add(addFile(fmt.Sprintf("p%s-c%03d.parquet", proc, i), "nl"))
		tx.SetOperation("WRITE", map[string]any{"mode": "Append"}, nil)
		res, err := tx.Commit(ctx)
		if err != nil {
			fmt.Fprintf(os.Stderr, "process %s commit %d: %v\n", proc, i, err)
			return 1
		}
		if s, err = res.Snapshot(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	return 0
}

// Sixteen OS processes commit to one local table at once, fifty commits
// each: versions 1..800 are contiguous and hold every commit exactly once.
func TestConcurrentProcessesLocal(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns 16 processes")
	}
	const procs, commits = 16, 50
	dir := t.TempDir()
	st, err := objstore.NewLocal(dir)
	if err != nil {
		t.Fatal(err)
	}
	createTable(t, st, nil)
	var wg sync.WaitGroup
	errs := make([]error, procs)
	outs := make([][]byte, procs)
	for p := 0; p < procs; p++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s,%d,%d", childEnv, dir, p, commits))
			outs[p], errs[p] = cmd.CombinedOutput()
		}()
	}
	wg.Wait()
	for p := range procs {
		if errs[p] != nil {
			t.Fatalf("process %d: %v\n%s", p, errs[p], outs[p])
		}
	}
	checkEveryCommitOnce(t, st, procs, commits)
}

// checkEveryCommitOnce verifies versions 1..procs*commits each add exactly
// one file, and that every (process, sequence) appears once.
func checkEveryCommitOnce(t *testing.T, st objstore.Store, procs, commits int) {
	t.Helper()
	ctx := context.Background()
	s := open(t, st)
	want := int64(procs * commits)
	if s.Version() != want {
		t.Fatalf("latest version %d, want %d", s.Version(), want)
	}
	seen := map[string]int64{}
	for v := int64(1); v <= want; v++ {
		b, err := st.Get(ctx, "_delta_log/"+deltalog.CommitName(v))
		if err != nil {
			t.Fatalf("version %d: %v", v, err)
		}
		n := strings.Count(string(b), `{"add":`)
		if n != 1 {
			t.Fatalf("version %d has %d adds", v, n)
		}
		i := strings.Index(string(b), `"path":"`)
		path := string(b)[i+8:]
		path = path[:strings.IndexByte(path, '"')]
		if prev, dup := seen[path]; dup {
			t.Fatalf("%s committed twice: versions %d and %d", path, prev, v)
		}
		seen[path] = v
	}
	for p := 0; p < procs; p++ {
		for c := 0; c < commits; c++ {
			name := fmt.Sprintf("p%d-c%03d.parquet", p, c)
			if _, ok := seen[name]; !ok {
				t.Fatalf("commit %s lost", name)
			}
		}
	}
	if s.NumFiles() != procs*commits {
		t.Fatalf("snapshot has %d files, want %d", s.NumFiles(), procs*commits)
	}
}
