package checkpoint

import (
	"github.com/lakelog/lakelog/test/testseed"
	"math"
	"math/rand/v2"
	"strconv"
	"testing"
)

// The fast number parsers of the stats reader give what strconv gives,
// bit for bit, or decline: random numbers of every shape.
func TestFastNumbersMatchStrconv(t *testing.T) {
	seed := testseed.From(t, "STATSPARSE_SEED")
	r := rand.New(rand.NewPCG(seed, 7))
	digits := func(n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte('0' + r.IntN(10))
		}
		if n > 1 && b[0] == '0' && r.IntN(2) == 0 {
			b[0] = '1'
		}
		return string(b)
	}
	declined := 0
	for range 200_000 {
		var s string
		switch r.IntN(4) {
		case 0:
			s = digits(1 + r.IntN(20))
		case 1:
			s = digits(1+r.IntN(10)) + "." + digits(1+r.IntN(12))
		case 2:
			s = digits(1+r.IntN(17)) + []string{"e", "E", "e+", "e-", "E-"}[r.IntN(5)] + strconv.Itoa(r.IntN(40))
		default:
			s = "0." + digits(1+r.IntN(25))
		}
		if r.IntN(3) == 0 {
			s = "-" + s
		}
		want, werr := strconv.ParseFloat(s, 64)
		if got, ok := fastFloat64([]byte(s)); ok {
			if werr != nil || math.Float64bits(got) != math.Float64bits(want) {
				t.Fatalf("fastFloat64(%q) = %v (%x), strconv %v (%x), %v", s, got, math.Float64bits(got), want, math.Float64bits(want), werr)
			}
		} else {
			declined++
		}
		wi, ierr := strconv.ParseInt(s, 10, 64)
		if gi, ok := parseInt64([]byte(s)); ok != (ierr == nil) || ok && gi != wi {
			t.Fatalf("parseInt64(%q) = %d, %v; strconv %d, %v", s, gi, ok, wi, ierr)
		}
	}
	if declined > 150_000 {
		t.Fatalf("the fast path declined %d of 200000 numbers", declined)
	}
	for _, s := range []string{"0", "-0", "0.0", "-0.0", "1e0", "0.0001", "0.9999", "1e22", "1e23", "123456789012345", "1234567890123456", "9223372036854775807", "-9223372036854775808", "9223372036854775808"} {
		want, werr := strconv.ParseFloat(s, 64)
		if got, ok := fastFloat64([]byte(s)); ok && (werr != nil || math.Float64bits(got) != math.Float64bits(want)) {
			t.Errorf("fastFloat64(%q) = %v, strconv %v", s, got, want)
		}
		wi, ierr := strconv.ParseInt(s, 10, 64)
		if gi, ok := parseInt64([]byte(s)); ok != (ierr == nil) || ok && gi != wi {
			t.Errorf("parseInt64(%q) = %d, %v; strconv %d, %v", s, gi, ok, wi, ierr)
		}
	}

}
