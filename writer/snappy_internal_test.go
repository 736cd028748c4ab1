package writer

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/snappy"
)

// TestLevelledSnappy: the registered Snappy codec encodes at
// fastSnappyLevel with the standard encoder, keeps arrow-go's encoding at
// other levels, and everything it writes decodes as Snappy.
func TestLevelledSnappy(t *testing.T) {
	codec, err := compress.GetCodec(compress.Codecs.Snappy)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := codec.(levelledSnappy); !ok {
		t.Fatalf("Snappy codec is %T, want levelledSnappy", codec)
	}
	var src bytes.Buffer
	for i := range 50_000 {
		fmt.Fprintf(&src, "row %d value %d;", i, i*7919%1000)
	}
	fast := codec.EncodeLevel(nil, src.Bytes(), fastSnappyLevel)
	if want := s2.EncodeSnappy(nil, src.Bytes()); !bytes.Equal(fast, want) {
		t.Error("fastSnappyLevel does not use s2.EncodeSnappy")
	}
	if got, want := codec.EncodeLevel(nil, src.Bytes(), compress.DefaultCompressionLevel), snappy.Encode(nil, src.Bytes()); !bytes.Equal(got, want) {
		t.Error("the default level no longer encodes as arrow-go does")
	}
	for _, enc := range [][]byte{fast, codec.Encode(nil, src.Bytes())} {
		dec, err := compress.Decode(codec, nil, enc)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(dec, src.Bytes()) {
			t.Fatal("round trip changed the bytes")
		}
		if dec, err := snappy.Decode(nil, enc); err != nil || !bytes.Equal(dec, src.Bytes()) {
			t.Fatalf("not standard Snappy: %v", err)
		}
	}
	if _, err := compress.Decode(codec, nil, []byte{0xff, 0xff, 0xff}); err == nil {
		t.Error("corrupt input decoded without error")
	}
}
