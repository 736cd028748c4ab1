package convert

import (
	"runtime"

	"golang.org/x/sync/errgroup"

	"github.com/lakelog/lakelog/actions"
)

// addsOf builds each file's add: its path relative to the root, escaped
// as the log holds paths, its partition values, size, modification time
// and stats from the footer, computed on GOMAXPROCS goroutines.
func addsOf(files []*file, data *actions.StructType, md *actions.Metadata, cfg *config) ([]*actions.Add, error) {
	var leaves []leaf
	if !cfg.noStats {
		leaves = statsLeaves(data, md.Properties())
	}
	adds := make([]*actions.Add, len(files))
	var g errgroup.Group
	g.SetLimit(runtime.GOMAXPROCS(0))
	for i, f := range files {
		a := &actions.Add{
			Path:             actions.EscapePath(f.rel),
			PartitionValues:  f.parts,
			Size:             f.size,
			ModificationTime: f.mtime,
			DataChange:       true,
		}
		adds[i] = a
		if cfg.noStats {
			continue
		}
		g.Go(func() error {
			s, err := fileStats(f.footer, leaves)
			if err != nil {
				return &FileError{Key: f.key, Msg: "stats: " + err.Error(), Err: err}
			}
			a.Stats = s
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return adds, nil
}
