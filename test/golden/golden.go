package golden

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
)

// Case is one table of the corpus and its expected.json.
type Case struct {
	Name string
	// Dir is the table root (the case's delta/ folder).
	Dir               string
	Description       string              `json:"description"`
	Features          []string            `json:"features"`
	ExpectError       bool                `json:"expect_error"`
	Error             string              `json:"error"`
	MetadataOnly      bool                `json:"metadata_only"`
	LatestVersion     *int64              `json:"latest_version"`
	NumRows           *int64              `json:"num_rows"`
	Columns           []string            `json:"columns"`
	PartitionColumns  []string            `json:"partition_columns"`
	RowsSHA256        *string             `json:"rows_sha256"`
	Rows              []json.RawMessage   `json:"rows"`
	ExpectedDir       string              `json:"expected_dir"`
	Versions          map[string]int64    `json:"versions"`
	VersionRowsSHA256 map[string]string   `json:"version_rows_sha256"`
	ActiveFiles       map[string][]string `json:"active_files"`
	NumFiles          *int64              `json:"num_files"`
	Txns              map[string]int64    `json:"txns"`
	NumTxns           *int64              `json:"num_txns"`
	FilterCounts      map[string]int64    `json:"filter_counts"`
	Caveats           json.RawMessage     `json:"caveats"`
	CDF               json.RawMessage     `json:"cdf"`
}

// Has reports whether the case carries a feature tag.
func (c *Case) Has(feature string) bool {
	for _, f := range c.Features {
		if f == feature {
			return true
		}
	}
	return false
}

// Root is the corpus folder: $LAKELOG_TESTDATA, else ../shared/testdata/delta
// beside the repository.
func Root() (string, error) {
	if d := os.Getenv("LAKELOG_TESTDATA"); d != "" {
		return d, nil
	}
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return "", fmt.Errorf("golden: cannot locate the repository")
	}
	repo := filepath.Join(filepath.Dir(file), "..", "..")
	d := filepath.Join(repo, "..", "shared", "testdata", "delta")
	if _, err := os.Stat(d); err != nil {
		return "", fmt.Errorf("golden: corpus not found at %s (set LAKELOG_TESTDATA): %w", d, err)
	}
	return d, nil
}

// Load reads every case, sorted by name.
func Load() ([]*Case, error) {
	root, err := Root()
	if err != nil {
		return nil, err
	}
	files, err := filepath.Glob(filepath.Join(root, "*", "expected.json"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("golden: no cases under %s", root)
	}
	sort.Strings(files)
	var out []*Case
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		c := &Case{}
		if err := json.Unmarshal(b, c); err != nil {
			return nil, fmt.Errorf("golden: %s: %w", f, err)
		}
		c.Name = filepath.Base(filepath.Dir(f))
		c.Dir = filepath.Join(filepath.Dir(f), "delta")
		out = append(out, c)
	}
	return out, nil
}

// Find loads the corpus and returns the case named name.
func Find(name string) (*Case, error) {
	cases, err := Load()
	if err != nil {
		return nil, err
	}
	for _, c := range cases {
		if c.Name == name {
			return c, nil
		}
	}
	return nil, fmt.Errorf("golden: the corpus has no case %q", name)
}
