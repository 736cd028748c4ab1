//go:build race

package reader_test

// raceEnabled is whether the tests run under the race detector, which
// slows them several times: randomized tests run fewer cases then.
const raceEnabled = true
