// Command runner measures lakelog and delta-rs side by side, in one run,
// on the same inputs, and prints a markdown table (also written to
// bench/results/<date>.md):
//
//	source .ci/peers.sh && peers_install && peers_env     # delta-rs, once
//	source .ci/services.sh && services_start              # MinIO, for commit-s3 and checkpoint-s3
//	go run ./bench/runner [-scale small|full] [-only datapath,checkpoint,commit,commit-s3,checkpoint-s3]
//
// Every measured operation runs in a child process of its own, for both
// engines: lakelog in this binary re-run with -child, delta-rs in
// bench/peers/deltars.py under $LAKELOG_PYTHON. The child times the
// operation itself (startup, imports and setup excluded) and the runner
// reads the child's peak resident memory from the kernel when it exits.
// bench/README.md says what each number includes.
package main
