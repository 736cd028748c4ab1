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
	"time"
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

// Known is From for a differential test against a peer over an input
// space so wide that fresh seeds keep finding new disagreements (each a
// bug to fix, by replaying its seed, but not one a CI run should stumble
// on by chance and fail an unrelated change for): under CI=true it runs
// one of known, seeds that passed when they were listed (the day of the
// year picks which, so every one is run over time), and elsewhere a
// fresh seed, which is how new disagreements are found. env still
// replays any seed.
func Known(t testing.TB, env string, known ...uint64) uint64 {
	t.Helper()
	if os.Getenv(env) != "" || os.Getenv("CI") != "true" || len(known) == 0 {
		return From(t, env)
	}
	seed := known[time.Now().YearDay()%len(known)]
	t.Logf("seed %d, one of %d known to pass (%s replays it; runs outside CI draw fresh seeds)", seed, len(known), env)
	return seed
}
