package multiwriter

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/objstore"
)

// childEnv turns the test binary into a committing child: "proc|commits|uri".
const childEnv = "LAKELOG_MULTIWRITER_CHILD"

// Schema is the table Create makes: one partition column, as in the demo.
const Schema = `{"type":"struct","fields":[{"name":"id","type":"long","nullable":false,"metadata":{}},{"name":"country","type":"string","nullable":true,"metadata":{}}]}`

// MaybeChild runs the child role and exits when the process was started as
// a child by Run; otherwise it returns at once. Call it first in TestMain.
func MaybeChild() {
	spec := os.Getenv(childEnv)
	if spec == "" {
		return
	}
	os.Exit(child(spec))
}

// FileName is the path of the one file that process proc adds in its i-th
// commit.
func FileName(proc, i int) string { return fmt.Sprintf("country=nl/p%02d-c%04d.parquet", proc, i) }

func child(spec string) int {
	parts := strings.SplitN(spec, "|", 3)
	if len(parts) != 3 {
		fmt.Fprintln(os.Stderr, "multiwriter: bad spec", spec)
		return 2
	}
	proc, err1 := strconv.Atoi(parts[0])
	n, err2 := strconv.Atoi(parts[1])
	if err1 != nil || err2 != nil {
		fmt.Fprintln(os.Stderr, "multiwriter: bad spec", spec)
		return 2
	}
	ctx := context.Background()
	st, err := objstore.Open(ctx, parts[2])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	s, err := deltalog.Open(ctx, st, "")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	for i := 0; i < n; i++ {
		// Each commit starts from the previous one's result, so a loser
		// reads only the winners it raced and rebases over them.
		tx := s.NewTransaction()
		nl := "nl"
		tx.Add(actions.Action{Add: &actions.Add{Path: FileName(proc, i), PartitionValues: map[string]*string{"country": &nl}, Size: 100, ModificationTime: 1, DataChange: true}})
		tx.SetOperation("WRITE", map[string]any{"mode": "Append"}, nil)
		res, err := tx.Commit(ctx)
		if err != nil {
			fmt.Fprintf(os.Stderr, "process %d commit %d: %v\n", proc, i, err)
			return 1
		}
		if err := res.WaitHooks(); err != nil {
			fmt.Fprintf(os.Stderr, "process %d checkpoint after version %d: %v\n", proc, res.Version, err)
			return 1
		}
		if s, err = res.Snapshot(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	return 0
}

// Create makes the empty table at st's root.
func Create(t testing.TB, st objstore.Store) {
	t.Helper()
	tx, err := deltalog.Create(st, "", &actions.Metadata{SchemaString: Schema, PartitionColumns: []string{"country"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Commit(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// Run creates the table at uri (opened with objstore.Open, so the test
// binary must import the store packages uri needs), starts procs
// processes that make commits commits each at once, waits for them, and
// checks the result with Check.
func Run(t *testing.T, uri string, procs, commits int) {
	t.Helper()
	st, err := objstore.Open(context.Background(), uri)
	if err != nil {
		t.Fatal(err)
	}
	Create(t, st)
	var wg sync.WaitGroup
	errs := make([]error, procs)
	outs := make([][]byte, procs)
	for p := 0; p < procs; p++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%d|%d|%s", childEnv, p, commits, uri))
			outs[p], errs[p] = cmd.CombinedOutput()
		}()
	}
	wg.Wait()
	for p := range procs {
		if errs[p] != nil {
			t.Fatalf("process %d: %v\n%s", p, errs[p], outs[p])
		}
	}
	Check(t, st, procs, commits)
}

// Check verifies that versions 1..procs*commits exist, each adding exactly
// one file, and that every process's every commit is there exactly once.
func Check(t *testing.T, st objstore.Store, procs, commits int) {
	t.Helper()
	ctx := context.Background()
	s, err := deltalog.Open(ctx, st, "")
	if err != nil {
		t.Fatal(err)
	}
	want := int64(procs * commits)
	if s.Version() != want {
		t.Fatalf("latest version %d, want %d", s.Version(), want)
	}
	seen := map[string]int64{}
	for v := int64(1); v <= want; v++ {
		b, err := st.Get(ctx, deltalog.LogDir+deltalog.CommitName(v))
		if err != nil {
			t.Fatalf("version %d: %v", v, err)
		}
		as, err := actions.ParseCommit(strings.NewReader(string(b)))
		if err != nil {
			t.Fatalf("version %d: %v", v, err)
		}
		var adds []string
		for _, a := range as {
			if a.Add != nil {
				adds = append(adds, a.Add.Path)
			}
		}
		if len(adds) != 1 {
			t.Fatalf("version %d adds %v, want one file", v, adds)
		}
		if prev, dup := seen[adds[0]]; dup {
			t.Fatalf("%s committed twice: versions %d and %d", adds[0], prev, v)
		}
		seen[adds[0]] = v
	}
	for p := 0; p < procs; p++ {
		for c := 0; c < commits; c++ {
			if _, ok := seen[FileName(p, c)]; !ok {
				t.Fatalf("commit %d of process %d lost", c, p)
			}
		}
	}
	if s.NumFiles() != procs*commits {
		t.Fatalf("snapshot has %d files, want %d", s.NumFiles(), procs*commits)
	}
}
