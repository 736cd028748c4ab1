package deletionvector

import (
	"errors"
	"fmt"
)

// Z85 (ZeroMQ RFC 32) is the base-85 variant Delta uses for inline vectors
// and for the uuid of a file-based one. Four bytes, read as a big-endian
// number, become five characters. Delta pads data whose length is not a
// multiple of four with zero bytes and records the real length beside it
// (sizeInBytes), so the decoder returns the padded bytes and the caller
// cuts them.

const z85Alphabet = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#"

var z85Decode = func() (t [256]byte) {
	for i := range t {
		t[i] = 0xff
	}
	for i := 0; i < len(z85Alphabet); i++ {
		t[z85Alphabet[i]] = byte(i)
	}
	return t
}()

// z85Encode encodes b, padded with zero bytes to a multiple of four.
func z85Encode(b []byte) string {
	n := (len(b) + 3) / 4
	out := make([]byte, 0, n*5)
	for i := range n {
		var word [4]byte
		copy(word[:], b[i*4:])
		v := uint32(word[0])<<24 | uint32(word[1])<<16 | uint32(word[2])<<8 | uint32(word[3])
		var chunk [5]byte
		for j := 4; j >= 0; j-- {
			chunk[j] = z85Alphabet[v%85]
			v /= 85
		}
		out = append(out, chunk[:]...)
	}
	return string(out)
}

var errZ85Length = errors.New("Z85 text length is not a multiple of 5")

// z85DecodeString decodes s, whose length must be a multiple of five.
//
// Two deviations from the strict Z85 of RFC 32, both for logs other
// writers produced. A group whose value exceeds 32 bits keeps its low 32
// bits, as Delta's own decoder does. A last group that starts with p '#'
// characters (never valid Z85: '#' is 84, and 84·85⁴ exceeds 32 bits) is
// the padded tail of the Rust z85 crate, which delta-kernel-rs's tests
// wrote into real logs: its other 5-p characters encode the last 4-p bytes.
func z85DecodeString(s string) ([]byte, error) {
	if len(s)%5 != 0 {
		return nil, fmt.Errorf("%w (%d characters)", errZ85Length, len(s))
	}
	out := make([]byte, 0, len(s)/5*4)
	for i := 0; i < len(s); i += 5 {
		group := s[i : i+5]
		pad := 0
		for pad < 4 && group[pad] == '#' {
			pad++
		}
		if pad > 0 && i+5 != len(s) {
			return nil, fmt.Errorf("padded Z85 group at %d is not the last", i)
		}
		var v uint64
		for j := pad; j < 5; j++ {
			d := z85Decode[group[j]]
			if d == 0xff {
				return nil, fmt.Errorf("character %q at %d is not Z85", group[j], i+j)
			}
			v = v*85 + uint64(d)
		}
		if pad > 0 {
			if v>>(8*(4-pad)) != 0 {
				return nil, fmt.Errorf("padded Z85 group at %d exceeds its %d bytes", i, 4-pad)
			}
			for k := 4 - pad - 1; k >= 0; k-- {
				out = append(out, byte(v>>(8*k)))
			}
			continue
		}
		out = append(out, byte(v>>24), byte(v>>16), byte(v>>8), byte(v))
	}
	return out, nil
}
