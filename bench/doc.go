// Package bench holds lakelog's benchmarks: Go benchmarks (run with
// `go test -run '^$' -bench . ./bench/...`, compared with benchstat) and, in
// cmd/, a runner that measures the peers (delta-rs) in the same run and
// prints a side-by-side table. Nothing here asserts a speed: numbers are
// reported, never tested.
package bench
