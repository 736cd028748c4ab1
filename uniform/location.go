package uniform

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/iceberg-go/table"
	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/objstore"
)

// MetadataDir is the folder, under the table's root, that holds the
// Iceberg metadata: metadata files, manifest lists and manifests.
const MetadataDir = "metadata/"

// hintName is the file holding the number of the current metadata file
// (Iceberg's Hadoop-table convention); a hint only, written after the
// metadata file that is the commit.
const hintName = "version-hint.text"

var metadataName = regexp.MustCompile(`^v([0-9]+)\.metadata\.json$`)

// tableLoc places a table's Iceberg files: store keys and the URIs that
// Iceberg metadata records.
type tableLoc struct {
	store objstore.Store
	root  string // "" or ends with '/'
	uri   string // the table's location, no trailing '/'
}

func newTableLoc(store objstore.Store, root string) (tableLoc, error) {
	root = strings.Trim(root, "/")
	if root != "" {
		root += "/"
	}
	base, err := objstore.RootURI(store)
	if err != nil {
		return tableLoc{}, fmt.Errorf("uniform: %w", err)
	}
	uri := strings.TrimSuffix(base, "/")
	if root != "" {
		uri += "/" + strings.TrimSuffix(root, "/")
	}
	return tableLoc{store: store, root: root, uri: uri}, nil
}

// fileURI is the Iceberg path of a Delta file action's path: the table's
// location joined to the decoded relative path, or the absolute URI as
// it is.
func (t tableLoc) fileURI(p string) string {
	c := actions.CanonicalPath(p)
	if strings.Contains(c, "://") {
		return c
	}
	if strings.HasPrefix(c, "/") {
		return "file://" + c
	}
	return t.uri + "/" + c
}

// key is the store key of a URI under the table's location.
func (t tableLoc) key(uri string) (string, error) {
	rel, ok := strings.CutPrefix(uri, t.uri+"/")
	if !ok {
		return "", fmt.Errorf("uniform: %s is not under the table's location %s", uri, t.uri)
	}
	return t.root + rel, nil
}

func (t tableLoc) metadataKey(name string) string { return t.root + MetadataDir + name }
func (t tableLoc) metadataURI(name string) string { return t.uri + "/" + MetadataDir + name }

func (t tableLoc) get(ctx context.Context, uri string) ([]byte, error) {
	k, err := t.key(uri)
	if err != nil {
		return nil, err
	}
	return t.getKey(ctx, k)
}

func (t tableLoc) getKey(ctx context.Context, key string) ([]byte, error) {
	return t.store.Get(ctx, key)
}

// create writes a new file (never replacing one).
func (t tableLoc) create(ctx context.Context, key string, body []byte) error {
	return t.store.Put(ctx, key, bytes.NewReader(body), objstore.PutOptions{IfAbsent: true, Size: int64(len(body))})
}

// current is the table's current Iceberg metadata file.
type current struct {
	n    int // the file's number: v<n>.metadata.json
	uri  string
	meta table.Metadata
}

// loadCurrent finds the newest metadata file: from the hint on (the
// hint may lag: the files after it are probed), or by listing when there
// is no hint. nil, nil when there is none.
func loadCurrent(ctx context.Context, t tableLoc) (*current, error) {
	n := -1
	if b, err := t.getKey(ctx, t.metadataKey(hintName)); err == nil {
		if v, perr := strconv.Atoi(strings.TrimSpace(string(b))); perr == nil && v >= 0 {
			n = v
		}
	} else if !errors.Is(err, objstore.ErrNotFound) {
		return nil, fmt.Errorf("uniform: read %s: %w", t.metadataKey(hintName), err)
	}
	if n < 0 {
		var err error
		if n, err = listNewest(ctx, t); err != nil || n < 0 {
			return nil, err
		}
	}
	var body []byte
	for probe := n; ; probe++ {
		b, err := t.getKey(ctx, t.metadataKey(metadataFile(probe)))
		if errors.Is(err, objstore.ErrNotFound) {
			if probe == n { // the hint points past the files: list
				m, lerr := listNewest(ctx, t)
				if lerr != nil || m < 0 {
					return nil, lerr
				}
				if m == n {
					return nil, fmt.Errorf("uniform: %s vanished", t.metadataKey(metadataFile(n)))
				}
				n, probe = m, m-1
				continue
			}
			break
		}
		if err != nil {
			return nil, fmt.Errorf("uniform: read %s: %w", t.metadataKey(metadataFile(probe)), err)
		}
		n, body = probe, b
	}
	md, err := table.ParseMetadataBytes(body)
	if err != nil {
		return nil, fmt.Errorf("uniform: %s: %w", t.metadataKey(metadataFile(n)), err)
	}
	return &current{n: n, uri: t.metadataURI(metadataFile(n)), meta: md}, nil
}

func listNewest(ctx context.Context, t tableLoc) (int, error) {
	var ns []int
	for o, err := range t.store.List(ctx, t.metadataKey("v"), "") {
		if err != nil {
			return -1, fmt.Errorf("uniform: list %s: %w", t.metadataKey(""), err)
		}
		if m := metadataName.FindStringSubmatch(strings.TrimPrefix(o.Key, t.metadataKey(""))); m != nil {
			if v, err := strconv.Atoi(m[1]); err == nil {
				ns = append(ns, v)
			}
		}
	}
	if len(ns) == 0 {
		return -1, nil
	}
	return slices.Max(ns), nil
}

func metadataFile(n int) string { return fmt.Sprintf("v%d.metadata.json", n) }
