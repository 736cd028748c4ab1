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
package cloud
