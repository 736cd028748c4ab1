// Package testseed gives randomized tests a seed that a failing run can
// replay: the one in a named environment variable when it is set, else a
// fresh one, logged either way. It imports no lakelog package, so any
// package's own tests can use it.
package testseed

import (
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
)

// From returns the seed in the environment variable env when it is set
// (a value that is not an unsigned integer fails the test), else a fresh
// one, and logs it with the variable that replays it.
func From(t testing.TB, env string) uint64 {
	t.Helper()
	seed := rand.Uint64()
	if s := os.Getenv(env); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("%s=%q: %v", env, s, err)
		}
		seed = v
	}
	t.Logf("seed %d (%s replays it)", seed, env)
	return seed
}
