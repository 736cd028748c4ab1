package deltalog

import (
	"fmt"
	"slices"

	"github.com/lakelog/lakelog/actions"
)

// icebergCompatCheck is the record check of IcebergCompatV1 and V2
// (PROTOCOL.md "Writer Requirements for IcebergCompatV1/V2"): a table
// that enables one is written only while it complies. Reads are never
// refused. What lakelog does not write yet is refused by name: the ids
// of array elements and map keys and values (parquet.field.nested.ids).
// Writers put the partition values in the data files too
// (writer.materializePartitions).
func icebergCompatCheck(version int) func(t *actions.TableConfig, op Operation) error {
	return func(t *actions.TableConfig, op Operation) error {
		if readOps.has(op) {
			return nil
		}
		p := t.Properties()
		enabled := p.EnableIcebergCompatV2
		if version == 1 {
			enabled = p.EnableIcebergCompatV1
		}
		if !enabled {
			return nil
		}
		if p.EnableIcebergCompatV1 && p.EnableIcebergCompatV2 {
			return fmt.Errorf("%s and %s cannot both be true", actions.PropEnableIcebergCompatV1, actions.PropEnableIcebergCompatV2)
		}
		if m := p.ColumnMappingMode; m != actions.ColumnMappingName && m != actions.ColumnMappingID {
			return fmt.Errorf("IcebergCompatV%d needs column mapping: set %s to name or id", version, actions.PropColumnMappingMode)
		}
		if p.EnableDeletionVectors || (version == 1 && t.Protocol() != nil && t.Protocol().HasWriterFeature(actions.FeatureDeletionVectors)) {
			return fmt.Errorf("IcebergCompatV%d forbids deletion vectors: set %s to false (and purge them with OPTIMIZE)", version, actions.PropEnableDeletionVectors)
		}
		return icebergTypes(t.Schema(), version, "")
	}
}

// icebergTypes checks the schema against the allow-list of types.
func icebergTypes(s *actions.StructType, version int, prefix string) error {
	for _, f := range s.Fields {
		if err := icebergType(f.Type, version, prefix+f.Name); err != nil {
			return err
		}
	}
	return nil
}

var icebergPrimitives = []actions.PrimitiveType{actions.TypeByte, actions.TypeShort, actions.TypeInteger, actions.TypeLong,
	actions.TypeFloat, actions.TypeDouble, actions.TypeString, actions.TypeBinary, actions.TypeBoolean,
	actions.TypeTimestamp, actions.TypeTimestampNTZ, actions.TypeDate}

func icebergType(t actions.DataType, version int, col string) error {
	switch t := t.(type) {
	case *actions.DecimalType:
		return nil
	case *actions.StructType:
		return icebergTypes(t, version, col+".")
	case *actions.ArrayType, *actions.MapType:
		if version == 1 {
			return fmt.Errorf("column %q has type %s: IcebergCompatV1 forbids arrays and maps", col, t)
		}
		return fmt.Errorf("column %q has type %s: lakelog does not write the ids of array elements and map keys and values (parquet.field.nested.ids) that IcebergCompatV2 needs yet", col, t)
	case actions.PrimitiveType:
		if slices.Contains(icebergPrimitives, t) {
			return nil
		}
	}
	return fmt.Errorf("column %q has type %s, which IcebergCompatV%d does not allow", col, t, version)
}

// checkUniversalFormat refuses delta.universalFormat.enabledFormats that
// lakelog cannot keep: hudi, and iceberg without IcebergCompatV1 or V2
// (as Spark refuses it).
func checkUniversalFormat(p *actions.TableProperties) error {
	for _, f := range p.UniversalFormats {
		switch f {
		case "hudi":
			return fmt.Errorf("%w: %s=hudi: lakelog writes no Hudi metadata", ErrUnsupportedFeature, actions.PropUniversalFormatEnabledFormats)
		case "iceberg":
			if !p.EnableIcebergCompatV1 && !p.EnableIcebergCompatV2 {
				return fmt.Errorf("%s=iceberg needs %s=true (and column mapping)", actions.PropUniversalFormatEnabledFormats, actions.PropEnableIcebergCompatV2)
			}
		}
	}
	return nil
}
