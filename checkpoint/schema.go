package checkpoint

import (
	"encoding/json"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/lakelog/lakelog/actions"
)

// The checkpoint schema written by Write: PROTOCOL.md "Checkpoint Schema",
// with the columns and field order of current Spark (Delta 3.x) so that
// files compare field by field with Spark's. Every field is nullable, as
// Spark writes them; map keys are required.

func str(name string) arrow.Field {
	return arrow.Field{Name: name, Type: arrow.BinaryTypes.String, Nullable: true}
}

func i64(name string) arrow.Field {
	return arrow.Field{Name: name, Type: arrow.PrimitiveTypes.Int64, Nullable: true}
}

func i32(name string) arrow.Field {
	return arrow.Field{Name: name, Type: arrow.PrimitiveTypes.Int32, Nullable: true}
}

func boolean(name string) arrow.Field {
	return arrow.Field{Name: name, Type: arrow.FixedWidthTypes.Boolean, Nullable: true}
}

func strMap(name string) arrow.Field {
	return arrow.Field{Name: name, Type: arrow.MapOf(arrow.BinaryTypes.String, arrow.BinaryTypes.String), Nullable: true}
}

func strList(name string) arrow.Field {
	return arrow.Field{Name: name, Type: arrow.ListOfField(str("element")), Nullable: true}
}

func structOf(name string, fields ...arrow.Field) arrow.Field {
	return arrow.Field{Name: name, Type: arrow.StructOf(fields...), Nullable: true}
}

func deletionVectorField() arrow.Field {
	return structOf("deletionVector",
		str("storageType"),
		str("pathOrInlineDv"),
		i32("offset"),
		i32("sizeInBytes"),
		i64("cardinality"),
		i64("maxRowIndex"),
	)
}

// schemaConfig decides the optional columns of a written checkpoint.
type schemaConfig struct {
	statsJSON bool
	// parsed holds the add.partitionValues_parsed and add.stats_parsed
	// fields, when stats are written as structs.
	partitionValuesParsed *arrow.Field
	statsParsed           *arrow.Field
	// v2 adds the checkpointMetadata and sidecar columns.
	v2 bool
	// sidecar keeps only the add and remove columns, for sidecar files.
	sidecar bool
}

// checkpointSchema returns the Arrow schema of a written checkpoint.
func checkpointSchema(c schemaConfig) *arrow.Schema {
	add := []arrow.Field{
		str("path"),
		strMap("partitionValues"),
		i64("size"),
		i64("modificationTime"),
		boolean("dataChange"),
	}
	if c.statsJSON {
		add = append(add, str("stats"))
	}
	add = append(add,
		strMap("tags"),
		deletionVectorField(),
		i64("baseRowId"),
		i64("defaultRowCommitVersion"),
		str("clusteringProvider"),
	)
	if c.partitionValuesParsed != nil {
		add = append(add, *c.partitionValuesParsed)
	}
	if c.statsParsed != nil {
		add = append(add, *c.statsParsed)
	}
	remove := structOf(KindRemove,
		str("path"),
		i64("deletionTimestamp"),
		boolean("dataChange"),
		boolean("extendedFileMetadata"),
		strMap("partitionValues"),
		i64("size"),
		deletionVectorField(),
		i64("baseRowId"),
		i64("defaultRowCommitVersion"),
	)
	if c.sidecar {
		return arrow.NewSchema([]arrow.Field{structOf(KindAdd, add...), remove}, nil)
	}
	fields := []arrow.Field{
		structOf(KindTxn,
			str("appId"),
			i64("version"),
			i64("lastUpdated"),
		),
		structOf(KindAdd, add...),
		// Remove tombstones carry no stats or tags in a checkpoint
		// (PROTOCOL.md "Checkpoints").
		remove,
		structOf(KindMetadata,
			str("id"),
			str("name"),
			str("description"),
			structOf("format",
				str("provider"),
				strMap("options"),
			),
			str("schemaString"),
			strList("partitionColumns"),
			strMap("configuration"),
			i64("createdTime"),
		),
		structOf(KindProtocol,
			i32("minReaderVersion"),
			i32("minWriterVersion"),
			strList("readerFeatures"),
			strList("writerFeatures"),
		),
		structOf(KindDomainMetadata,
			str("domain"),
			str("configuration"),
			boolean("removed"),
		),
	}
	if c.v2 {
		fields = append(fields,
			structOf(KindCheckpointMetadata,
				i64("version"),
				strMap("tags"),
			),
			structOf(KindSidecar,
				str("path"),
				i64("sizeInBytes"),
				i64("modificationTime"),
				strMap("tags"),
			),
		)
	}
	return arrow.NewSchema(fields, nil)
}

// deltaSchemaJSON renders an Arrow schema as Delta schema JSON, for the
// checkpointSchema field of _last_checkpoint.
func deltaSchemaJSON(sc *arrow.Schema) (json.RawMessage, error) {
	st := &actions.StructType{}
	for _, f := range sc.Fields() {
		sf, err := deltaField(f)
		if err != nil {
			return nil, err
		}
		st.Fields = append(st.Fields, sf)
	}
	b, err := json.Marshal(st)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: encode checkpoint schema: %w", err)
	}
	return b, nil
}

func deltaField(f arrow.Field) (*actions.StructField, error) {
	t, err := deltaType(f.Type)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: column %s: %w", f.Name, err)
	}
	return &actions.StructField{Name: f.Name, Type: t, Nullable: f.Nullable, Metadata: map[string]any{}}, nil
}

func deltaType(t arrow.DataType) (actions.DataType, error) {
	switch t := t.(type) {
	case *arrow.StringType:
		return actions.TypeString, nil
	case *arrow.BinaryType:
		return actions.TypeBinary, nil
	case *arrow.Int64Type:
		return actions.TypeLong, nil
	case *arrow.Int32Type:
		return actions.TypeInteger, nil
	case *arrow.Int16Type:
		return actions.TypeShort, nil
	case *arrow.Int8Type:
		return actions.TypeByte, nil
	case *arrow.Float32Type:
		return actions.TypeFloat, nil
	case *arrow.Float64Type:
		return actions.TypeDouble, nil
	case *arrow.BooleanType:
		return actions.TypeBoolean, nil
	case *arrow.Date32Type:
		return actions.TypeDate, nil
	case *arrow.TimestampType:
		if t.TimeZone == "" {
			return actions.TypeTimestampNTZ, nil
		}
		return actions.TypeTimestamp, nil
	case *arrow.Decimal128Type:
		return &actions.DecimalType{Precision: int(t.Precision), Scale: int(t.Scale)}, nil
	case *arrow.MapType:
		k, err := deltaType(t.KeyType())
		if err != nil {
			return nil, err
		}
		v, err := deltaType(t.ItemType())
		if err != nil {
			return nil, err
		}
		return &actions.MapType{KeyType: k, ValueType: v, ValueContainsNull: t.ItemField().Nullable}, nil
	case *arrow.ListType:
		e, err := deltaType(t.Elem())
		if err != nil {
			return nil, err
		}
		return &actions.ArrayType{ElementType: e, ContainsNull: t.ElemField().Nullable}, nil
	case *arrow.StructType:
		st := &actions.StructType{}
		for _, f := range t.Fields() {
			sf, err := deltaField(f)
			if err != nil {
				return nil, err
			}
			st.Fields = append(st.Fields, sf)
		}
		return st, nil
	}
	return nil, fmt.Errorf("no Delta type for Arrow type %s", t)
}
