package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/maintenance"
)

func init() {
	registerVerb("optimize", "optimize TABLE [--where PRED] [--target-size BYTES] [--min-file-size BYTES] [--max-commit-bytes BYTES] [--zorder-by a,b]", runOptimize)
	registerVerb("vacuum", "vacuum TABLE [--retain DURATION] [--dry-run] [--force]", runVacuum)
	registerVerb("restore", "restore TABLE --version N | --timestamp T", runRestore)
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

// progressTo returns a progress callback that rewrites one line on w when
// w is a terminal, and nil otherwise; done clears the line.
func progressTo(w io.Writer, what string) (fn func(done, total int), clear func()) {
	if !isTerminal(w) {
		return nil, func() {}
	}
	printed := false
	return func(done, total int) {
			fmt.Fprintf(w, "\r%s: %d of %d\x1b[K", what, done, total)
			printed = true
		}, func() {
			if printed {
				fmt.Fprint(w, "\r\x1b[K")
			}
		}
}

func runOptimize(ctx context.Context, e *env, args []string) error {
	fs := flag.NewFlagSet("optimize", flag.ContinueOnError)
	where := fs.String("where", "", "optimize only the partitions matching this predicate over partition columns (lakelog help predicates)")
	target := fs.String("target-size", "", "size the new files aim at (default the table's delta.targetFileSize, else 1g)")
	minSize := fs.String("min-file-size", "", "files under this size are compacted (default three quarters of the target size)")
	maxCommit := fs.String("max-commit-bytes", "", "rewrite at most this many bytes per commit; a large table is then optimized in several commits")
	zorder := fs.String("zorder-by", "", "cluster each partition's rows by the Z-order of these columns (comma-separated)")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("want one TABLE, got %d arguments", len(pos))
	}
	var opts []maintenance.OptimizeOption
	for _, f := range []struct {
		name, value string
		opt         func(int64) maintenance.OptimizeOption
	}{{"--target-size", *target, maintenance.TargetSize}, {"--min-file-size", *minSize, maintenance.MinFileSize}, {"--max-commit-bytes", *maxCommit, maintenance.MaxBytesPerCommit}} {
		if f.value == "" {
			continue
		}
		n, err := parseBytes(f.value)
		if err != nil {
			return usagef("%s: %v", f.name, err)
		}
		opts = append(opts, f.opt(n))
	}
	if cols := splitList(*zorder); len(cols) > 0 {
		opts = append(opts, maintenance.ZOrderBy(cols...))
	}
	snap, err := e.openSnapshot(ctx, pos[0])
	if err != nil {
		return err
	}
	if *where != "" {
		pred, err := parseWhere(*where, snap.Schema())
		if err != nil {
			return usagef("%v", err)
		}
		opts = append(opts, maintenance.Where(pred))
	}
	progress, clear := progressTo(e.stderr, "optimize: bins rewritten")
	if progress != nil {
		opts = append(opts, maintenance.OptimizeProgress(progress))
	}
	res, err := maintenance.Optimize(ctx, snap, opts...)
	clear()
	if err != nil {
		return err
	}
	for _, c := range res.Commits {
		if err := c.WaitCheckpoint(); err != nil {
			fmt.Fprintf(e.stderr, "lakelog optimize: warning: checkpoint: %v\n", err)
		}
	}
	m := res.Metrics
	if len(res.Commits) == 0 {
		fmt.Fprintf(e.stdout, "nothing to optimize (%d files considered)\n", m.TotalConsideredFiles)
		return nil
	}
	versions := make([]string, len(res.Commits))
	for i, c := range res.Commits {
		versions[i] = strconv.FormatInt(c.Version, 10)
	}
	fmt.Fprintf(e.stdout, "optimized: %d files (%s) rewritten as %d files (%s) in version %s\n",
		m.NumRemovedFiles, humanBytes(m.NumRemovedBytes), m.NumAddedFiles, humanBytes(m.NumAddedBytes), strings.Join(versions, ", "))
	printMetrics(e.stdout, m.OperationMetrics())
	return nil
}

func runVacuum(ctx context.Context, e *env, args []string) error {
	fs := flag.NewFlagSet("vacuum", flag.ContinueOnError)
	retain := fs.String("retain", "", "keep the files versions of this long ago can read (a Go duration such as 168h, or '7 days'; default the table's delta.deletedFileRetentionDuration, else 7 days)")
	dry := fs.Bool("dry-run", false, "list the files that would be deleted, with their sizes, and delete nothing")
	force := fs.Bool("force", false, "allow a retention under the table's (a writer still writing may lose its files)")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("want one TABLE, got %d arguments", len(pos))
	}
	var opts []maintenance.VacuumOption
	if *retain != "" {
		d, err := time.ParseDuration(*retain)
		if err != nil {
			if d, err = actions.ParseDuration(*retain); err != nil {
				return usagef("--retain %q: not a duration (168h, '7 days')", *retain)
			}
		}
		opts = append(opts, maintenance.Retain(d))
	}
	if *dry {
		opts = append(opts, maintenance.DryRun())
	}
	if *force {
		opts = append(opts, maintenance.Force())
	}
	snap, err := e.openSnapshot(ctx, pos[0])
	if err != nil {
		return err
	}
	progress, clear := progressTo(e.stderr, "vacuum: files deleted")
	if progress != nil {
		opts = append(opts, maintenance.VacuumProgress(progress))
	}
	res, err := maintenance.Vacuum(ctx, snap, opts...)
	clear()
	if err != nil {
		return err
	}
	if res.DryRun {
		for _, f := range res.Files {
			fmt.Fprintf(e.stdout, "%s\t%d\n", strings.TrimPrefix(f.Key, snap.Root()), f.Size)
		}
		fmt.Fprintf(e.stdout, "dry run: %d files (%s) would be deleted; files modified before %s and unreachable from it are eligible\n",
			len(res.Files), humanBytes(res.Bytes), res.Cutoff.UTC().Format(time.RFC3339))
		return nil
	}
	for _, c := range []*deltalog.CommitResult{res.StartCommit, res.EndCommit} {
		if err := c.WaitCheckpoint(); err != nil {
			fmt.Fprintf(e.stderr, "lakelog vacuum: warning: checkpoint: %v\n", err)
		}
	}
	fmt.Fprintf(e.stdout, "vacuumed: %d files (%s) deleted (versions %d and %d record it)\n", len(res.Files), humanBytes(res.Bytes), res.StartVersion, res.EndVersion)
	printMetrics(e.stdout, map[string]any{"numDeletedFiles": len(res.Files), "sizeOfDataToDelete": res.Bytes})
	return nil
}

func runRestore(ctx context.Context, e *env, args []string) error {
	fs := flag.NewFlagSet("restore", flag.ContinueOnError)
	version := fs.Int64("version", -1, "restore the table to this version")
	ts := fs.String("timestamp", "", "restore the table to the version current at this time (RFC 3339 or 'YYYY-MM-DD[ HH:MM:SS]', UTC)")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("want one TABLE, got %d arguments", len(pos))
	}
	versionSet := false
	fs.Visit(func(f *flag.Flag) { versionSet = versionSet || f.Name == "version" })
	var to maintenance.RestoreOption
	switch {
	case versionSet && *ts != "":
		return usagef("give --version or --timestamp, not both")
	case versionSet:
		if *version < 0 {
			return usagef("--version %d: a version is 0 or more", *version)
		}
		to = maintenance.ToVersion(*version)
	case *ts != "":
		t, err := parseTime(*ts)
		if err != nil {
			return usagef("--timestamp %q: %v", *ts, err)
		}
		to = maintenance.ToTimestamp(t)
	default:
		return usagef("give --version N or --timestamp T")
	}
	snap, err := e.openSnapshot(ctx, pos[0])
	if err != nil {
		return err
	}
	res, err := maintenance.Restore(ctx, snap, to)
	if err != nil {
		return err
	}
	if err := res.Commit.WaitCheckpoint(); err != nil {
		fmt.Fprintf(e.stderr, "lakelog restore: warning: checkpoint: %v\n", err)
	}
	m := res.Metrics
	fmt.Fprintf(e.stdout, "restored version %d as version %d: %d files restored (%s), %d removed (%s); %d files (%s) now\n",
		res.RestoredVersion, res.Commit.Version, m.NumRestoredFiles, humanBytes(m.RestoredFilesSize), m.NumRemovedFiles, humanBytes(m.RemovedFilesSize),
		m.NumOfFilesAfterRestore, humanBytes(m.TableSizeAfterRestore))
	printMetrics(e.stdout, m.OperationMetrics())
	return nil
}
