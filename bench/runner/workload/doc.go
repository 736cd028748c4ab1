// Package workload defines the inputs lakelog's benchmarks run on, so that
// the Go benchmarks in bench/ and the side-by-side runner in bench/runner
// (and, through the formulas below, its Python peer script) measure exactly
// the same data.
//
// # Rows
//
// The data-path table has four columns and is partitioned by p:
//
//	id long not null, p string, v double, s string
//
// Row i (0-based) of n holds, for every engine:
//
//	id = i
//	p  = "p" + decimal(i mod 10)                              10 partitions
//	v  = ((i * 2654435761) mod 2^32) / 2^32                   spread over [0, 1)
//	s  = "s" + 6-digit zero-padded decimal((i * 7919) mod 100000)
//
// so id is sorted within every partition, which lets min/max statistics
// skip files for a range predicate on id. Batches hold BatchSize rows (the
// last one fewer) and are generated lazily, one at a time: generating the
// input costs time but never holds the whole table in memory.
//
// # Synthetic logs
//
// SynthesizeLog writes a table's _delta_log directly (commit JSON files with
// add actions for data files that do not exist), for benchmarks of log
// replay, checkpoints and file listing at sizes that writing real data would
// make slow. The result is a valid Delta log that any engine can open.
//
// Nothing here measures anything; the functions are deterministic and safe
// for concurrent use.
package workload
