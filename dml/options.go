package dml

import (
	"fmt"
	"runtime"

	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/writer"
)

// Option configures ReplaceWhere, DELETE, UPDATE and MERGE.
type Option func(*config)

type config struct {
	wopts []writer.Option
	// writer is wopts resolved once (newConfig): what the operation
	// hands to the writer of its files and reads its allocator from.
	writer      *writer.Settings
	commit      []deltalog.CommitOption // WithCommitOptions
	noDV        bool
	parallelism int
	targetAlias string
	sourceAlias string
	evolve      bool // WithSchemaEvolution
	progress    func(phase string, done, total int64)
}

func newConfig(opts []Option) (*config, error) {
	c := &config{parallelism: runtime.GOMAXPROCS(0)}
	for _, o := range opts {
		o(c)
	}
	if c.parallelism < 1 {
		c.parallelism = 1
	}
	s, err := writer.Resolve(c.wopts...)
	if err != nil {
		return nil, fmt.Errorf("dml: %w", err)
	}
	c.writer = s
	return c, nil
}

// WithWriterOptions passes options to the writer of the new data files:
// compression, file size, allocator.
func WithWriterOptions(opts ...writer.Option) Option {
	return func(c *config) { c.wopts = append(c.wopts, opts...) }
}

// WithCommitOptions sets how the operation commits: an app transaction
// (exactly-once batches), operation parameters, user metadata, the
// isolation level, post-commit hooks (deltalog.CommitOption, the options
// every operation takes).
func WithCommitOptions(opts ...deltalog.CommitOption) Option {
	return func(c *config) { c.commit = append(c.commit, opts...) }
}

// WithProgress reports the operation's progress to fn as it reads the
// table's rows: phase "find" while it reads the files the predicate (or
// MERGE's join) may match, "rewrite" while it reads the files it writes
// again; done is the rows read so far of the phase's total, the files'
// rows by their statistics (0 when a file has none). fn is called from
// one goroutine at a time, after each batch read; it must be quick.
func WithProgress(fn func(phase string, done, total int64)) Option {
	return func(c *config) { c.progress = fn }
}

// WithoutDeletionVectors rewrites files (copy-on-write) even where the
// table enables deletion vectors (delta.enableDeletionVectors=true), as
// Spark does with spark.databricks.delta.delete.deletionVectors.persistent
// off.
func WithoutDeletionVectors() Option { return func(c *config) { c.noDV = true } }

// WithParallelism sets how many data files are read at once (default
// GOMAXPROCS).
func WithParallelism(n int) Option { return func(c *config) { c.parallelism = n } }

// WithSchemaEvolution lets a MERGE add the source's columns that the
// target lacks, as Spark's MERGE WITH SCHEMA EVOLUTION (or
// spark.databricks.delta.schema.autoMerge.enabled): when a clause is
// UPDATE SET * or INSERT *, the source's new top-level columns are
// appended to the table's schema (nullable) in the MERGE's commit, and
// those clauses set them; rows the MERGE does not write read them as
// NULL. A target column the source lacks is then kept by UPDATE SET *
// and NULL for INSERT *, instead of an error. Other operations ignore it.
func WithSchemaEvolution() Option { return func(c *config) { c.evolve = true } }
