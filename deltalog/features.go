package deltalog

import (
	"fmt"
	"strings"

	"github.com/lakelog/lakelog/actions"
)

// maxReaderVersion and maxWriterVersion are the highest protocol versions
// lakelog understands (3 and 7 are the table-features versions).
const (
	maxReaderVersion = 3
	maxWriterVersion = 7
)

// readerFeatures are the reader features whose log form lakelog replays.
// Features that change how data files are read (deletion vectors, column
// mapping, type widening) are also checked by the reader package, which
// refuses a scan it cannot do correctly.
var readerFeatures = map[string]bool{
	"columnMapping":        true,
	"deletionVectors":      true,
	"timestampNtz":         true,
	"v2Checkpoint":         true,
	"vacuumProtocolCheck":  true,
	"typeWidening":         true,
	"typeWidening-preview": true,
}

// checkReadable is the protocol gate for readers.
func checkReadable(p *actions.Protocol) error {
	if p.MinReaderVersion < 1 || p.MinReaderVersion > maxReaderVersion {
		return fmt.Errorf("%w: reader version %d (lakelog reads versions 1 to %d)", ErrUnsupportedFeature, p.MinReaderVersion, maxReaderVersion)
	}
	if p.MinReaderVersion == 3 {
		var missing []string
		for _, f := range p.ReaderFeatures {
			if !readerFeatures[f] {
				missing = append(missing, f)
			}
		}
		if len(missing) > 0 {
			return fmt.Errorf("%w: reader feature %s", ErrUnsupportedFeature, quoteList(missing))
		}
	}
	return nil
}

// writerFeatureCheck says whether lakelog can honour a writer feature for
// the table's current metadata: nil when it can, else why not.
var writerFeatureCheck = map[string]func(md *actions.Metadata, props *actions.TableProperties, schema *actions.StructType) error{
	"appendOnly":          nil, // enforced in Commit
	"changeDataFeed":      nil, // appends need no cdc files; DML writes them
	"deletionVectors":     nil,
	"timestampNtz":        nil,
	"domainMetadata":      nil,
	"inCommitTimestamp":   nil, // written by Commit
	"vacuumProtocolCheck": nil,
	"invariants": func(_ *actions.Metadata, _ *actions.TableProperties, s *actions.StructType) error {
		return unusedFieldMetadata(s, "delta.invariants", "column invariants")
	},
	"checkConstraints": func(md *actions.Metadata, props *actions.TableProperties, _ *actions.StructType) error {
		for k := range md.Configuration {
			if strings.HasPrefix(k, "delta.constraints.") {
				return fmt.Errorf("CHECK constraint %q is not enforced by lakelog yet", strings.TrimPrefix(k, "delta.constraints."))
			}
		}
		return nil
	},
	"generatedColumns": func(_ *actions.Metadata, _ *actions.TableProperties, s *actions.StructType) error {
		return unusedFieldMetadata(s, "delta.generationExpression", "generated columns")
	},
	"identityColumns": func(_ *actions.Metadata, _ *actions.TableProperties, s *actions.StructType) error {
		return unusedFieldMetadata(s, "delta.identity.start", "identity columns")
	},
	"columnMapping": func(md *actions.Metadata, props *actions.TableProperties, _ *actions.StructType) error {
		if m := props.ColumnMappingMode; m != actions.ColumnMappingNone {
			return fmt.Errorf("column mapping mode %q is not written by lakelog yet", m)
		}
		return nil
	},
}

// checkWritable is the protocol gate for writers.
func checkWritable(p *actions.Protocol, md *actions.Metadata, props *actions.TableProperties, schema *actions.StructType) error {
	if err := checkReadable(p); err != nil {
		return err
	}
	if p.MinWriterVersion < 1 || p.MinWriterVersion > maxWriterVersion {
		return fmt.Errorf("%w: writer version %d (lakelog writes versions 1 to %d)", ErrUnsupportedFeature, p.MinWriterVersion, maxWriterVersion)
	}
	for _, f := range p.WriterFeatureSet() {
		check, ok := writerFeatureCheck[f]
		if !ok {
			return fmt.Errorf("%w: writer feature %q", ErrUnsupportedFeature, f)
		}
		if check == nil {
			continue
		}
		if err := check(md, props, schema); err != nil {
			return fmt.Errorf("%w: writer feature %q: %v", ErrUnsupportedFeature, f, err)
		}
	}
	return nil
}

func unusedFieldMetadata(s *actions.StructType, key, what string) error {
	var found string
	var walk func(prefix string, t actions.DataType)
	walk = func(prefix string, t actions.DataType) {
		switch t := t.(type) {
		case *actions.StructType:
			for _, f := range t.Fields {
				if _, ok := f.Metadata[key]; ok && found == "" {
					found = prefix + f.Name
				}
				walk(prefix+f.Name+".", f.Type)
			}
		case *actions.ArrayType:
			walk(prefix, t.ElementType)
		case *actions.MapType:
			walk(prefix, t.KeyType)
			walk(prefix, t.ValueType)
		}
	}
	walk("", s)
	if found != "" {
		return fmt.Errorf("column %q uses %s, which lakelog does not enforce yet", found, what)
	}
	return nil
}

func quoteList(s []string) string {
	q := make([]string, len(s))
	for i, v := range s {
		q[i] = fmt.Sprintf("%q", v)
	}
	return strings.Join(q, ", ")
}
