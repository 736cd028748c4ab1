// Package bench holds lakelog's benchmarks: Go benchmarks (run with
// `go test -run '^$' -bench . ./bench/...`, compared with benchstat) and, in
// runner/, a runner that measures the peers (delta-rs) in the same run and
// prints a side-by-side table. Nothing here asserts a speed: numbers are
// reported, never tested.
//
// The Go benchmarks and the runner share their inputs (runner/workload):
// the data-path rows (id, p, v, s; partitioned by p) and synthetic Delta
// logs for checkpoint benchmarks. README.md says how to run both and what
// each number includes.
package bench
