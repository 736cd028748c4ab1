package deltalog

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/objstore"
)

// ManifestDir is the folder, under the table's root, of the symlink
// manifest (Spark's GENERATE symlink_format_manifest): one file named
// "manifest" per partition folder (one at the top for an unpartitioned
// table), listing the absolute paths of the partition's live data files,
// one a line, for engines that read a table as plain Parquet files
// (Presto, Trino, Athena, Redshift Spectrum).
const ManifestDir = "_symlink_format_manifest/"

// ErrManifestUnsupported is a manifest asked of a table whose data files
// alone do not give its rows, as Spark refuses it: a file with a deletion
// vector (its deleted rows would be read), or column-mapped files (their
// columns have physical names).
var ErrManifestUnsupported = fmt.Errorf("%w: symlink manifest", ErrUnsupportedFeature)

// WriteSymlinkManifest writes the table's symlink manifest as of this
// version, replacing the previous one: each partition's manifest is
// written whole (readers see the old file or the new one), then the
// manifests of partitions that no longer have a file are deleted. It is
// what Spark's GENERATE symlink_format_manifest writes, and the
// post-commit hook of a table with
// delta.compatibility.symlinkFormatManifest.enabled runs it after every
// commit.
func (s *Snapshot) WriteSymlinkManifest(ctx context.Context) error {
	if s.config.ColumnMapped() {
		return fmt.Errorf("deltalog: %s: %w: the table is column-mapped (%s), so its data files name columns by physical names", s.display(), ErrManifestUnsupported, actions.PropColumnMappingMode)
	}
	base, err := objstore.RootURI(s.store)
	if err != nil {
		return fmt.Errorf("deltalog: symlink manifest of %s: %w", s.display(), err)
	}
	base = strings.TrimSuffix(base, "/") + "/"
	parts := s.PartitionColumns()
	lists := map[string][]string{} // partition folder ("" or "a=1/") -> file URIs
	for f := range s.Files() {
		if f.DeletionVector != nil {
			return fmt.Errorf("deltalog: %s: %w: %s has a deletion vector (purge them with OPTIMIZE and set %s=false)", s.display(), ErrManifestUnsupported, f.Path, actions.PropEnableDeletionVectors)
		}
		dir := ""
		if len(parts) > 0 {
			values := make(map[string]*string, len(parts))
			for _, c := range parts {
				key := c
				if field := s.Schema().FieldFold(c); field != nil {
					key = s.config.PhysicalName(field)
				}
				values[c] = f.PartitionValues[key]
			}
			if dir, err = actions.PartitionPath(parts, nil, values); err != nil {
				return fmt.Errorf("deltalog: symlink manifest of %s: %s: %w", s.display(), f.Path, err)
			}
		}
		key := s.TablePath(f.Path)
		uri := key
		if !strings.Contains(key, "://") {
			uri = base + strings.TrimPrefix(key, "/")
			if strings.HasPrefix(key, "/") {
				uri = "file://" + key
			}
		}
		lists[dir] = append(lists[dir], uri)
	}
	keep := map[string]bool{}
	for _, dir := range slices.Sorted(maps.Keys(lists)) {
		files := lists[dir]
		slices.Sort(files)
		var body bytes.Buffer
		for _, f := range files {
			body.WriteString(f)
			body.WriteByte('\n')
		}
		key := s.root + ManifestDir + dir + "manifest"
		keep[key] = true
		if err := s.store.Put(ctx, key, bytes.NewReader(body.Bytes()), objstore.PutOptions{Size: int64(body.Len())}); err != nil {
			return fmt.Errorf("deltalog: symlink manifest of %s: %w", s.display(), err)
		}
	}
	for o, err := range s.store.List(ctx, s.root+ManifestDir, "") {
		if err != nil {
			return fmt.Errorf("deltalog: symlink manifest of %s: list: %w", s.display(), err)
		}
		if strings.HasSuffix(o.Key, "/manifest") || o.Key == s.root+ManifestDir+"manifest" {
			if !keep[o.Key] {
				if err := s.store.Delete(ctx, o.Key); err != nil {
					return fmt.Errorf("deltalog: symlink manifest of %s: %w", s.display(), err)
				}
			}
		}
	}
	return nil
}
