package workload

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sync"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/checkpoint"
	"github.com/lakelog/lakelog/objstore"
)

// LogSpec describes a synthetic Delta log.
type LogSpec struct {
	// Commits is the number of commit files, versions 0 to Commits-1.
	Commits int
	// AddsPerCommit is the number of add actions in each commit; the
	// table ends with Commits*AddsPerCommit active files.
	AddsPerCommit int
}

// Files is the number of active files the log ends with.
func (s LogSpec) Files() int { return s.Commits * s.AddsPerCommit }

// baseTime is the first commit's timestamp (2026-01-01T00:00:00Z in ms);
// commit v is v seconds later.
const baseTime = 1767225600000

// SynthesizeLog writes spec's commits into dir/_delta_log/ on local disk
// (creating the folders), without fsync: version 0 holds commitInfo,
// protocol (1, 2) and the data-path table's metaData, then every version
// holds a commitInfo and AddsPerCommit adds. File f (0-based over the whole
// log) is in partition p=p<f mod 10>, claims 1000 rows with ids
// [1000f, 1000f+999], and carries Spark-style stats for id, v and s. The data
// files do not exist. Existing commit files are overwritten.
func SynthesizeLog(ctx context.Context, dir string, spec LogSpec) error {
	if spec.Commits < 1 || spec.AddsPerCommit < 0 {
		return fmt.Errorf("workload: synthesize log: need at least one commit, got %d commits of %d adds", spec.Commits, spec.AddsPerCommit)
	}
	logDir := filepath.Join(dir, "_delta_log")
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		return fmt.Errorf("workload: synthesize log: %w", err)
	}
	workers := runtime.GOMAXPROCS(0)
	var mu struct {
		sync.Mutex
		next int
		err  error
	}
	// claim returns the next version to write, or false when done or failed.
	claim := func() (int, bool) {
		mu.Lock()
		defer mu.Unlock()
		if mu.err != nil || mu.next >= spec.Commits {
			return 0, false
		}
		mu.next++
		return mu.next - 1, true
	}
	fail := func(err error) {
		mu.Lock()
		defer mu.Unlock()
		if mu.err == nil {
			mu.err = err
		}
	}
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				v, ok := claim()
				if !ok {
					return
				}
				if err := ctx.Err(); err != nil {
					fail(err)
					return
				}
				body, err := actions.MarshalCommit(commitActions(spec, v))
				if err != nil {
					fail(fmt.Errorf("workload: synthesize commit %d: %w", v, err))
					return
				}
				name := filepath.Join(logDir, fmt.Sprintf("%020d.json", v))
				if err := os.WriteFile(name, body, 0o644); err != nil {
					fail(fmt.Errorf("workload: synthesize log: %w", err))
					return
				}
			}
		})
	}
	wg.Wait()
	return mu.err
}

// commitActions are the actions of version v of spec's log.
func commitActions(spec LogSpec, v int) []actions.Action {
	ts := int64(baseTime + 1000*v)
	blind := true
	info := &actions.CommitInfo{
		Timestamp:           &ts,
		Operation:           "WRITE",
		OperationParameters: map[string]any{"mode": "Append", "partitionBy": `["p"]`},
		IsolationLevel:      "Serializable",
		IsBlindAppend:       &blind,
		EngineInfo:          "lakelog-bench-synthetic",
	}
	if v > 0 {
		rv := int64(v - 1)
		info.ReadVersion = &rv
	}
	as := make([]actions.Action, 0, spec.AddsPerCommit+3)
	as = append(as, actions.Action{CommitInfo: info})
	if v == 0 {
		created := int64(baseTime)
		md := Metadata()
		md.ID = "00000000-0000-4000-8000-00000000be4c"
		md.CreatedTime = &created
		as = append(as,
			actions.Action{Protocol: &actions.Protocol{MinReaderVersion: 1, MinWriterVersion: 2}},
			actions.Action{Metadata: md})
	}
	for j := range spec.AddsPerCommit {
		as = append(as, actions.Action{Add: syntheticAdd(int64(v*spec.AddsPerCommit+j), ts)})
	}
	return as
}

// syntheticAdd is the add action of file f.
func syntheticAdd(f, ts int64) *actions.Add {
	part := pValues[f%NumPartitions]
	return &actions.Add{
		Path:             fmt.Sprintf("p=%s/part-00000-%08x-0000-4000-8000-%012x-c000.snappy.parquet", part, f>>16, f),
		PartitionValues:  map[string]*string{"p": &part},
		Size:             1_000_000 + f%4096,
		ModificationTime: ts,
		DataChange:       true,
		Stats: fmt.Sprintf(`{"numRecords":1000,"minValues":{"id":%d,"v":0.0001,"s":"s000000"},"maxValues":{"id":%d,"v":0.9999,"s":"s099999"},"nullCount":{"id":0,"v":0,"s":0}}`,
			1000*f, 1000*f+999),
	}
}

// LinkTable makes dst a copy of the local table at src whose files are
// hard links to src's, removing dst first. Log files are never modified,
// only added, so each copy can be checkpointed on its own.
func LinkTable(src, dst string) error {
	if err := os.RemoveAll(dst); err != nil {
		return fmt.Errorf("workload: link table: %w", err)
	}
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		return os.Link(path, target)
	})
	if err != nil {
		return fmt.Errorf("workload: link table: %w", err)
	}
	return nil
}

// SynthesizeCheckpoint writes, into dir on local disk, a table of files
// active files whose log holds one checkpoint: version 0's commit
// (commitInfo, protocol (1, 2), the data-path table's metaData, no adds),
// the classic checkpoint of version 0 with files adds, and
// _last_checkpoint, as a table whose log was cleaned up to its latest
// checkpoint looks. The adds are those of SynthesizeLog's files 0 to
// files-1 (file f holds ids [1000f, 1000f+999], with stats); they stream
// into the checkpoint without being held. Existing files are replaced.
func SynthesizeCheckpoint(ctx context.Context, dir string, files int) error {
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("workload: synthesize checkpoint: %w", err)
	}
	st, err := objstore.NewLocal(dir)
	if err != nil {
		return fmt.Errorf("workload: synthesize checkpoint: %w", err)
	}
	spec := LogSpec{Commits: 1, AddsPerCommit: 0}
	head := commitActions(spec, 0)
	body, err := actions.MarshalCommit(head)
	if err != nil {
		return fmt.Errorf("workload: synthesize checkpoint: %w", err)
	}
	if err := st.Put(ctx, "_delta_log/"+actions.CommitName(0), bytes.NewReader(body), objstore.PutOptions{}); err != nil {
		return fmt.Errorf("workload: synthesize checkpoint: %w", err)
	}
	acts := func(yield func(actions.Action, error) bool) {
		for _, a := range head {
			if a.CommitInfo == nil && !yield(a, nil) {
				return
			}
		}
		ts := int64(baseTime)
		for f := range int64(files) {
			if !yield(actions.Action{Add: syntheticAdd(f, ts)}, nil) {
				return
			}
		}
	}
	lc, err := checkpoint.Write(ctx, st, "_delta_log", 0, acts)
	if err != nil {
		return fmt.Errorf("workload: synthesize checkpoint: %w", err)
	}
	if err := checkpoint.WriteLast(ctx, st, "_delta_log", lc); err != nil {
		return fmt.Errorf("workload: synthesize checkpoint: %w", err)
	}
	return nil
}
