package main

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/maintenance"
)

func init() {
	register(&verb{
		name: "optimize", section: sectionMaintain,
		args:    []arg{{name: "TABLE"}},
		summary: "compact small files (or Z-order them) without disturbing concurrent appends",
		flags: []flagDef{
			{name: "where", kind: textFlag, arg: "PRED", help: "optimize only the partitions matching this predicate over partition columns (lakelog help predicates)"},
			{name: "target-size", kind: bytesFlag, help: "size the new files aim at (default the table's delta.targetFileSize, else 1g)"},
			{name: "min-file-size", kind: bytesFlag, help: "files under this size are compacted (default three quarters of the target size)"},
			{name: "max-commit-bytes", kind: bytesFlag, help: "rewrite at most this many bytes per commit; a large table is then optimized in several commits"},
			{name: "zorder-by", kind: listFlag, help: "cluster each partition's rows by the Z-order of these columns"},
		},
		formats: allFormats, progress: true,
		more: "BYTES is a number of bytes or one with a unit: 128m, 1g.",
		run:  runOptimize,
	})
	register(&verb{
		name: "vacuum", section: sectionMaintain,
		args:    []arg{{name: "TABLE"}},
		summary: "delete files no version inside the retention window (default 7 days) can reach",
		flags: []flagDef{
			{name: "retain", kind: durationFlag, help: "keep the files versions of this long ago can read: a number of hours (168, as RETAIN 168 HOURS), a Go duration (168h) or an interval ('7 days'); default the table's delta.deletedFileRetentionDuration, else 7 days"},
			{name: "dry-run", kind: boolFlag, help: "list the files that would be deleted, with their sizes, and delete nothing"},
			{name: "force", kind: boolFlag, help: "allow a retention under the table's (a writer still writing may lose its files)"},
		},
		formats: allFormats, progress: true,
		run: runVacuum,
	})
	register(&verb{
		name: "restore", section: sectionMaintain,
		args:    []arg{{name: "TABLE"}},
		summary: "put the table back to an earlier version in one commit, copying no data",
		travel:  travelTo,
		formats: allFormats,
		run:     runRestore,
	})
}

// parseBytes reads a size: a number of bytes, or one with a unit
// (k, m, g, t, with or without "b" or "ib"; powers of 1024).
func parseBytes(s string) (int64, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"t", 1 << 40}, {"g", 1 << 30}, {"m", 1 << 20}, {"k", 1 << 10}} {
		for _, form := range []string{u.suffix + "ib", u.suffix + "b", u.suffix} {
			if rest, ok := strings.CutSuffix(t, form); ok {
				t, mult = strings.TrimSpace(rest), u.mult
				goto parsed
			}
		}
	}
	t = strings.TrimSuffix(t, "b")
parsed:
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil || n <= 0 || n > (1<<62)/mult {
		return 0, fmt.Errorf("%q is not a positive size (bytes, or with a unit: 128m, 1g)", s)
	}
	return n * mult, nil
}

// printMetrics prints operationMetrics on one line, sorted by name:
// "metrics: name=value ...".
func printMetrics(w io.Writer, m map[string]any) {
	keys := slices.Sorted(maps.Keys(m))
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s=%v", k, m[k])
	}
	fmt.Fprintf(w, "metrics: %s\n", strings.Join(parts, " "))
}

// progressTo returns a progress callback for the line on stderr (see
// meter), nil when there is none; clear removes the line.
func (c *call) progressTo(what string) (fn func(done, total int), clear func()) {
	m := c.meter()
	if m == nil {
		return nil, func() {}
	}
	return func(done, total int) { m.set(what, int64(done), int64(total), "", "") }, m.clear
}

func runOptimize(ctx context.Context, c *call) error {
	var opts []maintenance.OptimizeOption
	for _, f := range []struct {
		name string
		opt  func(int64) maintenance.OptimizeOption
	}{{"target-size", maintenance.TargetSize}, {"min-file-size", maintenance.MinFileSize}, {"max-commit-bytes", maintenance.MaxBytesPerCommit}} {
		if n, ok := c.number(f.name); ok {
			opts = append(opts, f.opt(n))
		}
	}
	if cols := c.list("zorder-by"); len(cols) > 0 {
		opts = append(opts, maintenance.ZOrderBy(cols...))
	}
	snap, err := c.snapshot(ctx)
	if err != nil {
		return err
	}
	if where := c.text("where"); where != "" {
		pred, err := parseWhere(where, snap.Schema())
		if err != nil {
			return usagef("%v", err)
		}
		opts = append(opts, maintenance.Where(pred))
	}
	progress, clear := c.progressTo("optimize: rows rewritten")
	if progress != nil {
		opts = append(opts, maintenance.OptimizeProgress(progress))
	}
	res, err := maintenance.Optimize(ctx, snap, opts...)
	clear()
	if err != nil {
		return err
	}
	var last *deltalog.CommitResult
	for _, r := range res.Commits {
		c.waitHooks(r)
		last = r
	}
	m := res.Metrics
	return c.report(newOpResult("OPTIMIZE", last, m.OperationMetrics()), func(w io.Writer) {
		if len(res.Commits) == 0 {
			fmt.Fprintf(w, "nothing to optimize (%d files considered)\n", m.TotalConsideredFiles)
			return
		}
		versions := make([]string, len(res.Commits))
		for i, r := range res.Commits {
			versions[i] = strconv.FormatInt(r.Version, 10)
		}
		fmt.Fprintf(w, "optimized: %d files (%s) rewritten as %d files (%s) in version %s\n",
			m.NumRemovedFiles, humanBytes(m.NumRemovedBytes), m.NumAddedFiles, humanBytes(m.NumAddedBytes), strings.Join(versions, ", "))
		printMetrics(w, m.OperationMetrics())
	})
}

// vacuumFile is one line of vacuum --dry-run in the record formats.
type vacuumFile struct {
	Path string `json:"path"`
	Size int64  `json:"size"`
}

func runVacuum(ctx context.Context, c *call) error {
	var opts []maintenance.VacuumOption
	if d, ok := c.duration("retain"); ok {
		opts = append(opts, maintenance.Retain(d))
	}
	if c.on("dry-run") {
		opts = append(opts, maintenance.DryRun())
	}
	if c.on("force") {
		opts = append(opts, maintenance.Force())
	}
	snap, err := c.snapshot(ctx)
	if err != nil {
		return err
	}
	progress, clear := c.progressTo("vacuum: files deleted")
	if progress != nil {
		opts = append(opts, maintenance.VacuumProgress(progress))
	}
	res, err := maintenance.Vacuum(ctx, snap, opts...)
	clear()
	if err != nil {
		return err
	}
	if res.DryRun {
		if c.format != formatTable {
			r := newRecordWriter(c.stdout, c.format, vacuumFile{}, nil, nil, nil)
			for _, f := range res.Files {
				if err := r.write(vacuumFile{Path: strings.TrimPrefix(f.Key, snap.Root()), Size: f.Size}); err != nil {
					return err
				}
			}
			return r.finish(false)
		}
		for _, f := range res.Files {
			fmt.Fprintf(c.stdout, "%s\t%d\n", strings.TrimPrefix(f.Key, snap.Root()), f.Size)
		}
		fmt.Fprintf(c.stdout, "dry run: %d files (%s) would be deleted; files modified before %s and unreachable from it are eligible\n",
			len(res.Files), humanBytes(res.Bytes), res.Cutoff.UTC().Format(time.RFC3339))
		return nil
	}
	c.waitHooks(res.StartCommit)
	c.waitHooks(res.EndCommit)
	metrics := map[string]any{"numDeletedFiles": len(res.Files), "sizeOfDataToDelete": res.Bytes}
	return c.report(newOpResult("VACUUM END", res.EndCommit, metrics), func(w io.Writer) {
		fmt.Fprintf(w, "vacuumed: %d files (%s) deleted (versions %d and %d record it)\n", len(res.Files), humanBytes(res.Bytes), res.StartVersion, res.EndVersion)
		printMetrics(w, metrics)
	})
}

func runRestore(ctx context.Context, c *call) error {
	var to maintenance.RestoreOption
	if v, ok := c.number("version"); ok {
		to = maintenance.ToVersion(v)
	} else {
		t, _ := c.when("timestamp") // the group requires one of them
		to = maintenance.ToTimestamp(t)
	}
	// The latest version (--version is where it goes), with the files'
	// stats read in the same pass: the restore's removes carry them.
	snap, err := c.openSnapshot(ctx, c.table(), deltalog.WithStats())
	if err != nil {
		return err
	}
	res, err := maintenance.Restore(ctx, snap, to)
	if err != nil {
		return err
	}
	c.waitHooks(res.Commit)
	m := res.Metrics
	return c.report(newOpResult("RESTORE", res.Commit, m.OperationMetrics()), func(w io.Writer) {
		fmt.Fprintf(w, "restored version %d as version %d: %d files restored (%s), %d removed (%s); %d files (%s) now\n",
			res.RestoredVersion, res.Commit.Version, m.NumRestoredFiles, humanBytes(m.RestoredFilesSize), m.NumRemovedFiles, humanBytes(m.RemovedFilesSize),
			m.NumOfFilesAfterRestore, humanBytes(m.TableSizeAfterRestore))
		printMetrics(w, m.OperationMetrics())
	})
}
