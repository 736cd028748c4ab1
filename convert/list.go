package convert

import (
	"context"
	"fmt"
	"strings"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/objstore"
)

// hiveNull is the folder value Hive and Spark write for a null partition
// value.
const hiveNull = "__HIVE_DEFAULT_PARTITION__"

// file is one data file to convert.
type file struct {
	key   string // in the store
	rel   string // relative to the table root, unescaped
	size  int64
	mtime int64 // milliseconds
	parts map[string]*string

	// From the footer.
	footer *footer
	rows   int64
}

// hidden is Spark's rule for names CONVERT passes over
// (DeltaFileOperations.defaultHiddenFileFilter without partition
// folders): a name starting with "_" or ".", unless it holds "=".
func hidden(name string) bool {
	return (strings.HasPrefix(name, "_") || strings.HasPrefix(name, ".")) && !strings.Contains(name, "=")
}

// list lists the files under root, skipping hidden ones (and everything
// under a hidden folder), and reads each file's partition values from its
// folders.
func list(ctx context.Context, store objstore.Store, root string, partition *actions.StructType) ([]*file, int, error) {
	prefix := root
	if prefix != "" {
		prefix += "/"
	}
	var files []*file
	skipped := 0
	for info, err := range store.List(ctx, prefix, "") {
		if err != nil {
			return nil, 0, fmt.Errorf("convert: list %s: %w", where(store, root), err)
		}
		rel := strings.TrimPrefix(info.Key, prefix)
		if rel == "" || strings.HasSuffix(rel, "/") {
			continue // a folder marker
		}
		segs := strings.Split(rel, "/")
		if isHidden(segs) {
			skipped++
			continue
		}
		parts, err := partitionValues(segs[:len(segs)-1], partition)
		if err != nil {
			return nil, 0, &FileError{Key: info.Key, Msg: err.Error(), Err: ErrPartition}
		}
		files = append(files, &file{key: info.Key, rel: rel, size: info.Size, mtime: info.ModTime.UnixMilli(), parts: parts})
	}
	return files, skipped, nil
}

func isHidden(segs []string) bool {
	for _, s := range segs {
		if hidden(s) {
			return true
		}
	}
	return false
}

// partitionValues reads the folders of one file against the partition
// columns: one "name=value" folder per column, in order.
func partitionValues(dirs []string, partition *actions.StructType) (map[string]*string, error) {
	var cols []*actions.StructField
	if partition != nil {
		cols = partition.Fields
	}
	var named []string
	for _, d := range dirs {
		if strings.Contains(d, "=") {
			named = append(named, d)
		}
	}
	if len(cols) == 0 {
		if len(named) > 0 {
			return nil, fmt.Errorf("the folder %q is a partition folder, but no partition columns were given (PartitionBy, --partition-by 'p string, ...')", named[0])
		}
		return map[string]*string{}, nil
	}
	if len(named) != len(dirs) || len(dirs) != len(cols) {
		return nil, fmt.Errorf("expected %d partition folders (%s), found %q", len(cols), colNames(cols), strings.Join(dirs, "/"))
	}
	out := make(map[string]*string, len(cols))
	for i, d := range dirs {
		name, raw, _ := strings.Cut(d, "=")
		col := cols[i]
		n, err := actions.UnescapePartitionPath(name)
		if err != nil || !strings.EqualFold(n, col.Name) {
			return nil, fmt.Errorf("folder %q: expected partition column %q here", d, col.Name)
		}
		if raw == "" {
			return nil, fmt.Errorf("folder %q: empty partition value", d)
		}
		if raw == hiveNull {
			out[col.Name] = nil
			continue
		}
		v, err := actions.UnescapePartitionPath(raw)
		if err != nil {
			return nil, fmt.Errorf("folder %q: %v", d, err)
		}
		if _, err := actions.ParsePartitionValue(col.Type, &v); err != nil {
			return nil, fmt.Errorf("folder %q: the value is not a %s: %v", d, col.Type, err)
		}
		out[col.Name] = &v
	}
	return out, nil
}

func colNames(cols []*actions.StructField) string {
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = c.Name
	}
	return strings.Join(names, ", ")
}
