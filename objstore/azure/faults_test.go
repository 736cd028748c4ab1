package azure

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/objstore/cloudtest"
)

// TestFaults streams a blob of many blocks into Azurite and reads it back,
// through a proxy that injects 503s, resets, stalls and lost responses into
// a fifth of the requests: the client's retry policy, the stall watchdog
// and the store's re-issued reads must deliver exactly the bytes.
func TestFaults(t *testing.T) {
	name := newContainer(t)
	upstream := connectionEndpoint(t)
	f := &cloudtest.Faults{Seed: cloudtest.Seed(t), Rate: 0.2, Stall: 3 * time.Second, Kinds: []cloudtest.Fault{
		cloudtest.SlowDown, cloudtest.ResetMidBody, cloudtest.StallBeforeHeaders,
		cloudtest.ResetRequest, cloudtest.StallMidBody, cloudtest.LostResponse,
	}}
	proxy := cloudtest.NewProxy(t, upstream, func(w http.ResponseWriter, r *http.Request, forward cloudtest.Forward) {
		f.Intercept(w, r, forward)
	})
	t.Setenv("AZURE_STORAGE_CONNECTION_STRING", fmt.Sprintf(
		"DefaultEndpointsProtocol=http;AccountName=%s;AccountKey=%s;BlobEndpoint=%s/%s;",
		emulatorAccount, emulatorKey, proxy.URL, emulatorAccount))
	s, err := New(t.Context(), name, cloudtest.Name("faults-"), WithBlockSize(1<<20),
		WithRetryPolicy(objstore.RetryPolicy{Attempts: 10, BaseDelay: 5 * time.Millisecond, MaxDelay: 100 * time.Millisecond, StallTimeout: time.Second}))
	if err != nil {
		t.Fatal(err)
	}
	cloudtest.CheckFaults(t, s, 6<<20+12345, f)
}
