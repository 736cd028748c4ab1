//go:build race

package checkpoint

// raceEnabled shrinks the large tests under the race detector, which
// slows decoding tenfold.
const raceEnabled = true
