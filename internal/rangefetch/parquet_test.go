package rangefetch

import (
	"bytes"
	"context"
	"io"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// recorder is an io.ReaderAt over b that records the ranges read.
type recorder struct {
	b     []byte
	mu    sync.Mutex
	reads [][2]int64
}

func (r *recorder) ReadAt(p []byte, off int64) (int, error) {
	r.mu.Lock()
	r.reads = append(r.reads, [2]int64{off, off + int64(len(p))})
	r.mu.Unlock()
	return bytes.NewReader(r.b).ReadAt(p, off)
}

// TestChunkSpan: every read arrow-go makes of a file's column chunks, in
// every row group, lies within the chunk's ChunkSpan; and the spans lie
// within the file.
func TestChunkSpan(t *testing.T) {
	sc := arrow.NewSchema([]arrow.Field{{Name: "a", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true}}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	for i := range 5000 {
		b.Field(0).(*array.Int64Builder).Append(int64(i * 7919))
		b.Field(1).(*array.StringBuilder).Append(string(rune('a' + i%26)))
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	var buf bytes.Buffer
	w, err := pqarrow.NewFileWriter(sc, &buf, parquet.NewWriterProperties(parquet.WithMaxRowGroupLength(1500)), pqarrow.DefaultWriterProps())
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	size := int64(buf.Len())
	rd := &recorder{b: buf.Bytes()}
	pf, err := file.NewParquetReader(io.NewSectionReader(rd, 0, size), file.WithReadProps(parquet.NewReaderProperties(memory.DefaultAllocator)))
	if err != nil {
		t.Fatal(err)
	}
	defer pf.Close()
	md := pf.MetaData()
	rd.mu.Lock()
	rd.reads = nil // the footer's
	rd.mu.Unlock()
	var spans [][2]int64
	for rg := range md.NumRowGroups() {
		rs, err := RowGroupRanges(md, rg, []int{0, 1}, size)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rs {
			if r[0] < 4 || r[1] > size {
				t.Errorf("span %v outside the file of %d bytes", r, size)
			}
		}
		spans = append(spans, rs...)
	}
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := fr.ReadTable(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	tbl.Release()
	if len(rd.reads) == 0 {
		t.Fatal("no reads recorded")
	}
	for _, r := range rd.reads {
		in := false
		for _, s := range spans {
			in = in || r[0] >= s[0] && r[1] <= s[1]
		}
		if !in {
			t.Errorf("read %v lies in no chunk span %v", r, spans)
		}
	}
}
