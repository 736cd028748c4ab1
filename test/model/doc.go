// Package model holds lakelog's randomized model test of concurrent
// writers (the package has no API; everything is in its tests).
//
// TestConcurrentWriters runs goroutine writers and OS-process writers (the
// test binary re-executed) against one partitioned table on local disk.
// Each writer does seeded random appends (some idempotent, with an app
// transaction), overwrites, replaceWhere, DELETE, UPDATE, MERGE and
// OPTIMIZE on random partitions, with injected faults: failed creates of
// the commit file, lost responses, crashes before the commit (a real
// os.Exit in the processes) and, in the processes, crashes after the
// commit but before the writer learned of it. Every operation is
// journalled with what it read, what it wrote and how it ended.
//
// The check then replays the log version by version against an in-memory
// model: every version belongs to exactly one operation that reports it
// (or may not know it); its removes and adds are what the operation, run
// on the model's state at its read version, should write; the winners it
// rebased over are ones the conflict rules of package conflict let it
// rebase over; and every abort is a *conflict.Error of the kind the model
// derives from the same rules at the winning version. Snapshots at
// sampled versions and the final table are scanned and compared with the
// model row by row: no row is lost or duplicated.
//
// The seed is printed at the start and in every failure. Replay one with
//
//	go test ./test/model -run TestConcurrentWriters -seed N
//
// or LAKELOG_MODEL_SEED=N. A seed fixes what every writer does (its
// operations, their arguments and faults), not how the scheduler
// interleaves the writers, so a replay explores the same operations in a
// possibly different race.
package model
