// Package interop tests lakelog against real peer engines: delta-rs (the
// PyPI deltalake package, read through both its PyArrow dataset and its
// DataFusion QueryBuilder) and Spark with Delta (PyPI pyspark and
// delta-spark, on Java 17). Each test writes a table with one engine, reads
// it with another, and compares the rows in the canonical row encoding of
// the conformance corpus (reader.CanonicalRows), so a mismatch shows the
// differing lines.
//
// What is covered:
//
//   - lakelog writes, peers read: every primitive type (decimals of several
//     precisions, dates, timestamps with and without zone, binary, NaN and
//     infinities, unicode strings), nested structs, arrays and maps, nulls
//     at every level, and partition values that are null or hold
//     characters that need escaping in paths;
//   - delta-rs writes (create, append, overwrite, partitioned), lakelog
//     reads, at every version;
//   - peers open tables lakelog checkpointed with Snapshot.Checkpoint after
//     the commits before the checkpoint were deleted, so they must use it,
//     with and without statistics as structs; Spark time travels over a
//     lakelog table;
//   - Spark writes (partitioned appends, a DELETE without deletion vectors,
//     checkpoints every two commits), lakelog reads every version;
//   - on MinIO (s3://), each of lakelog and delta-rs reads what the other
//     wrote;
//   - lakelog writes deletion vectors (inline and in a .bin file) with a
//     DELETE-shaped commit; delta-rs's DataFusion reader and Spark read
//     the same rows (delta-rs's PyArrow reader refuses such tables); Spark
//     DELETEs and UPDATEs with deletion vectors on, and lakelog reads and
//     counts every version as Spark does.
//
// # Running
//
// The peers live in a Python virtual environment made by .ci/peers.sh:
//
//	source .ci/peers.sh; peers_install; peers_env
//	go test ./test/interop/
//
// peers_env exports LAKELOG_PYTHON (the venv's python) and LAKELOG_IVY_DIR
// (where Spark caches the Delta jars it fetches from Maven Central). A test
// whose peer is missing fails under CI (CI=true), is skipped with
// LAKELOG_SKIP_PEERS=1, and otherwise fails with these instructions. The
// MinIO tests need the emulator of .ci/services.sh (cloudtest.Require).
//
// Each engine runs in one long-lived worker process (peer.py) for the whole
// package, driven with JSON lines over stdin and stdout: Spark's JVM starts
// once, on first use, and TestMain stops the workers.
package interop
