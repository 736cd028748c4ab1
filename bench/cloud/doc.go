// Package cloud benchmarks the create-if-absent PUT that every lakelog
// commit on a cloud store is built on, against the local emulators that
// .ci/services.sh starts (MinIO, fake-gcs-server, Azurite):
//
//	source .ci/services.sh; services_start
//	go test -run '^$' -bench . -benchtime 2s ./bench/cloud/
//
// Each benchmark creates ~2 KB objects under fresh keys, as a commit does,
// so that a lakelog commit on the same server can be compared with the raw
// request it cannot beat. A benchmark whose server is not configured is
// skipped. Numbers are reported, never asserted.
//
// BenchmarkAppendS3 and BenchmarkStreamS3 measure the data path's writes
// on MinIO: a writer.Append of -append.mb MB (256 by default; 1024 for a
// 1 GB table) in files of 128 MB, and the bare streaming upload of that
// many bytes, each with 1 and with 4 multipart parts of 8 MB in flight:
//
//	go test -run '^$' -bench 'AppendS3|StreamS3' -benchtime 1x -append.mb 1024 ./bench/cloud/
package cloud
