package deletionvector_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"flag"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/RoaringBitmap/roaring/v2/roaring64"

	"github.com/lakelog/lakelog/deletionvector"
)

var (
	seedFlag = flag.Uint64("dv.seed", 0, "seed of the randomized deletion vector tests (0: from the clock)")
	bigFlag  = flag.Bool("dv.big", false, "run the randomized deletion vector tests at a larger size")
)

func testSeed(t *testing.T) uint64 {
	t.Helper()
	s := *seedFlag
	if s == 0 {
		s = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (replay with -dv.seed=%d)", s, s)
	return s
}

// randomRows draws a set of row indexes in one of several shapes, as a
// plain Go set (the model) and a bitmap built from it.
func randomRows(rng *rand.Rand) (map[uint64]bool, string) {
	model := map[uint64]bool{}
	shape := []string{"empty", "sparse", "dense", "runs", "high", "mixed"}[rng.IntN(6)]
	switch shape {
	case "empty":
	case "sparse":
		for range rng.IntN(200) + 1 {
			model[rng.Uint64N(1<<22)] = true
		}
	case "dense":
		base := rng.Uint64N(1 << 20)
		for i := range uint64(rng.IntN(70000) + 5000) {
			if rng.IntN(3) != 0 {
				model[base+i] = true
			}
		}
	case "runs":
		for range rng.IntN(5) + 1 {
			start, n := rng.Uint64N(1<<24), rng.Uint64N(20000)+1
			for i := range n {
				model[start+i] = true
			}
		}
	case "high":
		// Row indexes above 2^32, in several buckets, up to the largest.
		for range rng.IntN(100) + 1 {
			model[uint64(rng.IntN(5)+1)<<32|rng.Uint64N(1<<20)] = true
		}
		model[deletionvector.MaxRowIndex] = true
		model[1<<32-1] = true
		model[1<<32] = true
	case "mixed":
		for range rng.IntN(1000) + 1 {
			model[rng.Uint64N(1<<34)] = true
		}
		for i := range uint64(5000) {
			model[1<<16+i] = true
		}
	}
	return model, shape
}

func bitmapOf(model map[uint64]bool) *roaring64.Bitmap {
	bm := roaring64.New()
	for v := range model {
		bm.Add(v)
	}
	return bm
}

func sortedKeys(model map[uint64]bool) []uint64 {
	out := make([]uint64, 0, len(model))
	for v := range model {
		out = append(out, v)
	}
	slices.Sort(out)
	return out
}

func TestRoundTripRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(testSeed(t), 1))
	n := 150
	if *bigFlag {
		n = 5000
	}
	for i := range n {
		model, shape := randomRows(rng)
		b, err := deletionvector.Encode(bitmapOf(model))
		if err != nil {
			t.Fatalf("case %d (%s): encode: %v", i, shape, err)
		}
		if m := binary.LittleEndian.Uint32(b); m != deletionvector.MagicNumber {
			t.Fatalf("case %d: magic %d", i, m)
		}
		got, err := deletionvector.Decode(b)
		if err != nil {
			t.Fatalf("case %d (%s): decode: %v", i, shape, err)
		}
		if want := sortedKeys(model); !slices.Equal(got.ToArray(), want) && !(len(want) == 0 && got.IsEmpty()) {
			t.Fatalf("case %d (%s): decoded %d rows, model has %d", i, shape, got.GetCardinality(), len(want))
		}
		for v := range model {
			if !got.Contains(v) {
				t.Fatalf("case %d (%s): row %d lost", i, shape, v)
			}
		}
	}
}

func TestEncodeRejectsTopBit(t *testing.T) {
	if _, err := deletionvector.Encode(roaring64.BitmapOf(1 << 63)); err == nil {
		t.Fatal("encoded a row index with the top bit set")
	}
}

// TestDecodeInline decodes inline vectors as other writers wrote them:
// Spark's Z85 of the bytes padded with zeros to a multiple of four, and
// the Rust z85 crate's padded last group ("##093": the two bytes 03 00),
// as in the corpus's cdf-table-with-dv, whose change data says that
// vector deletes row 3.
func TestDecodeInline(t *testing.T) {
	for _, c := range []struct {
		z85  string
		size int32
		want []uint64
	}{
		{"^Bg9^0rr910000000000iXQKl0rr91000625c8Xg0rri41POJ5", 38, []uint64{1, 3, 5}},
		{"^Bg9^0rr910000000000iXQKl0rr91000005c8Xg##093", 34, []uint64{3}},
	} {
		bm, err := deletionvector.Load(t.Context(), nil, "", inline(c.z85, c.size, int64(len(c.want))))
		if err != nil {
			t.Fatalf("%s: %v", c.z85, err)
		}
		if got := bm.ToArray(); !slices.Equal(got, c.want) {
			t.Fatalf("%s: rows %v, want %v", c.z85, got, c.want)
		}
	}
}

// TestProtocolExampleRefused: the inline example of PROTOCOL.md ("JSON
// Example 3 — Inline") holds the bytes of Delta's older native layout
// written big-endian (magic 1681511376); delta-spark's reader refuses it
// too, so it must be a clear error, not rows.
func TestProtocolExampleRefused(t *testing.T) {
	_, err := deletionvector.Load(t.Context(), nil, "", inline("wi5b=000010000siXQKl0rr91000f55c8Xg0@@D72lkbi5=-{L", 40, 6))
	if !errors.Is(err, deletionvector.ErrCorrupt) || !strings.Contains(err.Error(), "magic number") {
		t.Fatalf("got %v, want a magic number error", err)
	}
}

// TestDecodeEmptyBuckets decodes the layout Delta's own writer produces
// for rows only above 2^32: an empty bucket 0 before bucket 1.
func TestDecodeEmptyBuckets(t *testing.T) {
	var b []byte
	b = binary.LittleEndian.AppendUint32(b, deletionvector.MagicNumber)
	b = binary.LittleEndian.AppendUint64(b, 2)
	b = binary.LittleEndian.AppendUint32(b, 0)     // key 0
	b = binary.LittleEndian.AppendUint32(b, 12346) // empty 32-bit bitmap
	b = binary.LittleEndian.AppendUint32(b, 0)
	b = binary.LittleEndian.AppendUint32(b, 1) // key 1
	b = binary.LittleEndian.AppendUint32(b, 12346)
	b = binary.LittleEndian.AppendUint32(b, 1)       // one container
	b = binary.LittleEndian.AppendUint16(b, 0)       // key 0
	b = binary.LittleEndian.AppendUint16(b, 1)       // cardinality 2
	b = binary.LittleEndian.AppendUint32(b, 4+4+4+4) // offset of the container
	b = binary.LittleEndian.AppendUint16(b, 5)
	b = binary.LittleEndian.AppendUint16(b, 9)
	bm, err := deletionvector.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := bm.ToArray(), []uint64{1<<32 + 5, 1<<32 + 9}; !slices.Equal(got, want) {
		t.Fatalf("rows %v, want %v", got, want)
	}
}

func TestDecodeRejects(t *testing.T) {
	good, err := deletionvector.Encode(roaring64.BitmapOf(1, 2, 3, 1<<33))
	if err != nil {
		t.Fatal(err)
	}
	mutate := func(f func(b []byte) []byte) []byte { return f(bytes.Clone(good)) }
	cases := map[string][]byte{
		"empty":        {},
		"magic only":   good[:4],
		"wrong magic":  mutate(func(b []byte) []byte { b[0]++; return b }),
		"truncated":    good[:len(good)-1],
		"trailing":     append(bytes.Clone(good), 0),
		"huge count":   mutate(func(b []byte) []byte { binary.LittleEndian.PutUint64(b[4:], 1<<62); return b }),
		"top bit key":  mutate(func(b []byte) []byte { b[12+3] |= 0x80; return b }),
		"bad cookie":   mutate(func(b []byte) []byte { b[16]++; return b }),
		"card too big": mutate(func(b []byte) []byte { binary.LittleEndian.PutUint16(b[16+8+2:], 3); return b }),
	}
	for name, b := range cases {
		if _, err := deletionvector.Decode(b); !errors.Is(err, deletionvector.ErrCorrupt) {
			t.Errorf("%s: got %v, want ErrCorrupt", name, err)
		}
	}
}

func FuzzDecode(f *testing.F) {
	for _, rows := range [][]uint64{nil, {0}, {1, 2, 3}, {5, 1 << 32, 1<<40 + 7}} {
		b, err := deletionvector.Encode(roaring64.BitmapOf(rows...))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	dense := roaring64.New()
	dense.AddRange(100, 70000)
	for v := uint64(0); v < 70000; v += 3 {
		dense.Remove(v)
	}
	b, _ := deletionvector.Encode(dense)
	f.Add(b)
	runs := roaring64.New()
	runs.AddRange(10, 50000)
	runs.AddRange(1<<32, 1<<32+5)
	b, _ = deletionvector.Encode(runs)
	f.Add(b)
	f.Fuzz(func(t *testing.T, b []byte) {
		bm, err := deletionvector.Decode(b)
		if err != nil {
			if !errors.Is(err, deletionvector.ErrCorrupt) {
				t.Fatalf("error does not wrap ErrCorrupt: %v", err)
			}
			return
		}
		// What decodes re-encodes to a vector with the same rows.
		again, err := deletionvector.Encode(bm)
		if err != nil {
			t.Fatal(err)
		}
		bm2, err := deletionvector.Decode(again)
		if err != nil {
			t.Fatal(err)
		}
		if !bm.Equals(bm2) {
			t.Fatal("re-encoded vector differs")
		}
	})
}
