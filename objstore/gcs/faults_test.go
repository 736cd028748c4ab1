package gcs

import (
	"net/http"
	"testing"
	"time"

	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/objstore/cloudtest"
)

// TestFaults uploads an object in several resumable chunks to
// fake-gcs-server and reads it back, through a proxy that injects 503s,
// resets and stalls into a fifth of the requests: the client's retries
// (chunks re-sent alone), the read guard and the store's re-issued reads
// must deliver exactly the bytes.
func TestFaults(t *testing.T) {
	bucket := newBucket(t)
	upstream := cloudtest.Require(t, "STORAGE_EMULATOR_HOST", "fake-gcs-server")
	f := &cloudtest.Faults{Seed: cloudtest.Seed(t), Rate: 0.2, Stall: 3 * time.Second, Kinds: []cloudtest.Fault{
		cloudtest.SlowDown, cloudtest.ResetMidBody, cloudtest.StallBeforeHeaders, cloudtest.ResetRequest, cloudtest.StallMidBody,
	}}
	proxy := cloudtest.NewProxy(t, "http://"+upstream, func(w http.ResponseWriter, r *http.Request, forward cloudtest.Forward) {
		r.Host = upstream // fake-gcs-server takes another host for a bucket name
		f.Intercept(w, r, forward)
	})
	t.Setenv("STORAGE_EMULATOR_HOST", proxy.Host)
	s := newStore(t, bucket, cloudtest.Name("faults-"),
		WithRetryPolicy(objstore.RetryPolicy{Attempts: 10, BaseDelay: 5 * time.Millisecond, MaxDelay: 100 * time.Millisecond, StallTimeout: time.Second}))
	cloudtest.CheckFaults(t, s, 20<<20+12345, f)
}
