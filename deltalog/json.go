package deltalog

import (
	"fmt"

	"github.com/lakelog/lakelog/actions"
)

func usesType(t actions.DataType, want actions.PrimitiveType) bool {
	switch t := t.(type) {
	case actions.PrimitiveType:
		return t == want
	case *actions.StructType:
		for _, f := range t.Fields {
			if usesType(f.Type, want) {
				return true
			}
		}
	case *actions.ArrayType:
		return usesType(t.ElementType, want)
	case *actions.MapType:
		return usesType(t.KeyType, want) || usesType(t.ValueType, want)
	}
	return false
}

// tableFlag reads a boolean table property. A malformed value reads as the
// default here; writers validate properties before committing them
// (checkProperties), so only foreign tables can hold one.
func tableFlag(md *actions.Metadata, key string) bool {
	v, err := actions.PropBool(md, key, false)
	return err == nil && v
}

// tableInt reads an integer table property, def when unset or malformed.
func tableInt(md *actions.Metadata, key string, def int64) int64 {
	v, err := actions.PropInt(md, key, def)
	if err != nil {
		return def
	}
	return v
}

// checkProperties rejects malformed values of the properties lakelog acts
// on, before they are committed.
func checkProperties(md *actions.Metadata) error {
	for _, k := range []string{"delta.appendOnly", "delta.enableInCommitTimestamps", "delta.enableDeletionVectors", "delta.enableChangeDataFeed", "delta.checkpoint.writeStatsAsStruct", "delta.checkpoint.writeStatsAsJson"} {
		if _, err := actions.PropBool(md, k, false); err != nil {
			return err
		}
	}
	for _, k := range []string{"delta.checkpointInterval", "delta.dataSkippingNumIndexedCols"} {
		if _, err := actions.PropInt(md, k, 0); err != nil {
			return err
		}
	}
	for _, k := range []string{"delta.logRetentionDuration", "delta.deletedFileRetentionDuration", "delta.setTransactionRetentionDuration"} {
		if _, err := actions.PropDuration(md, k, 0); err != nil {
			return err
		}
	}
	if l, ok := md.Prop("delta.isolationLevel"); ok && l != "Serializable" && l != "WriteSerializable" {
		return fmt.Errorf("actions: table property delta.isolationLevel = %q: want Serializable or WriteSerializable", l)
	}
	return nil
}
