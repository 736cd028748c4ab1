package rangefetch

import (
	"fmt"

	"github.com/apache/arrow-go/v18/parquet/metadata"
)

// parquetMagic is the length of "PAR1", which starts every Parquet file.
const parquetMagic = 4

// chunkPadding is what arrow-go reads past a column chunk of a file whose
// writer predates PARQUET-816's fix (its dictionary page header was left
// out of the chunk's size).
const chunkPadding = 100

// ChunkSpan is the byte range from..to of a file of size bytes that a
// decoder reads for the column chunk cc: from the chunk's dictionary page
// (or first data page) for its TotalCompressedSize bytes and, when padded
// (Padded of the file's metadata), up to chunkPadding bytes more within
// the file, as arrow-go reads it. It fails when the chunk does not lie
// within the file after its magic number: such metadata must be refused
// before a decoder reads it.
func ChunkSpan(cc *metadata.ColumnChunkMetaData, size int64, padded bool) (from, to int64, err error) {
	from = cc.DataPageOffset()
	if cc.HasDictionaryPage() && cc.DictionaryPageOffset() > 0 && from > cc.DictionaryPageOffset() {
		from = cc.DictionaryPageOffset()
	}
	n := cc.TotalCompressedSize()
	if from < parquetMagic || n < 0 || from > size || n > size-from {
		return 0, 0, fmt.Errorf("chunk at %d of %d bytes is outside the file of %d bytes", from, n, size)
	}
	to = from + n
	if padded {
		to = min(size, to+chunkPadding)
	}
	return from, to, nil
}

// Padded reports whether arrow-go reads the column chunks of a file with
// metadata md with PARQUET-816's padding (ChunkSpan).
func Padded(md *metadata.FileMetaData) bool {
	return md.WriterVersion().LessThan(metadata.Parquet816FixedVersion)
}

// RowGroupRanges returns the spans (ChunkSpan) of the chunks of leaves in
// row group rg of md, a file of size bytes, leaving out empty chunks.
func RowGroupRanges(md *metadata.FileMetaData, rg int, leaves []int, size int64) ([][2]int64, error) {
	padded := Padded(md)
	out := make([][2]int64, 0, len(leaves))
	for _, c := range leaves {
		cc, err := md.RowGroup(rg).ColumnChunk(c)
		if err != nil {
			return nil, fmt.Errorf("row group %d column %d: %w", rg, c, err)
		}
		from, to, err := ChunkSpan(cc, size, padded)
		if err != nil {
			return nil, fmt.Errorf("row group %d column %d: %w", rg, c, err)
		}
		if from < to {
			out = append(out, [2]int64{from, to})
		}
	}
	return out, nil
}
