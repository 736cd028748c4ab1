package cdf

import (
	"fmt"
	"slices"
	"strings"

	"github.com/lakelog/lakelog/actions"
)

// checkSchema fails when the rows of a version whose metadata is md
// cannot be read under the end version's schema: a column of md's schema
// that the end schema lacks (dropped, or renamed), a type the end schema
// does not widen, or other partition columns. Columns the end schema
// adds are read as nulls. It is Spark's rule: a range is read under its
// end version's schema only across additive changes.
func (f *Feed) checkSchema(v int64, md *actions.Metadata, props *actions.TableProperties) error {
	why, err := f.unreadable(v, md, props)
	if err != nil || why == "" {
		return err
	}
	return fmt.Errorf("cdf: %s: %w: version %d %s; the range %d to %d is read under version %d's schema: ask for a range on one side of version %d",
		f.display, ErrSchemaChange, v, why, f.from, f.to, f.to, v)
}

// checkRemovedSchema fails when the rows the range's first version
// removes cannot be read under the end version's schema. They were
// written under the schema before it (md, version f.from-1's), which the
// first version may change: a RESTORE to a version before a column was
// widened narrows it, and removes the files holding wide values.
func (f *Feed) checkRemovedSchema(md *actions.Metadata, props *actions.TableProperties) error {
	v := f.from - 1
	why, err := f.unreadable(v, md, props)
	if err != nil || why == "" {
		return err
	}
	return fmt.Errorf("cdf: %s: %w: version %d removes rows written under version %d's schema, and version %d %s; the range %d to %d is read under version %d's schema: ask for a range that starts after version %d",
		f.display, ErrSchemaChange, f.from, v, v, why, f.from, f.to, f.to, f.from)
}

// unreadable says why the rows of version v, whose metadata is md, cannot
// be read under the end version's schema ("" when they can).
func (f *Feed) unreadable(v int64, md *actions.Metadata, props *actions.TableProperties) (string, error) {
	if md == f.end.Metadata() {
		return "", nil
	}
	// The version's configuration under the end's protocol: protocols
	// only grow, and a mode property without the feature is refused when
	// written.
	old, err := actions.NewTableConfig(f.end.Protocol(), md)
	if err != nil {
		return "", fmt.Errorf("cdf: %s: version %d: %w", f.display, v, err)
	}
	if e := props.InvalidProperty(actions.PropColumnMappingMode); e != nil {
		return fmt.Sprintf("has column mapping mode %q, which is not none, name or id", e.Value), nil
	}
	if !slices.EqualFunc(md.PartitionColumns, f.end.PartitionColumns(), strings.EqualFold) {
		return fmt.Sprintf("is partitioned by [%s], the end version by [%s]", strings.Join(md.PartitionColumns, ", "), strings.Join(f.end.PartitionColumns(), ", ")), nil
	}
	if path, why := readableAs(old, f.end.Config()); why != "" {
		return fmt.Sprintf("has column %s, which %s", path, why), nil
	}
	return "", nil
}

// readableAs reports the first column of the table old that cannot be
// read as the table new, and why ("" when every column can). Under column
// mapping (either side's mode not none) a column is the same column only
// when its physical name (and in id mode on both sides its id) is the
// same: a column renamed, or dropped and added again under its name, is
// not, and its rows cannot be read under the new schema, as Spark refuses
// them (DeltaColumnMapping.hasNoColumnMappingSchemaChanges).
func readableAs(old, new *actions.TableConfig) (path, why string) {
	return fieldsReadableAs(old.Schema(), new.Schema(), old, new, "")
}

func fieldsReadableAs(olds, news *actions.StructType, old, new *actions.TableConfig, prefix string) (path, why string) {
	for _, of := range olds.Fields {
		p := prefix + of.Name
		nf := news.Field(of.Name)
		if nf == nil {
			return p, "the end version's schema does not have (dropped or renamed)"
		}
		if old.ColumnMapped() || new.ColumnMapped() {
			if op, np := old.PhysicalName(of), new.PhysicalName(nf); op != np {
				return p, fmt.Sprintf("is a different column in the end version's schema (physical name %q there, %q in the end version: dropped and added again, or renamed)", op, np)
			}
			if old.ColumnMappingMode() == actions.ColumnMappingID && new.ColumnMappingMode() == actions.ColumnMappingID {
				oid, _ := of.FieldID()
				nid, _ := nf.FieldID()
				if oid != nid {
					return p, fmt.Sprintf("is a different column in the end version's schema (column id %d there, %d in the end version)", oid, nid)
				}
			}
		}
		if path, why := typeReadableAs(of.Type, nf.Type, old, new, p); why != "" {
			return path, why
		}
	}
	return "", ""
}

func typeReadableAs(ot, nt actions.DataType, old, new *actions.TableConfig, path string) (string, string) {
	switch o := ot.(type) {
	case *actions.StructType:
		if n, ok := nt.(*actions.StructType); ok {
			return fieldsReadableAs(o, n, old, new, path+".")
		}
	case *actions.ArrayType:
		if n, ok := nt.(*actions.ArrayType); ok {
			return typeReadableAs(o.ElementType, n.ElementType, old, new, path+".element")
		}
	case *actions.MapType:
		if n, ok := nt.(*actions.MapType); ok {
			if p, why := typeReadableAs(o.KeyType, n.KeyType, old, new, path+".key"); why != "" {
				return p, why
			}
			return typeReadableAs(o.ValueType, n.ValueType, old, new, path+".value")
		}
	case *actions.DecimalType:
		if n, ok := nt.(*actions.DecimalType); ok && n.Scale >= o.Scale && n.Precision-n.Scale >= o.Precision-o.Scale {
			return "", ""
		}
	case actions.PrimitiveType:
		if n, ok := nt.(actions.PrimitiveType); ok && (n == o || widens(o, n)) {
			return "", ""
		}
		if n, ok := nt.(*actions.DecimalType); ok && widensToDecimal(o, n) {
			return "", ""
		}
	}
	return path, fmt.Sprintf("is %s there and %s in the end version's schema", ot, nt)
}

// widens reports the primitive widenings of the typeWidening feature.
func widens(o, n actions.PrimitiveType) bool {
	switch o {
	case actions.TypeByte:
		return n == actions.TypeShort || n == actions.TypeInteger || n == actions.TypeLong || n == actions.TypeDouble
	case actions.TypeShort:
		return n == actions.TypeInteger || n == actions.TypeLong || n == actions.TypeDouble
	case actions.TypeInteger:
		return n == actions.TypeLong || n == actions.TypeDouble
	case actions.TypeFloat:
		return n == actions.TypeDouble
	case actions.TypeDate:
		return n == actions.TypeTimestampNTZ
	}
	return false
}

func widensToDecimal(o actions.PrimitiveType, n *actions.DecimalType) bool {
	digits := map[actions.PrimitiveType]int{actions.TypeByte: 3, actions.TypeShort: 5, actions.TypeInteger: 10, actions.TypeLong: 20}
	d, ok := digits[o]
	return ok && n.Precision-n.Scale >= d
}
