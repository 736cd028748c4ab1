package maintenance

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/expr"
)

// Importing maintenance registers auto compaction as a post-commit hook
// (deltalog.HookAutoCompact): every commit of a program that links this
// package, to a table with delta.autoOptimize.autoCompact=true, that
// adds data files is followed by an OPTIMIZE of the partitions it wrote
// when they hold enough small files. A commit to such a table from a
// program that does not link it reports deltalog.ErrHookNotLinked (the
// commit stands; lakelog optimize compacts).
func init() { deltalog.RegisterHook(AutoCompactHook()) }

// Auto compaction's defaults, Spark's (spark.databricks.delta.autoCompact.*).
const (
	// AutoCompactMaxFileSize is the size auto compaction's files aim at:
	// 128 MiB, smaller than OPTIMIZE's, so that it stays cheap.
	AutoCompactMaxFileSize = 128 << 20
	// AutoCompactMinNumFiles is how many small files a partition needs
	// before auto compaction rewrites it.
	AutoCompactMinNumFiles = 50
	// AutoCompactMaxPartitions bounds the partitions one run compacts:
	// those with the most small files go first.
	AutoCompactMaxPartitions = 128
)

// AutoCompactOption configures auto compaction (AutoCompactHook,
// AutoCompact).
type AutoCompactOption func(*autoCompactConfig)

type autoCompactConfig struct {
	maxFileSize   int64
	minFileSize   int64
	minNumFiles   int
	maxPartitions int
	optimize      []OptimizeOption
}

// AutoCompactFileSizes sets the target size of the files auto compaction
// writes (default AutoCompactMaxFileSize) and the size under which a file
// is small (default half the target, as Spark).
func AutoCompactFileSizes(target, small int64) AutoCompactOption {
	return func(c *autoCompactConfig) { c.maxFileSize, c.minFileSize = target, small }
}

// AutoCompactMinFiles sets how many small files a partition needs before
// it is compacted (default AutoCompactMinNumFiles).
func AutoCompactMinFiles(n int) AutoCompactOption {
	return func(c *autoCompactConfig) { c.minNumFiles = n }
}

// AutoCompactPartitions bounds the partitions one run compacts (default
// AutoCompactMaxPartitions).
func AutoCompactPartitions(n int) AutoCompactOption {
	return func(c *autoCompactConfig) { c.maxPartitions = n }
}

// AutoCompactOptimizeOptions passes options to the OPTIMIZE auto
// compaction runs (writer options, commit options, parallelism).
func AutoCompactOptimizeOptions(opts ...OptimizeOption) AutoCompactOption {
	return func(c *autoCompactConfig) { c.optimize = append(c.optimize, opts...) }
}

func newAutoCompactConfig(opts []AutoCompactOption) autoCompactConfig {
	c := autoCompactConfig{maxFileSize: AutoCompactMaxFileSize, minNumFiles: AutoCompactMinNumFiles, maxPartitions: AutoCompactMaxPartitions}
	for _, o := range opts {
		o(&c)
	}
	if c.maxFileSize <= 0 {
		c.maxFileSize = AutoCompactMaxFileSize
	}
	if c.minFileSize <= 0 {
		c.minFileSize = c.maxFileSize / 2
	}
	c.minNumFiles = max(c.minNumFiles, 1)
	if c.maxPartitions <= 0 {
		c.maxPartitions = AutoCompactMaxPartitions
	}
	return c
}

// AutoCompactHook is auto compaction as a post-commit hook
// (deltalog.HookAutoCompact), Spark's AutoCompact: after a commit to a
// table with delta.autoOptimize.autoCompact=true that added data files
// (dataChange true: OPTIMIZE's own commits never trigger it), the
// partitions it added files to are compacted (AutoCompact). The package
// registers one with the defaults; registering another (RegisterHook)
// replaces it. It never fails the commit that triggered it: its errors
// (a conflict with a concurrent DELETE, a store error) are reported by
// the commit's WaitHooks, and the next commit to the partition tries
// again.
func AutoCompactHook(opts ...AutoCompactOption) deltalog.PostCommitHook {
	return autoCompactHook{opts: opts}
}

type autoCompactHook struct{ opts []AutoCompactOption }

func (autoCompactHook) Name() string { return deltalog.HookAutoCompact }

// Run compacts every partition of the table that needs it: the hook run
// without a commit.
func (h autoCompactHook) Run(ctx context.Context, snap *deltalog.Snapshot) error {
	if !snap.Config().AutoCompact() {
		return nil
	}
	_, err := AutoCompact(ctx, snap, nil, h.opts...)
	return err
}

// RunCommit compacts the partitions the commit added data files to.
func (h autoCompactHook) RunCommit(ctx context.Context, snap *deltalog.Snapshot, committed []actions.Action) error {
	if !snap.Config().AutoCompact() {
		return nil
	}
	var parts []map[string]*string
	seen := map[string]bool{}
	for _, a := range committed {
		if a.Add == nil || !a.Add.DataChange {
			continue
		}
		if k := partitionKey(a.Add.PartitionValues); !seen[k] {
			seen[k] = true
			parts = append(parts, a.Add.PartitionValues)
		}
	}
	if len(parts) == 0 {
		return nil // no data written: nothing to compact (Spark skips empty ingestion too)
	}
	_, err := AutoCompact(ctx, snap, parts, h.opts...)
	return err
}

// reserved are the partitions an auto compaction of this process is
// rewriting, by table and partition: a concurrent run leaves them alone
// rather than race it to the same files (Spark's partition reservation).
var reserved struct {
	sync.Mutex
	parts map[string]bool
}

// AutoCompact runs auto compaction on the given partitions of the table
// (each a partitionValues map as adds carry them; nil for every
// partition): a bounded OPTIMIZE, as Spark's auto compaction. A partition
// is compacted when it holds at least AutoCompactMinFiles small files
// (under half the target size); the AutoCompactPartitions partitions
// with the most are chosen. Its files are bin-packed into files of about
// AutoCompactMaxFileSize, in one normal OPTIMIZE commit (adds and
// removes with dataChange false; commitInfo operation OPTIMIZE with
// operationParameters auto=true and the predicate naming the
// partitions), so that readers, the change data feed and peers see an
// OPTIMIZE. The result has no commits when no partition qualified.
func AutoCompact(ctx context.Context, snap *deltalog.Snapshot, partitions []map[string]*string, opts ...AutoCompactOption) (*OptimizeResult, error) {
	if snap == nil {
		return nil, fmt.Errorf("maintenance: %w", deltalog.ErrNoSnapshot)
	}
	c := newAutoCompactConfig(opts)
	var wanted map[string]bool
	if partitions != nil {
		wanted = map[string]bool{}
		for _, pv := range partitions {
			wanted[partitionKey(pv)] = true
		}
	}
	// Count the small files of each wanted partition.
	small := map[string]int{}
	values := map[string]map[string]*string{}
	for f := range snap.Files() {
		k := partitionKey(f.PartitionValues)
		if wanted != nil && !wanted[k] {
			continue
		}
		if f.Size < c.minFileSize || f.DeletionVector != nil {
			small[k]++
			values[k] = f.PartitionValues
		}
	}
	var chosen []string
	for k, n := range small {
		if n >= c.minNumFiles {
			chosen = append(chosen, k)
		}
	}
	slices.SortFunc(chosen, func(a, b string) int { return cmp.Or(cmp.Compare(small[b], small[a]), cmp.Compare(a, b)) })
	if len(chosen) > c.maxPartitions {
		chosen = chosen[:c.maxPartitions]
	}
	chosen = reserve(snap, chosen)
	defer release(snap, chosen)
	if len(chosen) == 0 {
		return &OptimizeResult{}, nil
	}
	parts := map[string]bool{}
	var pvs []map[string]*string
	for _, k := range chosen {
		parts[k] = true
		pvs = append(pvs, values[k])
	}
	var predicate []string
	if len(snap.PartitionColumns()) > 0 {
		pred, err := partitionPredicate(snap, pvs)
		if err != nil {
			return nil, fmt.Errorf("maintenance: auto compaction: %w", err)
		}
		predicate = []string{pred.String()}
	}
	all := append([]OptimizeOption{
		TargetSize(c.maxFileSize), MinFileSize(c.minFileSize),
		// Its commit's own hooks (a checkpoint) are done when the
		// triggering commit's WaitHooks returns.
		OptimizeCommitOptions(deltalog.WithPostCommit(deltalog.PostCommitSync)),
	}, c.optimize...)
	all = append(all, func(o *optimizeConfig) {
		o.auto, o.partitions, o.predicate, o.minNumFiles = true, parts, predicate, c.minNumFiles
	})
	res, err := Optimize(ctx, snap, all...)
	if err != nil {
		return res, fmt.Errorf("maintenance: auto compaction: %w", err)
	}
	var hookErrs []error
	for _, cr := range res.Commits {
		if err := cr.WaitHooks(); err != nil {
			hookErrs = append(hookErrs, err)
		}
	}
	if len(hookErrs) > 0 {
		return res, fmt.Errorf("maintenance: auto compaction: after its commit: %w", hookErrs[0])
	}
	return res, nil
}

// reserve takes the partitions no other auto compaction of the process
// holds, and returns them.
func reserve(snap *deltalog.Snapshot, keys []string) []string {
	reserved.Lock()
	defer reserved.Unlock()
	if reserved.parts == nil {
		reserved.parts = map[string]bool{}
	}
	var out []string
	for _, k := range keys {
		rk := reservationKey(snap, k)
		if !reserved.parts[rk] {
			reserved.parts[rk] = true
			out = append(out, k)
		}
	}
	return out
}

func release(snap *deltalog.Snapshot, keys []string) {
	reserved.Lock()
	defer reserved.Unlock()
	for _, k := range keys {
		delete(reserved.parts, reservationKey(snap, k))
	}
}

func reservationKey(snap *deltalog.Snapshot, partition string) string {
	return fmt.Sprintf("%p\x00%s\x00%s", snap.Store(), snap.Root(), partition)
}

// partitionPredicate is the predicate selecting the partitions (by
// their partition values), as auto compaction records it: an OR of one
// AND per partition of col <=> value.
func partitionPredicate(snap *deltalog.Snapshot, pvs []map[string]*string) (expr.Expr, error) {
	cfg := snap.Config()
	var ors []expr.Expr
	for _, pv := range pvs {
		var ands []expr.Expr
		for _, name := range snap.PartitionColumns() {
			f := snap.Schema().Field(name)
			if f == nil {
				return nil, fmt.Errorf("partition column %q is not in the schema", name)
			}
			v, err := actions.ParsePartitionValue(f.Type, pv[cfg.PhysicalName(f)])
			if err != nil {
				return nil, err
			}
			ands = append(ands, &expr.Compare{Op: expr.NullSafeEq, Left: expr.Col(name), Right: expr.Lit(v)})
		}
		ors = append(ors, expr.And(ands...))
	}
	return expr.Or(ors...), nil
}
