package convert

import (
	"github.com/lakelog/lakelog/actions"
)

// addsOf builds each file's add: its path relative to the root, escaped
// as the log holds paths, its partition values, size, modification time
// and stats from the footer.
func addsOf(files []*file, data *actions.StructType, md *actions.Metadata, cfg *config) ([]*actions.Add, error) {
	var leaves []leaf
	if !cfg.noStats {
		leaves = statsLeaves(data, md.Properties())
	}
	adds := make([]*actions.Add, len(files))
	for i, f := range files {
		a := &actions.Add{
			Path:             actions.EscapePath(f.rel),
			PartitionValues:  f.parts,
			Size:             f.size,
			ModificationTime: f.mtime,
			DataChange:       true,
		}
		if !cfg.noStats {
			s, err := fileStats(f.footer, leaves)
			if err != nil {
				return nil, &FileError{Key: f.key, Msg: "stats: " + err.Error(), Err: err}
			}
			a.Stats = s
		}
		adds[i] = a
	}
	return adds, nil
}
