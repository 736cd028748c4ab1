// Package contention benchmarks concurrent commits to one table:
// BenchmarkContendedCommits has 8 writers append one-file commits at once,
// to disjoint partitions or all to the same one, as blind appends or after
// reading their partition, on local disk and on S3 (MinIO, when
// AWS_ENDPOINT_URL is set). It reports the share of commits that land,
// commits per second and the versions a commit lost before it landed:
//
//	go test -run '^$' -bench ContendedCommits -benchtime=400x ./bench/contention
//
// Blind appends never conflict, so their success rate must be 100%; a
// commit that read its partition conflicts only with non-blind appends
// into that partition (ConcurrentAppend).
package contention
