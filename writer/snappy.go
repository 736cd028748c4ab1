package writer

import (
	"io"

	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/klauspost/compress/s2"
)

// arrow-go compresses Snappy pages with klauspost's "better" Snappy
// encoder whatever the level asked for, which spends about twice the time
// of the standard one for a few percent smaller pages; on the data path
// that was a quarter of a write's CPU. Data files are written at
// fastSnappyLevel instead, which the codec registered here serves with
// s2.EncodeSnappy (standard Snappy output, like any other encoder's).
// Every other level, and decoding, stay with arrow-go's codec, so other
// users of the process-wide registry see no change.
const fastSnappyLevel = 1

func init() {
	base, err := compress.GetCodec(compress.Codecs.Snappy)
	if err != nil {
		return // arrow-go without Snappy: leave the registry alone
	}
	if _, ok := base.(compress.StreamingCodec); !ok {
		return
	}
	compress.RegisterCodec(compress.Codecs.Snappy, levelledSnappy{base})
}

// levelledSnappy is arrow-go's Snappy codec with a fast encoder at
// fastSnappyLevel.
type levelledSnappy struct{ base compress.Codec }

func (c levelledSnappy) Encode(dst, src []byte) []byte { return c.base.Encode(dst, src) }

func (c levelledSnappy) EncodeLevel(dst, src []byte, level int) []byte {
	if level == fastSnappyLevel {
		return s2.EncodeSnappy(dst, src)
	}
	return c.base.EncodeLevel(dst, src, level)
}

func (c levelledSnappy) CompressBound(n int64) int64 { return c.base.CompressBound(n) }

func (c levelledSnappy) Decode(dst, src []byte) []byte { return c.base.Decode(dst, src) }

func (c levelledSnappy) DecodeWithError(dst, src []byte) ([]byte, error) {
	return compress.Decode(c.base, dst, src)
}

func (c levelledSnappy) NewReader(r io.Reader) io.ReadCloser {
	return c.base.(compress.StreamingCodec).NewReader(r)
}

func (c levelledSnappy) NewWriter(w io.Writer) io.WriteCloser {
	return c.base.(compress.StreamingCodec).NewWriter(w)
}

func (c levelledSnappy) NewWriterLevel(w io.Writer, level int) (io.WriteCloser, error) {
	return c.base.(compress.StreamingCodec).NewWriterLevel(w, level)
}
