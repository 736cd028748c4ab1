package convert

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strconv"
	"strings"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/objstore"
)

// ErrNotParquet is wrapped by the error of a file that is not Parquet.
var ErrNotParquet = errors.New("not a Parquet file")

// ErrSchemaConflict is wrapped by the error of two files whose schemas
// cannot be merged.
var ErrSchemaConflict = errors.New("conflicting Parquet schemas")

// ErrPartition is wrapped by the error of a file whose folders do not
// match the partition columns.
var ErrPartition = errors.New("partition folders do not match the partition columns")

// ErrNoFiles is returned when the folder holds no Parquet file to
// convert (Spark cannot infer a schema then either).
var ErrNoFiles = errors.New("convert: no Parquet files to convert")

// FileError is an error about one file of the folder. Key is the file's
// key in the store; Other, when set, is the file it conflicts with.
type FileError struct {
	Key   string
	Other string
	Msg   string
	Err   error
}

func (e *FileError) Error() string {
	if e.Other != "" {
		return fmt.Sprintf("convert: %s and %s: %s", e.Key, e.Other, e.Msg)
	}
	return fmt.Sprintf("convert: %s: %s", e.Key, e.Msg)
}

func (e *FileError) Unwrap() error { return e.Err }

// Option changes how ToDelta converts.
type Option func(*config)

type config struct {
	partition   *actions.StructType
	properties  map[string]string
	concurrency int
	noStats     bool
	commit      []deltalog.CommitOption
	progress    func(done, total int)
}

// PartitionBy gives the partition columns and their types, in the order
// of the folders (Spark's PARTITIONED BY (p string, ...)). Without it the
// folder must not be partitioned.
func PartitionBy(schema *actions.StructType) Option {
	return func(c *config) { c.partition = schema }
}

// WithProperties sets table properties on the new table (they decide,
// for one, which columns get stats).
func WithProperties(props map[string]string) Option {
	return func(c *config) { c.properties = maps.Clone(props) }
}

// WithConcurrency bounds the footers read at once (default 32).
func WithConcurrency(n int) Option { return func(c *config) { c.concurrency = n } }

// NoStatistics leaves stats out of the adds (Spark's NO STATISTICS).
func NoStatistics() Option { return func(c *config) { c.noStats = true } }

// WithCommitOptions sets how the conversion commits (deltalog.CommitOption,
// the options every operation takes).
func WithCommitOptions(opts ...deltalog.CommitOption) Option {
	return func(c *config) { c.commit = append(c.commit, opts...) }
}

// WithProgress is called as footers are read: done of total files.
func WithProgress(f func(done, total int)) Option { return func(c *config) { c.progress = f } }

// Result is what ToDelta did.
type Result struct {
	// AlreadyDelta: the folder already held a Delta table (at Version,
	// with Schema; when another writer created it while this call was
	// converting and it could not be read back, Version 0 and no
	// Schema); nothing was written.
	AlreadyDelta bool
	// Version is the table's version: 0 after a conversion.
	Version int64
	Files   int   // data files added
	Bytes   int64 // their size
	Rows    int64 // their rows, from the footers
	Skipped int   // hidden files passed over
	Schema  *actions.StructType
	// Commit is the conversion's commit; nil when AlreadyDelta.
	Commit *deltalog.CommitResult
}

// ToDelta converts the Parquet files under root in store into a Delta
// table in place, in one commit. It is idempotent: on a folder that
// already is a Delta table it writes nothing and returns a Result with
// AlreadyDelta set. On any bad input (a file that is not Parquet,
// schemas that do not merge, folders that do not match the partition
// columns, a partition value of the wrong type) it returns an error
// naming the file and writes nothing.
func ToDelta(ctx context.Context, store objstore.Store, root string, opts ...Option) (*Result, error) {
	if store == nil {
		return nil, fmt.Errorf("convert: %w", deltalog.ErrNoStore)
	}
	cfg := &config{concurrency: 32}
	for _, o := range opts {
		o(cfg)
	}
	if cfg.concurrency < 1 {
		return nil, fmt.Errorf("convert: concurrency %d: must be at least 1", cfg.concurrency)
	}
	root = strings.Trim(root, "/")
	if res, ok, err := existing(ctx, store, root); err != nil || ok {
		return res, err
	}
	if err := checkPartitionSchema(cfg.partition); err != nil {
		return nil, err
	}
	files, skipped, err := list(ctx, store, root, cfg.partition)
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("%w under %s (hidden files skipped: %d)", ErrNoFiles, where(store, root), skipped)
	}
	if err := readFooters(ctx, store, files, cfg); err != nil {
		return nil, err
	}
	data, err := mergeSchemas(files)
	if err != nil {
		return nil, err
	}
	schema, err := withPartitions(data, cfg.partition)
	if err != nil {
		return nil, err
	}
	md, err := newMetadata(schema, cfg)
	if err != nil {
		return nil, err
	}
	tx, err := deltalog.Create(store, root, md, cfg.commit...)
	if err != nil {
		return nil, fmt.Errorf("convert: %w", err)
	}
	if _, err := tx.Start(); err != nil {
		return nil, fmt.Errorf("convert: %w", err)
	}
	res := &Result{Files: len(files), Skipped: skipped, Schema: schema}
	adds, err := addsOf(files, data, tx.Metadata(), cfg)
	if err != nil {
		return nil, err
	}
	for i := range adds {
		res.Bytes += files[i].size
		res.Rows += files[i].rows
	}
	if err := tx.Stage(&deltalog.Changes{Operation: "CONVERT", Adds: adds, Parameters: map[string]any{
		"numFiles":      strconv.Itoa(len(files)),
		"partitionedBy": actions.JSONText(md.PartitionColumns),
		"collectStats":  strconv.FormatBool(!cfg.noStats),
		"catalogTable":  nil,
	}}); err != nil {
		return nil, fmt.Errorf("convert: %w", err)
	}
	cr, err := tx.Commit(ctx)
	if errors.Is(err, deltalog.ErrTableExists) {
		// Another convert (or a writer) created the table meanwhile:
		// version 0 is someone else's (a lost response of our own is
		// read back by the commit loop). The folder is a Delta table now.
		if res, ok, err2 := existing(ctx, store, root); err2 == nil && ok {
			return res, nil
		}
		return &Result{AlreadyDelta: true, Version: 0}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("convert: commit: %w", err)
	}
	res.Commit, res.Version = cr, cr.Version
	return res, nil
}

// existing answers for a folder that already is a Delta table.
func existing(ctx context.Context, store objstore.Store, root string) (*Result, bool, error) {
	snap, err := deltalog.Open(ctx, store, root)
	switch {
	case err == nil:
		return &Result{AlreadyDelta: true, Version: snap.Version(), Schema: snap.Schema()}, true, nil
	case errors.Is(err, deltalog.ErrNotTable):
		return nil, false, nil
	}
	return nil, false, fmt.Errorf("convert: %s has a Delta log that cannot be read: %w", where(store, root), err)
}

func where(store objstore.Store, root string) string {
	loc := objstore.Location(store)
	if root == "" {
		return loc
	}
	return strings.TrimSuffix(loc, "/") + "/" + root
}

func checkPartitionSchema(p *actions.StructType) error {
	if p == nil {
		return nil
	}
	seen := map[string]bool{}
	for _, f := range p.Fields {
		k := strings.ToLower(f.Name)
		if seen[k] {
			return fmt.Errorf("convert: partition column %q is given twice", f.Name)
		}
		seen[k] = true
		if _, err := actions.ParsePartitionValue(f.Type, nil); err != nil {
			return fmt.Errorf("convert: partition column %q: %w", f.Name, err)
		}
	}
	return nil
}

// withPartitions appends the partition columns to the data schema, as
// Spark's mergeDataAndPartitionSchema does: a partition column that is
// also a data column keeps its place and takes the partition type.
func withPartitions(data *actions.StructType, p *actions.StructType) (*actions.StructType, error) {
	out := &actions.StructType{Fields: append([]*actions.StructField(nil), data.Fields...)}
	if p == nil {
		return out, nil
	}
	for _, f := range p.Fields {
		nf := &actions.StructField{Name: f.Name, Type: f.Type, Nullable: true}
		if i := out.IndexFold(f.Name); i >= 0 {
			out.Fields[i] = nf
			continue
		}
		out.Fields = append(out.Fields, nf)
	}
	return out, nil
}

func newMetadata(schema *actions.StructType, cfg *config) (*actions.Metadata, error) {
	s, err := actions.SchemaString(schema)
	if err != nil {
		return nil, fmt.Errorf("convert: %w", err)
	}
	md := &actions.Metadata{SchemaString: s, PartitionColumns: []string{}, Configuration: map[string]string{}}
	maps.Copy(md.Configuration, cfg.properties)
	if m := md.Properties().ColumnMappingMode; m != actions.ColumnMappingNone {
		// Create would give the columns new physical names, which the
		// existing files do not have.
		return nil, fmt.Errorf("convert: delta.columnMapping.mode %s: converting to a column-mapped table is not supported; convert, then set the property", m)
	}
	if cfg.partition != nil {
		for _, f := range cfg.partition.Fields {
			md.PartitionColumns = append(md.PartitionColumns, f.Name)
		}
	}
	return md, nil
}
