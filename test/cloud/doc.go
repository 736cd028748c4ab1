// Package cloud tests the full commit path on the cloud emulators that
// .ci/run starts (MinIO, fake-gcs-server, Azurite): many OS processes
// appending to one table on each store, without a lock service.
package cloud
