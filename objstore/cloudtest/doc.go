// Package cloudtest is what tests against the cloud emulators share: the
// check that an emulator is configured ([Require]), fresh bucket names, and
// an HTTP proxy that loses responses on purpose. Any test that needs MinIO,
// fake-gcs-server or Azurite starts with Require, so that a missing server
// fails under CI, is skipped with LAKELOG_SKIP_CLOUD=1, and otherwise tells
// the developer how to start it:
//
//	func TestOnMinIO(t *testing.T) {
//		cloudtest.Require(t, "AWS_ENDPOINT_URL", "MinIO")
//		...
//	}
//
// The emulators and the variables they need come from .ci/services.sh.
package cloudtest
