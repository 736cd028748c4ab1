package checkpoint

import (
	"fmt"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/lakelog/lakelog/actions"
)

// FileLayout is how FileColumns lay out the add actions of one table: the
// partition keys, whose values are kept as dictionary-encoded strings,
// and the stats columns, whose bounds and null counts are kept typed.
// It comes from the table's metaData (NewFileLayout) and is immutable.
type FileLayout struct {
	// Partitions are the keys of add.partitionValues: the partition
	// columns' physical names, in metaData order.
	Partitions []string
	// Stats are the leaf columns that add.stats may hold bounds and null
	// counts of, keyed by physical path, in schema order.
	Stats []*StatsColumn

	root        *statsNode
	byPath      map[string]int // joined physical path -> index in Stats
	parts       map[string]int // partition key -> index in Partitions
	sortedParts []int          // indexes of Partitions in key order
}

// StatsColumn is one leaf column of the stats.
type StatsColumn struct {
	// Path is the column's physical path into minValues, maxValues and
	// nullCount.
	Path []string
	// Type is the column's Delta type.
	Type actions.DataType
	// Arrow is the Arrow type its bounds are kept in, nil when the type
	// has no bounds (arrays, maps, variant): only its null count is kept.
	Arrow arrow.DataType
}

// statsNode is a node of the stats JSON's object tree: a struct column
// (children by physical name) or a leaf (col >= 0).
type statsNode struct {
	children map[string]*statsNode
	order    []string     // children's names in schema order
	nodes    []*statsNode // the children, in that order
	col      int
}

// NewFileLayout derives the layout of a table's add actions from its
// metaData: the partition columns, and every column of the schema as a
// stats column (nested struct fields as their own leaves; partition
// columns too, which some writers give stats), by physical name under
// the column mapping mode. Columns no file has stats of cost nothing. Every leaf gets a null count; leaves of a type
// with bounds (numbers, strings, binary, boolean, dates, timestamps,
// decimals) also get typed minimum and maximum columns.
func NewFileLayout(table *actions.TableConfig) (*FileLayout, error) {
	if table == nil {
		return nil, fmt.Errorf("checkpoint: file layout: no metaData")
	}
	md, schema := table.Metadata(), table.Schema()
	l := &FileLayout{root: &statsNode{col: -1}, byPath: map[string]int{}, parts: map[string]int{}}
	for _, name := range md.PartitionColumns {
		f := schema.Field(name)
		if f == nil {
			f = schema.FieldFold(name)
		}
		key := name
		if f != nil {
			key = table.PhysicalName(f)
		}
		if _, dup := l.parts[key]; dup {
			continue
		}
		l.parts[key] = len(l.Partitions)
		l.Partitions = append(l.Partitions, key)
	}
	for j := range l.Partitions {
		l.sortedParts = append(l.sortedParts, j)
	}
	slices.SortFunc(l.sortedParts, func(a, b int) int { return strings.Compare(l.Partitions[a], l.Partitions[b]) })
	var walk func(fields []*actions.StructField, prefix []string, node *statsNode)
	walk = func(fields []*actions.StructField, prefix []string, node *statsNode) {
		for _, f := range fields {
			if f == nil {
				continue
			}
			name := table.PhysicalName(f)
			path := append(append([]string(nil), prefix...), name)
			if node.children == nil {
				node.children = map[string]*statsNode{}
			}
			if _, dup := node.children[name]; dup {
				continue // two fields of one physical name: keep the first
			}
			node.order = append(node.order, name)
			if st, ok := f.Type.(*actions.StructType); ok {
				child := &statsNode{col: -1}
				node.children[name] = child
				node.nodes = append(node.nodes, child)
				walk(st.Fields, path, child)
				continue
			}
			c := &StatsColumn{Path: path, Type: f.Type}
			if boundsType(f.Type) {
				if at, err := actions.ArrowType(f.Type); err == nil {
					c.Arrow = at
				}
			}
			leaf := &statsNode{col: len(l.Stats)}
			node.children[name] = leaf
			node.nodes = append(node.nodes, leaf)
			l.byPath[strings.Join(path, "\x00")] = len(l.Stats)
			l.Stats = append(l.Stats, c)
		}
	}
	walk(schema.Fields, nil, l.root)
	return l, nil
}

// boundsType reports whether stats bounds of type t are kept typed: the
// types ParseStatValue reads.
func boundsType(t actions.DataType) bool {
	switch t := t.(type) {
	case *actions.DecimalType:
		return t != nil
	case actions.PrimitiveType:
		switch t {
		case actions.TypeByte, actions.TypeShort, actions.TypeInteger, actions.TypeLong,
			actions.TypeFloat, actions.TypeDouble, actions.TypeDate, actions.TypeTimestamp,
			actions.TypeTimestampNTZ, actions.TypeString, actions.TypeBinary, actions.TypeBoolean:
			return true
		}
	}
	return false
}

// child returns the child named key and its place in order, trying the
// place hint first.
func (n *statsNode) child(key []byte, hint int) (*statsNode, int) {
	if hint < len(n.order) && n.order[hint] == string(key) {
		return n.nodes[hint], hint
	}
	for i, name := range n.order {
		if name == string(key) {
			return n.nodes[i], i
		}
	}
	return nil, -1
}

// StatsColumnIndex returns the index in Stats of the column at the
// physical path, or -1.
func (l *FileLayout) StatsColumnIndex(path []string) int {
	if i, ok := l.byPath[strings.Join(path, "\x00")]; ok {
		return i
	}
	return -1
}

// PartitionIndex returns the index in Partitions of key, or -1.
func (l *FileLayout) PartitionIndex(key string) int {
	if i, ok := l.parts[key]; ok {
		return i
	}
	return -1
}
