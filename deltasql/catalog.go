package deltasql

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Catalog maps table names to where the tables live, so that statements
// can name a table (orders) rather than its path (delta.`s3://b/orders`).
// It is a local JSON file:
//
//	{"tables": {"orders": "s3://b/orders", "people": "/data/people"}}
//
// CREATE TABLE name registers the table (at its LOCATION, or at
// warehouse/name); names are matched ignoring case, as Spark does. A
// missing file is an empty catalog, created on the first registration.
type Catalog struct {
	path      string
	warehouse string
	tables    map[string]string // lower-case name -> location
}

type catalogFile struct {
	Tables map[string]string `json:"tables"`
}

// OpenCatalog reads the catalog at path. Tables created by name without
// a LOCATION go under warehouse (default: the catalog file's directory).
func OpenCatalog(path, warehouse string) (*Catalog, error) {
	c := &Catalog{path: path, warehouse: warehouse, tables: map[string]string{}}
	if c.warehouse == "" {
		c.warehouse = filepath.Dir(path)
	}
	if abs, err := filepath.Abs(c.warehouse); err == nil && !strings.Contains(c.warehouse, "://") {
		c.warehouse = abs
	}
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return c, nil
	}
	if err != nil {
		return nil, fmt.Errorf("deltasql: catalog: %w", err)
	}
	var f catalogFile
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("deltasql: catalog %s: %w", path, err)
	}
	for n, loc := range f.Tables {
		c.tables[strings.ToLower(n)] = loc
	}
	return c, nil
}

// Path is the catalog file.
func (c *Catalog) Path() string { return c.path }

// Location is where the named table lives.
func (c *Catalog) Location(name string) (string, bool) {
	loc, ok := c.tables[strings.ToLower(name)]
	return loc, ok
}

// Names are the catalog's table names, sorted.
func (c *Catalog) Names() []string { return slices.Sorted(maps.Keys(c.tables)) }

// defaultLocation is where CREATE TABLE name puts a table without a
// LOCATION.
func (c *Catalog) defaultLocation(name string) string {
	return filepath.Join(c.warehouse, strings.ToLower(name))
}

// register adds name -> location and rewrites the file (a new file
// renamed over the old, so that a reader never sees half of it).
func (c *Catalog) register(name, location string) error {
	c.tables[strings.ToLower(name)] = location
	b, err := json.MarshalIndent(catalogFile{Tables: c.tables}, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(c.path), 0o755); err != nil {
		return fmt.Errorf("deltasql: catalog: %w", err)
	}
	tmp := c.path + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("deltasql: catalog: %w", err)
	}
	if err := os.Rename(tmp, c.path); err != nil {
		return fmt.Errorf("deltasql: catalog: %w", err)
	}
	return nil
}
