package writer

import (
	"context"
	"encoding/binary"
	"fmt"

	"github.com/apache/thrift/lib/go/thrift"
)

// noColumnsParquet returns a Parquet file with no columns and rows rows,
// for tables whose every column is a partition column: what Spark writes
// there (an empty message schema whose row group records the row count).
// The Parquet writer cannot express it, since it counts rows from
// columns, so the footer is encoded here.
func noColumnsParquet(rows int64, createdBy string) ([]byte, error) {
	ctx := context.Background()
	buf := thrift.NewTMemoryBuffer()
	p := thrift.NewTCompactProtocolConf(buf, &thrift.TConfiguration{})
	field := func(name string, t thrift.TType, id int16, write func() error) error {
		if err := p.WriteFieldBegin(ctx, name, t, id); err != nil {
			return err
		}
		if err := write(); err != nil {
			return err
		}
		return p.WriteFieldEnd(ctx)
	}
	err := func() error {
		// FileMetaData
		if err := p.WriteStructBegin(ctx, "FileMetaData"); err != nil {
			return err
		}
		if err := field("version", thrift.I32, 1, func() error { return p.WriteI32(ctx, 1) }); err != nil {
			return err
		}
		if err := field("schema", thrift.LIST, 2, func() error {
			if err := p.WriteListBegin(ctx, thrift.STRUCT, 1); err != nil {
				return err
			}
			// The root SchemaElement: a group without children.
			if err := p.WriteStructBegin(ctx, "SchemaElement"); err != nil {
				return err
			}
			if err := field("name", thrift.STRING, 4, func() error { return p.WriteString(ctx, "spark_schema") }); err != nil {
				return err
			}
			if err := field("num_children", thrift.I32, 5, func() error { return p.WriteI32(ctx, 0) }); err != nil {
				return err
			}
			if err := p.WriteFieldStop(ctx); err != nil {
				return err
			}
			if err := p.WriteStructEnd(ctx); err != nil {
				return err
			}
			return p.WriteListEnd(ctx)
		}); err != nil {
			return err
		}
		if err := field("num_rows", thrift.I64, 3, func() error { return p.WriteI64(ctx, rows) }); err != nil {
			return err
		}
		if err := field("row_groups", thrift.LIST, 4, func() error {
			n := 0
			if rows > 0 {
				n = 1
			}
			if err := p.WriteListBegin(ctx, thrift.STRUCT, n); err != nil {
				return err
			}
			if n == 1 {
				// RowGroup{columns: [], total_byte_size: 0, num_rows: rows}
				if err := p.WriteStructBegin(ctx, "RowGroup"); err != nil {
					return err
				}
				if err := field("columns", thrift.LIST, 1, func() error {
					if err := p.WriteListBegin(ctx, thrift.STRUCT, 0); err != nil {
						return err
					}
					return p.WriteListEnd(ctx)
				}); err != nil {
					return err
				}
				if err := field("total_byte_size", thrift.I64, 2, func() error { return p.WriteI64(ctx, 0) }); err != nil {
					return err
				}
				if err := field("num_rows", thrift.I64, 3, func() error { return p.WriteI64(ctx, rows) }); err != nil {
					return err
				}
				if err := p.WriteFieldStop(ctx); err != nil {
					return err
				}
				if err := p.WriteStructEnd(ctx); err != nil {
					return err
				}
			}
			return p.WriteListEnd(ctx)
		}); err != nil {
			return err
		}
		if err := field("created_by", thrift.STRING, 6, func() error { return p.WriteString(ctx, createdBy) }); err != nil {
			return err
		}
		if err := p.WriteFieldStop(ctx); err != nil {
			return err
		}
		if err := p.WriteStructEnd(ctx); err != nil {
			return err
		}
		return p.Flush(ctx)
	}()
	if err != nil {
		return nil, fmt.Errorf("writer: encode an empty-schema Parquet footer: %w", err)
	}
	footer := buf.Bytes()
	out := make([]byte, 0, 4+len(footer)+8)
	out = append(out, "PAR1"...)
	out = append(out, footer...)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(footer)))
	return append(out, "PAR1"...), nil
}
