package expr

import (
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/binary"
	"encoding/hex"
	"hash/crc32"
	"math"
	"math/big"
	mbits "math/bits"

	"github.com/cespare/xxhash/v2"

	"github.com/lakelog/lakelog/actions"
)

// Hash functions. hash() is Spark's Murmur3 x86_32 with seed 42 and
// xxhash64() XXH64 with seed 42, each value fed as Spark feeds it (ints
// and dates as 4 bytes, longs and timestamps as 8, floats by their bits
// with -0 as 0, decimals of up to 18 digits by their unscaled long,
// others by the unscaled value's two's-complement bytes, strings and
// binaries by their bytes, arrays, maps and structs element by element,
// NULLs skipped): the values equal Spark's, so partitioning and
// bucketing by them agree.

func init() {
	register(
		&function{names: []string{"md5"}, minArgs: 1, maxArgs: 1, generated: true,
			bind: sig(actions.TypeString, kBinary),
			eval: func(x *callCtx, a []any) (any, error) {
				s := md5.Sum(a[0].([]byte))
				return hex.EncodeToString(s[:]), nil
			}},
		&function{names: []string{"sha1", "sha"}, minArgs: 1, maxArgs: 1, generated: true,
			bind: sig(actions.TypeString, kBinary),
			eval: func(x *callCtx, a []any) (any, error) {
				s := sha1.Sum(a[0].([]byte))
				return hex.EncodeToString(s[:]), nil
			}},
		&function{names: []string{"sha2"}, minArgs: 2, maxArgs: 2, generated: true,
			bind: sig(actions.TypeString, kBinary, kInt),
			eval: func(x *callCtx, a []any) (any, error) {
				b := a[0].([]byte)
				switch a[1].(int32) {
				case 0, 256:
					s := sha256.Sum256(b)
					return hex.EncodeToString(s[:]), nil
				case 224:
					s := sha256.Sum224(b)
					return hex.EncodeToString(s[:]), nil
				case 384:
					s := sha512.Sum384(b)
					return hex.EncodeToString(s[:]), nil
				case 512:
					s := sha512.Sum512(b)
					return hex.EncodeToString(s[:]), nil
				}
				return nil, nil
			}},
		&function{names: []string{"crc32"}, minArgs: 1, maxArgs: 1, generated: true,
			bind: sig(actions.TypeLong, kBinary),
			eval: func(x *callCtx, a []any) (any, error) { return int64(crc32.ChecksumIEEE(a[0].([]byte))), nil }},
		&function{names: []string{"hash"}, minArgs: 1, maxArgs: -1, generated: true, nullSafe: true,
			bind: hashArgs(actions.TypeInteger),
			eval: func(x *callCtx, a []any) (any, error) {
				h := uint32(42)
				for i, v := range a {
					h = murmurValue(v, x.argType(i), h)
				}
				return int32(h), nil
			}},
		&function{names: []string{"xxhash64"}, minArgs: 1, maxArgs: -1, generated: true, nullSafe: true,
			bind: hashArgs(actions.TypeLong),
			eval: func(x *callCtx, a []any) (any, error) {
				h := uint64(42)
				for i, v := range a {
					h = xxValue(v, x.argType(i), h)
				}
				return int64(h), nil
			}},
	)
}

func hashArgs(ret actions.DataType) func(*binder, *Call) ([]Expr, actions.DataType, error) {
	return func(b *binder, c *Call) ([]Expr, actions.DataType, error) {
		for i, a := range c.Args {
			if isInterval(a.Type()) {
				return nil, nil, typeErr(c, "argument %d of %s cannot be an interval", i+1, c.Name)
			}
			if holdsMap(a.Type()) {
				// Spark refuses it: equal maps may hash differently.
				return nil, nil, typeErr(c, "argument %d of %s cannot hold a map (equal maps may have different hashes)", i+1, c.Name)
			}
		}
		return c.Args, ret, nil
	}
}

// hashFeed is how Spark feeds one value to a hash: as an int, a long or
// bytes.
func hashFeed(v any, t actions.DataType, onInt func(int32), onLong func(int64), onBytes func([]byte), nested func(v any, t actions.DataType)) {
	switch x := v.(type) {
	case bool:
		if x {
			onInt(1)
		} else {
			onInt(0)
		}
	case int8:
		onInt(int32(x))
	case int16:
		onInt(int32(x))
	case int32:
		onInt(x)
	case actions.Date:
		onInt(int32(x))
	case int64:
		onLong(x)
	case actions.Timestamp:
		onLong(int64(x))
	case actions.TimestampNTZ:
		onLong(int64(x))
	case float32:
		if x == 0 {
			x = 0
		}
		if math.IsNaN(float64(x)) {
			onInt(0x7fc00000)
		} else {
			onInt(int32(math.Float32bits(x)))
		}
	case float64:
		if x == 0 {
			x = 0
		}
		if math.IsNaN(x) {
			onLong(0x7ff8000000000000)
		} else {
			onLong(int64(math.Float64bits(x)))
		}
	case actions.Decimal:
		if dt, ok := t.(*actions.DecimalType); ok && dt.Precision <= 18 {
			u := x.Unscaled
			if dt.Scale != x.Scale {
				r, _ := x.Rescale(dt.Scale)
				u = r.Unscaled
			}
			onLong(u.Int64())
			return
		}
		onBytes(twosComplement(x.Unscaled))
	case string:
		onBytes([]byte(x))
	case []byte:
		onBytes(x)
	case []any:
		var et actions.DataType
		if at, ok := t.(*actions.ArrayType); ok {
			et = at.ElementType
		}
		for _, e := range x {
			nested(e, et)
		}
	case *MapValue:
		var kt, vt actions.DataType
		if mt, ok := t.(*actions.MapType); ok {
			kt, vt = mt.KeyType, mt.ValueType
		}
		for i := range x.Keys {
			nested(x.Keys[i], kt)
			nested(x.Values[i], vt)
		}
	case StructValue:
		st, _ := t.(*actions.StructType)
		for i, e := range x {
			var ft actions.DataType
			if st != nil && i < len(st.Fields) {
				ft = st.Fields[i].Type
			}
			nested(e, ft)
		}
	}
}

// twosComplement is Java's BigInteger.toByteArray: the minimal
// big-endian two's-complement bytes.
func twosComplement(v *big.Int) []byte {
	if v.Sign() >= 0 {
		b := v.Bytes()
		if len(b) == 0 || b[0]&0x80 != 0 {
			b = append([]byte{0}, b...)
		}
		return b
	}
	// -v - 1, inverted.
	m := new(big.Int).Neg(v)
	m.Sub(m, big.NewInt(1))
	b := m.Bytes()
	for i := range b {
		b[i] = ^b[i]
	}
	if len(b) == 0 || b[0]&0x80 == 0 {
		b = append([]byte{0xFF}, b...)
	}
	return b
}

func murmurValue(v any, t actions.DataType, seed uint32) uint32 {
	if v == nil {
		return seed
	}
	h := seed
	hashFeed(v, t,
		func(i int32) { h = murmurInt(uint32(i), h) },
		func(l int64) { h = murmurLong(uint64(l), h) },
		func(b []byte) { h = murmurBytes(b, h) },
		func(e any, et actions.DataType) { h = murmurValue(e, et, h) })
	return h
}

func mixK1(k uint32) uint32 {
	k *= 0xcc9e2d51
	k = mbits.RotateLeft32(k, 15)
	return k * 0x1b873593
}

func mixH1(h, k uint32) uint32 {
	h ^= k
	h = mbits.RotateLeft32(h, 13)
	return h*5 + 0xe6546b64
}

func fmix32(h uint32, n uint32) uint32 {
	h ^= n
	h ^= h >> 16
	h *= 0x85ebca6b
	h ^= h >> 13
	h *= 0xc2b2ae35
	h ^= h >> 16
	return h
}

func murmurInt(v, seed uint32) uint32 { return fmix32(mixH1(seed, mixK1(v)), 4) }

func murmurLong(v uint64, seed uint32) uint32 {
	h := mixH1(seed, mixK1(uint32(v)))
	h = mixH1(h, mixK1(uint32(v>>32)))
	return fmix32(h, 8)
}

// murmurBytes is Spark's hashUnsafeBytes: whole little-endian words,
// then each remaining byte (sign-extended) as a word of its own.
func murmurBytes(b []byte, seed uint32) uint32 {
	h := seed
	aligned := len(b) - len(b)%4
	for i := 0; i < aligned; i += 4 {
		h = mixH1(h, mixK1(binary.LittleEndian.Uint32(b[i:])))
	}
	for i := aligned; i < len(b); i++ {
		h = mixH1(h, mixK1(uint32(int32(int8(b[i])))))
	}
	return fmix32(h, uint32(len(b)))
}

func xxValue(v any, t actions.DataType, seed uint64) uint64 {
	if v == nil {
		return seed
	}
	h := seed
	var buf [8]byte
	hashFeed(v, t,
		func(i int32) {
			binary.LittleEndian.PutUint32(buf[:4], uint32(i))
			h = xxSum(buf[:4], h)
		},
		func(l int64) {
			binary.LittleEndian.PutUint64(buf[:], uint64(l))
			h = xxSum(buf[:], h)
		},
		func(b []byte) { h = xxSum(b, h) },
		func(e any, et actions.DataType) { h = xxValue(e, et, h) })
	return h
}

func xxSum(b []byte, seed uint64) uint64 {
	d := xxhash.NewWithSeed(seed)
	_, _ = d.Write(b)
	return d.Sum64()
}

func holdsMap(t actions.DataType) bool {
	switch x := t.(type) {
	case *actions.MapType:
		return true
	case *actions.ArrayType:
		return holdsMap(x.ElementType)
	case *actions.StructType:
		for _, f := range x.Fields {
			if holdsMap(f.Type) {
				return true
			}
		}
	}
	return false
}
